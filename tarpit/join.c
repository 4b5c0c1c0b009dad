// SPDX-License-Identifier: GPL-2.0-or-later
/* The hand-off's end in the tarpit: a session that passed is given a
 * connection to the MTA (greygated opened it and told the MTA who the
 * client is). Here the client's own words are replayed on it, one
 * command at a time and no pipelining toward the MTA: its EHLO (or HELO),
 * its MAIL and the RCPT that passed (or STARTTLS), each written anew from
 * the tarpit's parse of the client's line (smtp_command_rebuild), never
 * the client's bytes. The MTA's
 * answer to that last command is the client's answer; from then on the
 * two connections are joined both ways, with a bounded buffer each way
 * (a side that does not read stops the other from being read), until
 * both are done. The client's replies to what came before (the tarpit's
 * 250s) stand: the MTA's are read and dropped. Anything that fails before
 * the join: the client hears the plain deferral and the connection ends;
 * it comes back, on the fast path now. Nothing is lost, nothing is sent
 * twice. What goes on once joined (more recipients, more messages) is
 * read as it passes by the sensor's own conversation parser, and each
 * later RCPT with the MTA's answer told as the sensor tells one of the
 * fast path (tarpit_set_joined_events): greygated decides and counts it
 * as any passed client's. A session handed for a client not passed (an
 * exempt recipient's) is not joined after the replay but gated
 * (gate.c). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "internal.h"
#include "log.h"
#include "sensor.h"
#include "smtp_reply.h"

/* A reply of the MTA's that greygate reads (EHLO's is the longest). */
#define JOIN_REPLY_MAX 4096
/* The join's buffer each way. */
#define JOIN_BUF 65536

enum join_step {
	J_GREETING, /* the MTA's 220 */
	J_HELO,     /* the client's EHLO or HELO */
	J_MAIL,     /* its MAIL line */
	J_LAST,     /* the RCPT that passed, or STARTTLS: relayed */
	J_JOINED,
};

/* One way of the join: bytes read from one side, not yet written to the
 * other. */
struct pipe_buf {
	char *data;
	size_t len, off;
	bool eof;  /* its source said no more (or broke) */
	bool shut; /* ... and that was passed on */
	bool dead; /* its destination broke: what comes is dropped */
};

struct join {
	struct conn *c;
	int fd;                 /* to the MTA */
	enum join_step step;
	bool starttls; /* the asked command was STARTTLS */
	bool gated;    /* the client has not passed: gate.c, once replayed */
	bool failed;   /* counted as a failed replay (join_fail) */
	bool mta_chunking; /* its EHLO offered CHUNKING (for the gate) */
	int last_code;     /* its answer to the replay's last command */
	char reply[JOIN_REPLY_MAX];
	size_t reply_len;
	struct pipe_buf up;   /* client -> MTA */
	struct pipe_buf down; /* MTA -> client */
	bool client_hup, mta_hup; /* hung up (or reset): see hung_up() */
	/* the joined conversation, read as it passes (NULL: not read) */
	struct smtp_conv *watch;
	struct sensor_counters watch_oddities; /* (the parser's; unused) */
	uint8_t local[16];    /* this side of the MTA connection */
	uint16_t local_port;
	uint8_t local_family;
};

static void join_fail(struct conn *c, const char *why);

/* Joined: its idle time only, no tarpit deadline. */
static void
arm_idle(struct conn *c)
{
	loop_timer_arm(c->tp->loop, &c->timer, c->idle_due_ms);
}

/* The client's address, for the log (a static buffer). */
static const char *
client_text(const struct conn *c)
{
	static char text[INET6_ADDRSTRLEN];

	return inet_ntop(c->family, c->addr, text, sizeof(text)) ? text : "?";
}
static void pump(struct conn *c);
static const struct conn_phase join_phase;

/* The command the replay is at, sent whole (it is short, and the MTA has
 * just answered the one before). */
static bool
send_line(struct join *j, const char *line)
{
	char buf[TARPIT_LINE_MAX + 3];
	int n = snprintf(buf, sizeof(buf), "%s\r\n", line);

	return n > 0 && (size_t)n < sizeof(buf) &&
	       send(j->fd, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) == n;
}

