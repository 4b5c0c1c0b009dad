// SPDX-License-Identifier: GPL-2.0-or-later
/* The tarpit's own talk, every session's first phase: the SMTP dialogue
 * (dialogue.c, pure) on the client's socket. Each complete line is
 * answered in order (PIPELINING), a stutter listener's replies a byte at
 * a time, what the client said kept for its questions and a hand-off's
 * replay; a question to greygated pauses the session until its verdict
 * (or the plain answer when none comes in time), and a verdict that
 * hands the session to the MTA hands it to the join's phase (join.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "internal.h"
#include "smtp_command.h"
#include "smtp_line.h"

/* The client's turn: it has idle_due to speak. Ours: the next byte of a
 * stutter is due, or a verdict (or our plain answer without one). The
 * session's deadline holds either way. */
static void
arm(struct conn *c)
{
	uint64_t turn = c->out ? c->next_byte_ms
			: c->dlg.asking ? c->verdict_due_ms
					: c->idle_due_ms;

	loop_timer_arm(c->tp->loop, &c->timer,
		       turn < c->session_due_ms ? turn : c->session_due_ms);
}

enum reply_result { REPLY_SENT, REPLY_PAUSED, REPLY_CLOSED };

static int conn_process(struct conn *c);

/* A reply: written at once, or on a stutter connection queued to go out a
 * byte at a time while the client's further commands wait. */
static enum reply_result
conn_reply(struct conn *c, const char *buf, size_t len, bool close_after)
{
	if (!c->stutter || len == 0) {
		if (!conn_send(c, buf, len) || close_after) {
			conn_close(c);
			return REPLY_CLOSED;
		}
		return REPLY_SENT;
	}
	c->out = malloc(len);
	if (!c->out) {
		conn_close(c);
		return REPLY_CLOSED;
	}
	memcpy(c->out, buf, len);
	c->out_len = (uint16_t)len;
	c->out_off = 0;
	c->close_after = close_after;
	c->next_byte_ms = loop_now_ms(c->tp->loop);
	loop_mod_fd(c->tp->loop, c->fd, 0);
	arm(c);
	return REPLY_PAUSED;
}

/* One byte of a stutter; the client's turn again after the last. */
static void
stutter_step(struct conn *c)
{
	uint64_t now = loop_now_ms(c->tp->loop);
	ssize_t n = send(c->fd, c->out + c->out_off, 1,
			 MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n != 1) {
		conn_close(c);
		return;
	}
	if (++c->out_off < c->out_len) {
		c->next_byte_ms = now + c->tp->cfg.stutter_ms;
		arm(c);
		return;
	}
	free(c->out);
	c->out = NULL;
	if (c->close_after) {
		conn_close(c);
		return;
	}
	c->idle_due_ms = now + conn_idle_ms(c->tp);
	loop_mod_fd(c->tp->loop, c->fd, EPOLLIN);
	/* Commands that came while we spoke (PIPELINING) are answered now. */
	if (conn_process(c) >= 0)
		arm(c);
}

static void answer_verdict(struct conn *c, const struct tarpit_verdict *v);

static void
on_timer(struct conn *c)
{
	struct loop *loop = c->tp->loop;
	char buf[128];
	size_t n;

	if (c->out && loop_now_ms(loop) < c->session_due_ms) {
		stutter_step(c);
		return;
	}
	/* No verdict in time: the plain deferral, and the session goes on. */
	if (c->dlg.asking && loop_now_ms(loop) < c->session_due_ms) {
		c->tp->counters.verdicts_late++;
		answer_verdict(c, NULL);
		return;
	}
	n = (size_t)snprintf(buf, sizeof(buf),
			     "421 4.4.2 %s Error: timeout exceeded\r\n",
			     c->tp->cfg.hostname);
	conn_send(c, buf, n < sizeof(buf) ? n : sizeof(buf) - 1);
	c->tp->counters.timeouts++;
	conn_close(c);
}

/* The line a hand-off's replay is to send for the client's line: written
 * from its parse, never the client's bytes (NULL: none can be, or no
 * memory; the replay then fails and the client hears 451). */
static char *
rebuilt_line(const char *line, size_t len)
{
	char out[SMTP_REBUILT_MAX + 1];
	struct smtp_command cmd;

	smtp_command_parse(line, len, &cmd);
	return smtp_command_rebuild(&cmd, out) ? strdup(out) : NULL;
}

