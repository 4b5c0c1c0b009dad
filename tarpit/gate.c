// SPDX-License-Identifier: GPL-2.0-or-later
/* A session handed to the MTA for a client that has not passed: it named
 * an exempt recipient (postmaster@), which must be delivered on the first
 * attempt without opening the client's network to anyone else. Once the
 * replay is over (join.c), the tarpit stays between the two instead of
 * joining them: it takes the client's commands one at a time (pipelined
 * ones in order, each answered before the next is taken, so the replies
 * keep their order without a queue), and
 * - a RCPT asks greygated, as at the tarpit, and reaches the MTA only on
 *   a pass (another exempt recipient, a triplet whose retry passed, an
 *   allow-listed client); otherwise the tarpit answers it itself (the
 *   greylisting's 451, a refusal), and the triplet is kept as any;
 * - HELO, EHLO, MAIL, RSET, NOOP, QUIT and DATA are passed on, and the
 *   MTA's answer is the client's; once the MTA says 354 to DATA, the body
 *   passes through to its end-of-data line;
 * - BDAT only where the MTA offered CHUNKING and has taken a MAIL and a
 *   RCPT of this transaction, so that it takes the chunk as data (RFC
 *   3030 answers BDAT after its chunk: the line cannot wait for its own
 *   answer); the chunk passes by its count. Elsewhere the gate answers
 *   it and drops the chunk, as Postfix does;
 * - STARTTLS is answered 454 here (TLS would hide what is policed), and
 *   every other command 502 (XCLIENT, XFORWARD, AUTH, VRFY, a verb
 *   nobody knows): never passed on.
 * What the MTA reads is never the client's line but the one written from
 * the gate's own parse (smtp_command_rebuild), read as the MTA reads a
 * verb; no RCPT reaches the MTA without greygated's yes, and the end of a
 * message is found at least as early as the MTA finds it (a line of one
 * dot ended by CR or LF: see body_span), so that no command can be
 * smuggled past the gate inside a body. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gate-int.h"
#include "log.h"
#include "smtp_line.h"
#include "smtp_reply.h"

static const struct conn_phase gate_phase;
static void on_mta(struct loop *loop, int fd, uint32_t events, void *ctx);
static void verdict(struct conn *c, const struct tarpit_verdict *v);

/* How many of the n bytes at p are the body's, up to and with its end if
 * it is among them (*ended). A line of one dot ends the body whether CR,
 * LF or both end it and the line before: as early as any MTA ends it.
 * The gate may then wait for an answer that never comes (the session
 * times out, nothing is delivered), but never passes on a command the
 * MTA takes as one. */
static size_t
body_span(struct gate *g, const char *p, size_t n, bool *ended)
{
	size_t i = 0;

	*ended = false;
	while (i < n) {
		char b = p[i];
		bool eol = b == '\r' || b == '\n';

		switch (g->eod) {
		case EOD_MID: /* (most bytes: to the line's end at once) */
			while (i < n && p[i] != '\r' && p[i] != '\n')
				i++;
			if (i < n) {
				g->eod = EOD_LINE_START;
				i++;
			}
			continue;
		case EOD_LINE_START:
			g->eod = b == '.' ? EOD_DOT
			         : eol    ? EOD_LINE_START
			                  : EOD_MID;
			break;
		case EOD_DOT:
			if (b == '\n') {
				*ended = true;
				return i + 1;
			}
			g->eod = b == '\r' ? EOD_DOT_CR : EOD_MID;
			break;
		case EOD_DOT_CR:
			/* the LF after ". CR" is the body's; anything else is
			 * the next command's */
			*ended = true;
			return b == '\n' ? i + 1 : i;
		}
		i++;
	}
	return n;
}

/* The body (or a chunk) from the client straight to the MTA, as far as
 * it takes it; its end, once through, awaits the MTA's answer. Return:
 * false (c closed). */
static bool
move_body(struct conn *c, bool *progress)
{
	struct gate *g = c->gate;
	size_t avail = g->in_len - g->in_off;
	ssize_t n;

	/* (the BDAT line goes before its chunk) */
	if (g->out_off < g->out_len)
		return true;
	if (!g->ready && !g->body_ends && avail) {
		if (g->step == G_CHUNK) {
			g->ready = avail < g->chunk_left ? avail
			                                 : (size_t)g->chunk_left;
			g->chunk_left -= g->ready;
			g->body_ends = g->chunk_left == 0;
		} else {
			g->ready = body_span(g, g->in + g->in_off, avail,
			                     &g->body_ends);
		}
	}
	if (g->ready) {
		n = send(g->mta, g->in + g->in_off, g->ready,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			conn_close(c); /* the MTA is gone */
			return false;
		}
		if (n <= 0)
			return true;
		g->in_off += (size_t)n;
		g->ready -= (size_t)n;
		*progress = true;
	}
	if (!g->ready && g->body_ends) {
		g->body_ends = false;
		if (g->step == G_BODY)
			g->sent = SENT_BODY;
		g->step = G_REPLY;
		*progress = true;
	}
	return true;
}