/* The next command of the replay, after a reply that says go on. */
static bool
next_command(struct join *j)
{
	struct conn *c = j->c;

	switch (j->step) {
	case J_GREETING:
		j->step = J_HELO;
		return c->helo_line && send_line(j, c->helo_line);
	case J_HELO:
		if (j->starttls) {
			j->step = J_LAST;
			return send_line(j, "STARTTLS");
		}
		j->step = J_MAIL;
		return c->mail && send_line(j, c->mail);
	case J_MAIL:
		j->step = J_LAST;
		return c->rcpt_line && send_line(j, c->rcpt_line);
	default:
		return false;
	}
}

/* A RCPT the parser read in the joined conversation, with the MTA's
 * answer: told as the sensor tells one of the fast path. */
static void
on_watched(enum sensor_event_type type, int reply, const char *helo,
           const char *from, const char *to, void *ctx)
{
	struct conn *c = ctx;
	struct tarpit *tp = c->tp;
	struct sensor_event ev = {.type = type,
	                          .path = SENSOR_PATH_FAST, .reply = reply,
	                          .helo = helo ? helo : "",
	                          .from = from ? from : "",
	                          .to = to ? to : ""};

	if (type != SENSOR_EV_RCPT || !c->join || !c->join->watch)
		return; /* (the primed EHLO's is no visit: greygated knows) */
	/* The session is named, not its client: greygated knows who that
	 * is from the session's socket. */
	ev.session = c->id;
	gettimeofday(&ev.ts, NULL);
	tp->counters.joined_rcpts++;
	tp->joined_event(&ev, tp->joined_event_ctx);
}

/* What crosses the join is read by the watch, if any: the client's
 * commands, the MTA's replies. */
static void
watch_feed(struct join *j, const struct pipe_buf *b, const char *data,
           size_t len)
{
	if (!j->watch)
		return;
	if (b == &j->up)
		smtp_conv_client(j->watch, (const uint8_t *)data, len);
	else
		smtp_conv_server(j->watch, (const uint8_t *)data, len);
}

/* The watch begins where the replay ended: told the session's EHLO and
 * MAIL (the MTA's answers to them were read), so that a later RCPT of
 * the same transaction has its sender. */
static void
watch_start(struct conn *c)
{
	struct join *j = c->join;
	static const char ok[] = "250 replayed\r\n";
	char line[TARPIT_LINE_MAX + 3];

	if (!c->tp->joined_event || j->starttls || !c->helo_line || !c->mail)
		return;
	j->watch = smtp_conv_new(&j->watch_oddities, false, on_watched, c);
	if (!j->watch) {
		log_warnx("%s: no memory to read the handed session: its later "
		          "recipients are delivered, not counted",
		          client_text(c));
		return;
	}
	snprintf(line, sizeof(line), "%s\r\n", c->helo_line);
	smtp_conv_client(j->watch, (const uint8_t *)line, strlen(line));
	smtp_conv_server(j->watch, (const uint8_t *)ok, sizeof(ok) - 1);
	snprintf(line, sizeof(line), "%s\r\n", c->mail);
	smtp_conv_client(j->watch, (const uint8_t *)line, strlen(line));
	smtp_conv_server(j->watch, (const uint8_t *)ok, sizeof(ok) - 1);
}

/* Everything the client sent after the command that asked (PIPELINING:
 * more RCPTs, DATA) goes to the MTA first, in order. */
static void
start_joined(struct conn *c)
{
	struct join *j = c->join;
	struct tarpit *tp = c->tp;

	j->step = J_JOINED;
	tp->counters.handoffs_joined++;
	tp->counters.joined_open++;
	/* Not a tarpit session any more: no tarpit deadline, no stress. */
	tp->counters.open--;
	c->idle_due_ms = loop_now_ms(tp->loop) + JOIN_IDLE_MS;
	if (j->gated) {
		log_debug("%s: handed to the MTA, gated", client_text(c));
		gate_start(c, j->fd, j->down.data, j->down.len, j->mta_chunking,
			   j->last_code / 100 == 2);
		return;
	}
	watch_start(c);
	if (c->in_len)
		memcpy(j->up.data, c->in, c->in_len);
	j->up.len = c->in_len;
	watch_feed(j, &j->up, j->up.data, j->up.len);
	watch_feed(j, &j->down, j->down.data, j->down.len);
	c->in_len = 0;
	log_debug("%s: handed to the MTA", client_text(c));
	loop_mod_fd(tp->loop, c->fd, EPOLLIN);
	pump(c);
}