/* Keeps what the line said that a question will need. */
static void
keep_said(struct conn *c, const char *line, size_t len)
{
	const struct tarpit_dialogue *d = &c->dlg;

	switch (d->said) {
	case TARPIT_SAID_HELO:
		free(c->helo);
		free(c->helo_line);
		/* the name as the sensor keeps it too: printable bytes, at
		 * most SMTP_HELO_NAME_MAX of them */
		c->helo = malloc(SMTP_HELO_NAME_MAX + 1);
		if (c->helo)
			smtp_printable_copy(c->helo, SMTP_HELO_NAME_MAX + 1,
					    d->arg, d->arg_len);
		c->helo_line = rebuilt_line(line, len);
		/* HELO/EHLO ends the transaction too */
		__attribute__((fallthrough));
	case TARPIT_SAID_RESET:
		free(c->mail);
		free(c->sender);
		c->mail = c->sender = NULL;
		break;
	case TARPIT_SAID_MAIL:
		free(c->mail);
		free(c->sender);
		c->mail = rebuilt_line(line, len);
		c->sender = strndup(d->arg, d->arg_len);
		break;
	case TARPIT_SAID_RCPT:
		free(c->rcpt);
		free(c->rcpt_line);
		c->rcpt = strndup(d->arg, d->arg_len);
		c->rcpt_line = rebuilt_line(line, len);
		break;
	default:
		break;
	}
}

/* Answers every complete line in the buffer, in order (PIPELINING),
 * until one waits: for its stutter to be spoken or its verdict to come.
 * Return: the lines answered or asked about, or -1 when the connection
 * was closed. */
static int
conn_process(struct conn *c)
{
	char out[TARPIT_REPLY_MAX];
	size_t start = 0, out_len;
	bool paused = false;
	int lines = 0;

	if (!c->in_len)
		return 0;
	while (start < c->in_len && !paused) {
		const char *line = c->in + start;
		size_t len,
		        took = smtp_line_next(line, c->in_len - start, &len);
		int r;

		if (!took)
			break;
		start += took;
		/* (a bare LF leaves room for one byte more: not taken) */
		r = tarpit_dialogue_line(&c->dlg, line, len,
		                         c->discarding || len > SMTP_LINE_MAX,
		                         out, &out_len);
		c->discarding = 0;
		lines++;
		keep_said(c, line, len);
		if (c->dlg.rcpts && !c->reached_rcpt) {
			c->reached_rcpt = 1;
			c->tp->counters.reached_rcpt++;
		}
		if (r == TARPIT_ASK) {
			if (conn_ask(c) == 0) {
				paused = true;
				continue;
			}
			r = tarpit_dialogue_verdict(&c->dlg, NULL,
						    c->rcpt ? c->rcpt : "", out,
						    &out_len);
		}
		if (out_len && out[0] == '5')
			c->tp->counters.bad_commands++;
		switch (conn_reply(c, out, out_len, r == TARPIT_CLOSE)) {
		case REPLY_CLOSED:
			return -1;
		case REPLY_PAUSED:
			paused = true;
			break;
		case REPLY_SENT:
			break;
		}
		/* A BDAT chunk follows its command line: skip its bytes. */
		if (c->dlg.skip_bytes) {
			size_t skip = c->in_len - start < c->dlg.skip_bytes
					      ? c->in_len - start
					      : c->dlg.skip_bytes;

			c->dlg.skip_bytes -= (uint32_t)skip;
			start += skip;
		}
	}
	memmove(c->in, c->in + start, c->in_len - start);
	c->in_len = (uint16_t)(c->in_len - start);
	if (c->in_len == TARPIT_LINE_MAX && !c->out && !c->dlg.asking) {
		/* No CRLF within the limit: drop what we have and answer 500
		 * when the line finally ends. */
		c->in_len = 0;
		c->discarding = 1;
	}
	if (!c->in_len) {
		/* A session mostly waits with nothing unread: it holds no
		 * buffer then (SMTP_LINE_MAX-sized, for 2,000 sessions). */
		free(c->in);
		c->in = NULL;
	}
	return lines;
}

/* The verdict (NULL: none came in time) answers the command that asked;
 * the lines that waited behind it come next. */
static void
answer_verdict(struct conn *c, const struct tarpit_verdict *v)
{
	struct tarpit *tp = c->tp;
	char out[TARPIT_REPLY_MAX];
	size_t len;
	int r = tarpit_dialogue_verdict(&c->dlg, v, c->rcpt ? c->rcpt : "",
					out, &len);

	free(c->rcpt);
	c->rcpt = NULL;
	/* Ended unanswered (a STARTTLS not handed over): cleanly, whatever
	 * the client still sends. */
	if (r == TARPIT_CLOSE && !len) {
		conn_close_gently(c);
		return;
	}
	switch (conn_reply(c, out, len, r == TARPIT_CLOSE)) {
	case REPLY_CLOSED:
	case REPLY_PAUSED: /* the stutter goes on from there itself */
		return;
	case REPLY_SENT:
		break;
	}
	c->idle_due_ms = loop_now_ms(tp->loop) + conn_idle_ms(tp);
	loop_mod_fd(tp->loop, c->fd, EPOLLIN);
	if (conn_process(c) >= 0)
		arm(c);
}