/* A refused chunk's bytes, dropped as they come. */
static void
skip_chunk(struct gate *g, bool *progress)
{
	size_t avail = g->in_len - g->in_off,
	       n = avail < g->chunk_left ? avail : (size_t)g->chunk_left;

	g->in_off += n;
	g->chunk_left -= n;
	if (!g->chunk_left)
		g->step = G_COMMAND;
	*progress |= n > 0 || !g->chunk_left;
}

/* The client's next command line, if whole (one too long is skipped to
 * its end and answered 500). Return: false (c closed). */
static bool
take_command(struct conn *c, bool *progress)
{
	struct gate *g = c->gate;
	const char *line;
	size_t len, took;
	bool ok;

	/* (room for the line at the MTA's side: the body before it may
	 * still be on its way) */
	if (GATE_BUF - g->out_len < SMTP_LINE_MAX + 2 || g->in_off == g->in_len)
		return true;
	line = g->in + g->in_off;
	took = smtp_line_next(line, g->in_len - g->in_off, &len);
	if (!took) {
		if (g->in_len - g->in_off > SMTP_LINE_MAX + 1) {
			g->discarding = true;
			g->in_off = g->in_len = 0;
			*progress = true;
		}
		return true;
	}
	*progress = true;
	if (g->discarding || len > SMTP_LINE_MAX) {
		g->discarding = false;
		ok = gate_say(c, "500 5.5.0 Error: line too long\r\n");
	} else {
		ok = gate_command(c, line, len);
	}
	if (ok)
		g->in_off += took;
	return ok;
}

/* The MTA's whole replies: each the client's; the one awaited moves the
 * gate on. Return: false (c closed). */
static bool
take_replies(struct conn *c, bool *progress)
{
	struct gate *g = c->gate;
	size_t n;
	int code;

	while ((n = smtp_reply_whole(g->reply, g->reply_len, &code))) {
		bool awaited = g->step == G_REPLY;

		if (!conn_send(c, g->reply, n)) {
			conn_close(c);
			return false;
		}
		memmove(g->reply, g->reply + n, g->reply_len - n);
		g->reply_len -= n;
		*progress = true;
		if (awaited && !gate_answered(c, code))
			return false;
	}
	if (g->reply_len == sizeof(g->reply)) {
		log_warnx("gated hand-off: the MTA's reply is too long");
		conn_close(c);
		return false;
	}
	return true;
}

/* What moves between the two: written to the MTA, read from each side,
 * taken from the client. Return: false (c closed). */
static bool
move(struct conn *c, bool *progress)
{
	struct gate *g = c->gate;
	ssize_t n;

	if (g->out_off < g->out_len) {
		n = send(g->mta, g->out + g->out_off, g->out_len - g->out_off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			conn_close(c); /* the MTA is gone */
			return false;
		}
		if (n > 0) {
			g->out_off += (size_t)n;
			*progress = true;
		}
		if (g->out_off == g->out_len)
			g->out_off = g->out_len = 0;
	}
	n = g->reply_len < sizeof(g->reply)
		    ? recv(g->mta, g->reply + g->reply_len,
			   sizeof(g->reply) - g->reply_len, MSG_DONTWAIT)
		    : (errno = EAGAIN, -1);
	if (n > 0) {
		g->reply_len += (size_t)n;
		*progress = true;
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		/* The MTA ended: what it said before was relayed (or is,
		 * now), and the client hears nothing more. */
		if (!take_replies(c, progress))
			return false;
		conn_close_gently(c);
		return false;
	}
	if (!take_replies(c, progress))
		return false;
	if (g->step == G_COMMAND) {
		if (!take_command(c, progress))
			return false;
	} else if (g->step == G_BODY || g->step == G_CHUNK) {
		if (!move_body(c, progress))
			return false;
	} else if (g->step == G_SKIP) {
		skip_chunk(g, progress);
	}
	if (g->in_off == g->in_len) {
		g->in_off = g->in_len = 0;
	} else if (g->in_len == GATE_BUF && g->in_off) {
		memmove(g->in, g->in + g->in_off, g->in_len - g->in_off);
		g->in_len -= g->in_off;
		g->in_off = 0;
	}
	if (!g->client_eof && g->in_len < GATE_BUF) {
		n = recv(c->fd, g->in + g->in_len, GATE_BUF - g->in_len,
			 MSG_DONTWAIT);
		if (n > 0) {
			g->in_len += (size_t)n;
			*progress = true;
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			g->client_eof = *progress = true;
		}
	}
	return true;
}

/* Everything that can move now, moved; then the loop watches for what
 * moves next. */