/* The MTA's replies during the replay. Return: true while the replay
 * goes on; false when it is over (joined: the pump may have closed c
 * already; or failed, c closed). */
static bool
on_replay_reply(struct conn *c)
{
	struct join *j = c->join;
	size_t n;
	int code;

	while (j->step != J_JOINED &&
	       (n = smtp_reply_whole(j->reply, j->reply_len, &code))) {
		char why[80];

		if (j->step == J_LAST) {
			j->last_code = code;
			/* The MTA's answer is the client's, whatever it is:
			 * a 250, a 550 for an unknown user, a 220 to TLS. */
			if (!conn_send(c, j->reply, n)) {
				conn_close(c);
				return false;
			}
			memmove(j->reply, j->reply + n, j->reply_len - n);
			j->reply_len -= n;
			/* Anything the MTA said after it is the client's
			 * too. */
			memcpy(j->down.data, j->reply, j->reply_len);
			j->down.len = j->reply_len;
			j->reply_len = 0;
			start_joined(c);
			return false;
		}
		if (code / 100 != 2) {
			snprintf(why, sizeof(why), "the MTA answered %d", code);
			join_fail(c, why);
			return false;
		}
		if (j->step == J_HELO)
			j->mta_chunking = smtp_ehlo_line(j->reply, n, "CHUNKING",
							 8, &(size_t){0}) != NULL;
		memmove(j->reply, j->reply + n, j->reply_len - n);
		j->reply_len -= n;
		if (!next_command(j)) {
			join_fail(c, "the replay could not be sent");
			return false;
		}
	}
	return true;
}

/* One way's turn: what waits written, what came read (into room), an end
 * passed on once its bytes are through. A side that breaks ends only its
 * own way's writing: what the other side said still reaches it (the MTA
 * that accepted a message and went away: its 250 reaches the client).
 * Return: whether anything moved. */
static bool
pump_way(struct join *j, struct pipe_buf *b, int from, int to)
{
	bool progress = false;
	ssize_t n;

	if (b->len > b->off) {
		n = send(to, b->data + b->off, b->len - b->off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			b->off += (size_t)n;
			progress = true;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			b->dead = true;
			progress = true;
		}
		if (b->off == b->len || b->dead)
			b->off = b->len = 0;
	}
	if (!b->eof && b->len < JOIN_BUF) {
		n = recv(from, b->data + b->len, JOIN_BUF - b->len,
			 MSG_DONTWAIT);
		if (n > 0 && !b->dead) {
			watch_feed(j, b, b->data + b->len, (size_t)n);
			b->len += (size_t)n;
		}
		if (n > 0)
			progress = true;
		else if (n == 0 || (errno != EAGAIN && errno != EINTR))
			b->eof = progress = true; /* a reset too: what came
						     before it goes on */
	}
	if (b->eof && !b->shut && b->len == b->off) {
		if (!b->dead)
			shutdown(to, SHUT_WR);
		b->shut = true;
	}
	return progress;
}

static void
watch(struct conn *c, int fd, bool hung_up, uint32_t events)
{
	if (hung_up)
		loop_del_fd(c->tp->loop, fd);
	else
		loop_mod_fd(c->tp->loop, fd, events);
}

/* Moves what each side sent to the other, as far as they take it, until
 * both are done; a client that still sends once the MTA is gone and all
 * it said was passed on is closed gently (conn_close_gently), never
 * reset before it read the MTA's last words. */