/* May this session be handed to the MTA? Not when the tarpit answered
 * 250 to a recipient of this transaction already (a null sender's, with
 * null_sender_at_data): the MTA would never hear of it, and the client
 * would think it delivered. Not past max_conns sessions handed and still
 * open (each holds two descriptors). */
static bool
handoff_fits(const struct conn *c)
{
	const struct tarpit_dialogue *d = &c->dlg;

	if (d->asking == TARPIT_ASK_RCPT && d->null_sender &&
	    c->tp->cfg.null_sender_at_data && d->rcpts > 1)
		return false;
	return c->tp->counters.joined_open < c->tp->cfg.max_conns;
}

static void
on_client(struct conn *c, uint32_t events)
{
	struct loop *loop = c->tp->loop;
	int fd = c->fd;
	char skipbuf[4096];
	ssize_t n;
	int lines;

	/* Reset or gone: nothing more to say to it, whatever it left
	 * unread (a stutter or a question paused reading). */
	if (events & (EPOLLERR | EPOLLHUP)) {
		conn_close(c);
		return;
	}
	/* Paused with the buffer full: stop reading until it drains. */
	if ((c->out || c->dlg.asking) && c->in_len == TARPIT_LINE_MAX) {
		loop_mod_fd(loop, fd, 0);
		return;
	}
	if (c->dlg.skip_bytes) {
		size_t want = c->dlg.skip_bytes < sizeof(skipbuf)
				      ? c->dlg.skip_bytes
				      : sizeof(skipbuf);

		n = recv(fd, skipbuf, want, MSG_DONTWAIT);
		if (n > 0)
			c->dlg.skip_bytes -= (uint32_t)n;
	} else {
		if (!conn_room(c)) {
			conn_close(c);
			return;
		}
		n = recv(fd, c->in + c->in_len, TARPIT_LINE_MAX - c->in_len,
			 MSG_DONTWAIT);
		if (n > 0)
			c->in_len = (uint16_t)(c->in_len + n);
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	if (c->out || c->dlg.asking)
		return;
	lines = conn_process(c);
	if (lines < 0)
		return;
	/* Only a complete command buys more time: a byte now and then
	 * does not. */
	if (lines > 0 && !c->dlg.asking)
		c->idle_due_ms = loop_now_ms(loop) + conn_idle_ms(c->tp);
	arm(c);
}

static void
on_verdict(struct conn *c, const struct tarpit_verdict *v)
{
	struct tarpit_verdict plain;

	if (v->handoff_fd >= 0) {
		if (handoff_fits(c)) {
			join_begin(c, v->handoff_fd, v->greeted, v->gated);
			return;
		}
		c->tp->counters.handoffs_unjoined++;
		close(v->handoff_fd);
		plain = *v;
		plain.handoff_fd = -1;
		v = &plain;
	}
	answer_verdict(c, v);
}

/* The tarpit is stressed: its shorter timeouts apply to this session at
 * once, so a flood makes room for itself. */
static void
on_stress(struct conn *c, uint64_t idle_due_ms, uint64_t session_due_ms)
{
	if (c->idle_due_ms > idle_due_ms)
		c->idle_due_ms = idle_due_ms;
	if (c->session_due_ms > session_due_ms)
		c->session_due_ms = session_due_ms;
	arm(c);
}

/* The banner (a stutter listener's a byte at a time). */
static void
on_start(struct conn *c)
{
	struct tarpit *tp = c->tp;
	char banner[TARPIT_REPLY_MAX];

	tarpit_dialogue_init(&c->dlg, &tp->cfg);
	c->dlg.ask = tp->asker.ask != NULL;
	if (conn_reply(c, banner,
		       tarpit_banner(&tp->cfg, banner, sizeof(banner)),
		       false) == REPLY_CLOSED)
		return;
	arm(c);
}

const struct conn_phase talk_phase = {
	.name = "talk",
	.handed = false,
	.on_start = on_start,
	.on_client = on_client,
	.on_timer = on_timer,
	.on_verdict = on_verdict,
	.on_stress = on_stress,
};