static void
run(struct conn *c)
{
	struct gate *g = c->gate;
	struct tarpit *tp = c->tp;
	bool progress = true, moved = false;

	while (progress) {
		progress = false;
		if (!move(c, &progress))
			return;
		moved |= progress;
	}
	/* A client gone with nothing left to do: what it sent was done
	 * (a message whose end came is the MTA's); gone within a body or a
	 * chunk that cannot end now: the MTA drops the message. */
	if (g->client_eof && g->in_off == g->in_len && !g->ready &&
	    (g->step == G_BODY || g->step == G_CHUNK || g->step == G_SKIP)) {
		conn_close(c);
		return;
	}
	if (g->client_eof && g->step == G_COMMAND &&
	    !smtp_line_next(g->in + g->in_off, g->in_len - g->in_off,
			    &(size_t){0})) {
		conn_close(c);
		return;
	}
	/* A client that hung up is watched no more: a reset one would wake
	 * the loop for ever (EPOLLHUP and EPOLLERR come whatever is asked),
	 * while the MTA's answer to what it sent last is awaited. */
	if (g->client_eof && !g->client_unwatched) {
		loop_del_fd(tp->loop, c->fd);
		g->client_unwatched = true;
	} else if (!g->client_unwatched) {
		loop_mod_fd(tp->loop, c->fd,
			    g->in_len < GATE_BUF ? EPOLLIN : 0);
	}
	loop_mod_fd(tp->loop, g->mta,
		    EPOLLIN | (g->out_off < g->out_len || g->ready ? EPOLLOUT
								   : 0));
	if (moved)
		c->idle_due_ms = loop_now_ms(tp->loop) + JOIN_IDLE_MS;
	loop_timer_arm(tp->loop, &c->timer,
		       g->step == G_VERDICT ? c->verdict_due_ms
					    : c->idle_due_ms);
}

/* The MTA's connection: its answers, room to write. */
static void
on_mta(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	(void)loop;
	(void)fd;
	(void)events;
	run(ctx);
}

void
gate_start(struct conn *c, int mta_fd, const char *mta_said, size_t len,
	   bool chunking, bool rcpt_taken)
{
	struct gate *g = calloc(1, sizeof(*g));

	if (!g || len > sizeof(g->reply)) {
		free(g);
		log_warnx("gated hand-off: no memory; the session ends");
		conn_close(c);
		return;
	}
	c->gate = g;
	g->under = c->phase;
	g->mta = mta_fd;
	/* the transaction the replay began: its RCPT was the exempt one */
	g->in_mail = true;
	g->rcpt_taken = rcpt_taken;
	g->chunking = chunking;
	memcpy(g->reply, mta_said, len);
	g->reply_len = len;
	if (c->in_len) /* (c->in is NULL when nothing waits) */
		memcpy(g->in, c->in, c->in_len);
	g->in_len = c->in_len;
	c->in_len = 0;
	/* The session, its timer and the MTA's answers are the gate's. */
	conn_enter(c, &gate_phase);
	loop_del_fd(c->tp->loop, mta_fd);
	if (loop_add_fd(c->tp->loop, mta_fd, EPOLLIN, on_mta, c) < 0) {
		log_warnx("gated hand-off: cannot watch the MTA; the session "
		          "ends");
		conn_close(c);
		return;
	}
	run(c);
}

static void
on_client(struct conn *c, uint32_t events)
{
	(void)events; /* (run reads and writes what it can) */
	run(c);
}

static void
on_timer(struct conn *c)
{
	uint64_t now = loop_now_ms(c->tp->loop);

	if (c->gate->step == G_VERDICT && now >= c->verdict_due_ms) {
		c->tp->counters.verdicts_late++;
		verdict(c, NULL);
		return;
	}
	if (now >= c->idle_due_ms) {
		conn_close(c);
		return;
	}
	run(c);
}

/* greygated's answer to the gated RCPT (v NULL: none came in time):
 * passed on to the MTA, or answered here. */
static void
verdict(struct conn *c, const struct tarpit_verdict *v)
{
	struct gate *g = c->gate;

	c->dlg.asking = TARPIT_ASK_NONE;
	if (v && v->action == TARPIT_PASS && c->rcpt_line)
		gate_pass_on(g, c->rcpt_line, strlen(c->rcpt_line), SENT_RCPT);
	else if (!gate_answer_held(c, v))
		return;
	run(c);
}

static void
on_verdict(struct conn *c, const struct tarpit_verdict *v)
{
	/* (a session handed already is never handed again) */
	if (v->handoff_fd >= 0) {
		close(v->handoff_fd);
		c->tp->counters.handoffs_unjoined++;
	}
	verdict(c, v);
}

/* The gate, then the join under it (the MTA's connection is its). */
static void
on_end(struct conn *c)
{
	const struct conn_phase *under = c->gate->under;

	free(c->gate);
	c->gate = NULL;
	under->on_end(c);
}

static bool
holds(const struct conn *c, int family, const uint8_t *addr, uint16_t port)
{
	return c->gate->under->holds(c, family, addr, port);
}

static const struct conn_phase gate_phase = {
	.name = "gate",
	.handed = true,
	.on_client = on_client,
	.on_timer = on_timer,
	.on_verdict = on_verdict,
	.on_end = on_end,
	.holds = holds,
};