static void
pump(struct conn *c)
{
	struct join *j = c->join;
	bool progress = true;

	while (progress) {
		progress = pump_way(j, &j->up, c->fd, j->fd);
		progress |= pump_way(j, &j->down, j->fd, c->fd);
	}
	/* A side that hung up has been read to its end: nothing can be
	 * written to it any more. */
	if (j->client_hup && !j->down.dead) {
		j->down.dead = true;
		j->down.len = j->down.off = 0;
		pump_way(j, &j->down, j->fd, c->fd);
	}
	if (j->mta_hup && !j->up.dead) {
		j->up.dead = true;
		j->up.len = j->up.off = 0;
		pump_way(j, &j->up, c->fd, j->fd);
	}
	if (j->up.shut && j->down.shut) {
		conn_close(c);
		return;
	}
	if (j->up.dead && j->down.shut) {
		conn_close_gently(c);
		return;
	}
	/* Watch for what moves next: room to write where bytes wait, bytes
	 * to read where there is room. A side that hung up is not watched:
	 * the kernel reports a hang-up whatever one asks for, and would
	 * wake the loop for ever (what it left was read above). */
	watch(c, c->fd, j->client_hup,
	      (j->up.eof || j->up.len >= JOIN_BUF ? 0 : EPOLLIN) |
		      (j->down.len > j->down.off ? EPOLLOUT : 0));
	watch(c, j->fd, j->mta_hup,
	      (j->down.eof || j->down.len >= JOIN_BUF ? 0 : EPOLLIN) |
		      (j->up.len > j->up.off ? EPOLLOUT : 0));
	c->idle_due_ms = loop_now_ms(c->tp->loop) + JOIN_IDLE_MS;
	arm_idle(c);
}

static void
on_mta(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct conn *c = ctx;
	struct join *j = c->join;
	ssize_t n;

	if (j->step == J_JOINED) {
		if (events & (EPOLLERR | EPOLLHUP))
			j->mta_hup = true;
		pump(c);
		return;
	}
	n = recv(fd, j->reply + j->reply_len, sizeof(j->reply) - j->reply_len,
	         MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		join_fail(c, n == 0 ? "the MTA closed the connection"
		                    : strerror(errno));
		return;
	}
	j->reply_len += (size_t)n;
	if (on_replay_reply(c) && j->reply_len == sizeof(j->reply))
		join_fail(c, "the MTA's reply is too long");
}

/* The client, while the replay runs: what it sends waits in c->in (and
 * reading stops when that is full); a hang-up ends it all. Once joined:
 * the pump. */
static void
on_client(struct conn *c, uint32_t events)
{
	struct loop *loop = c->tp->loop;
	int fd = c->fd;
	ssize_t n;

	if (c->join->step == J_JOINED) {
		if (events & (EPOLLERR | EPOLLHUP))
			c->join->client_hup = true;
		pump(c);
		return;
	}
	if (events & (EPOLLERR | EPOLLHUP)) {
		conn_close(c);
		return;
	}
	if (c->in_len == TARPIT_LINE_MAX) {
		loop_mod_fd(loop, fd, 0);
		return;
	}
	if (!conn_room(c)) {
		conn_close(c);
		return;
	}
	n = recv(fd, c->in + c->in_len, TARPIT_LINE_MAX - c->in_len,
	         MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(c); /* gone before the join: nothing to deliver */
		return;
	}
	c->in_len = (uint16_t)(c->in_len + n);
}

static void
on_timer(struct conn *c)
{
	if (c->join->step == J_JOINED) {
		if (loop_now_ms(c->tp->loop) >= c->idle_due_ms)
			conn_close(c);
		else
			arm_idle(c);
		return;
	}
	join_fail(c, "the MTA did not answer in time");
}

/* The plain deferral for the command that asked, and a clean close; a
 * STARTTLS gets no answer (any but 220 would let the client go on in
 * the clear: see tarpit_dialogue_verdict). */
static void
join_fail(struct conn *c, const char *why)
{
	char out[TARPIT_REPLY_MAX];
	int n = 0;

	c->tp->counters.handoffs_failed++;
	c->join->failed = true;
	if (c->join->starttls)
		log_warnx("%s: hand-off at STARTTLS: %s; the session ends "
			  "unanswered and the client comes back",
			  client_text(c), why);
	else
		n = snprintf(out, sizeof(out),
		             "451 4.7.1 <%.256s>: Passed greylisting, please "
		             "try again now\r\n",
		             c->rcpt ? c->rcpt : "");
	if (n > 0) {
		log_warnx("%s: hand-off: %s; the client hears 451 and comes "
			  "back",
			  client_text(c), why);
		conn_send(c, out, (size_t)n);
	}
	conn_close_gently(c);
}

void
join_begin(struct conn *c, int fd, bool greeted, bool gated)
{
	struct tarpit *tp = c->tp;
	struct join *j = calloc(1, sizeof(*j));
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (!j) {
		struct tarpit_verdict plain = {TARPIT_PASS, 0, -1,
		                               false, 0, false};

		/* No hand-off: the plain answer of a pass. */
		close(fd);
		tp->counters.handoffs_failed++;
		tarpit_verdict(tp, c->id, c->question, &plain);
		return;
	}
	c->join = j;
	j->c = c;
	j->fd = fd;
	j->starttls = c->dlg.asking == TARPIT_ASK_STARTTLS;
	j->gated = gated && !j->starttls;
	j->step = J_GREETING;
	c->dlg.asking = TARPIT_ASK_NONE;
	j->up.data = malloc(JOIN_BUF);
	j->down.data = malloc(JOIN_BUF);
	if (!j->up.data || !j->down.data) {
		join_fail(c, "no memory");
		return;
	}
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET) {
			const struct sockaddr_in *in = (const void *)&ss;

			j->local_family = AF_INET;
			memcpy(j->local, &in->sin_addr, 4);
			j->local_port = ntohs(in->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			const struct sockaddr_in6 *in6 = (const void *)&ss;

			j->local_family = AF_INET6;
			memcpy(j->local, &in6->sin6_addr, 16);
			j->local_port = ntohs(in6->sin6_port);
		}
	}
	/* The client and the MTA are the join's now, and so is the clock. */
	conn_enter(c, &join_phase);
	loop_timer_cancel(tp->loop, &c->timer);
	if (loop_mod_fd(tp->loop, c->fd, EPOLLIN) < 0 ||
	    loop_add_fd(tp->loop, fd, EPOLLIN, on_mta, c) < 0) {
		join_fail(c, "cannot watch the connections");
		return;
	}
	loop_timer_arm(tp->loop, &c->timer,
	               loop_now_ms(tp->loop) + tp->handoff_ms);
	/* greygated read the greeting (XCLIENT's 220): the replay starts
	 * with the client's EHLO. */
	if (greeted && !next_command(j))
		join_fail(c, "the replay could not be sent");
}

static void
on_end(struct conn *c)
{
	struct join *j = c->join;
	struct tarpit *tp = c->tp;

	if (j->step == J_JOINED) {
		tp->counters.joined_open--;
		tp->counters.open++; /* conn_close takes it off again */
	} else if (!j->failed) {
		/* Every hand-off begun ends counted once: joined, failed,
		 * unjoined (tarpit_verdict), or this (the client went before
		 * the MTA's answer). */
		tp->counters.handoffs_abandoned++;
	}
	/* (its RCPTs still unanswered are told, reply 0) */
	smtp_conv_free(j->watch);
	j->watch = NULL;
	if (j->fd >= 0) {
		loop_del_fd(tp->loop, j->fd);
		close(j->fd);
	}
	/* The sensor may hear this connection's last words (and, behind,
	 * its first) after it closed: it stays greygate's own a while. */
	if (j->local_family)
		tarpit_remember_closed(tp, j->local_family, j->local,
				       j->local_port);
	free(j->up.data);
	free(j->down.data);
	free(j);
	c->join = NULL;
}

/* Its connection to the MTA is greygate's own, not the fast path. */
static bool
holds(const struct conn *c, int family, const uint8_t *addr, uint16_t port)
{
	const struct join *j = c->join;

	return j->local_family == family && j->local_port == port &&
	       memcmp(j->local, addr, family == AF_INET ? 4 : 16) == 0;
}

/* The hand-off: the replay, then the join (or the gate, gate.c). A
 * verdict is stale here: a session handed is never handed again. */
static const struct conn_phase join_phase = {
	.name = "join",
	.handed = true,
	.on_client = on_client,
	.on_timer = on_timer,
	.on_end = on_end,
	.holds = holds,
};
