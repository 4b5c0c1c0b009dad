// SPDX-License-Identifier: GPL-2.0-or-later
/* The SMTP conversation parser: client commands and server replies of one
 * connection, fed as two byte streams. Replies are matched to commands in
 * order (PIPELINING); DATA bodies are skipped to CRLF.CRLF and BDAT chunks
 * by their size without buffering; STARTTLS with a 220 ends visibility.
 * Every line is bounded; bad input is counted and survived. */
#include <stddef.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sensor.h"
#include "smtp_command.h"
#include "smtp_reply.h"

enum cmd {
	CMD_GREETING,
	CMD_HELO,
	CMD_MAIL,
	CMD_RCPT,
	CMD_DATA,
	CMD_DATA_END, /* the reply after the body's final dot */
	CMD_BDAT,
	CMD_STARTTLS,
	CMD_AUTH,
	CMD_OTHER
};

enum client_mode {
	CM_COMMAND,
	CM_DATA_WAIT, /* DATA sent, its reply not seen yet */
	CM_BODY,      /* skipping the body to CRLF.CRLF */
	CM_BDAT,      /* skipping bdat_left bytes */
	CM_AUTH,      /* SASL exchange: client lines are not commands */
	CM_TLS_WAIT,  /* STARTTLS sent, its reply not seen yet */
	CM_DONE       /* encrypted: nothing more to see */
};

/* A line's bytes are kept only while it is split across segments: most
 * lines arrive whole in one, and an idle flow then holds no buffer. */
struct line_buf {
	size_t len;
	bool too_long;   /* past SMTP_LINE_MAX: dropping to the LF */
	bool skip_to_lf; /* after a gap: resync at the next line */
	bool has_nul;
	bool last_cr; /* the last byte taken was CR (even if not kept) */
	char *buf;    /* SMTP_LINE_MAX + 1 bytes (a CR's room) while a line
	               * is split */
};

struct pending {
	enum cmd cmd;
	char *arg; /* RCPT: "from\0to" */
};

struct smtp_conv {
	struct sensor_counters *ctr;
	smtp_event_fn *fn;
	void *ctx;
	enum client_mode mode;
	uint8_t body_state;
	bool server_seen;
	bool client_spoke;
	bool replies_lost; /* matching is broken for good */
	bool from_unread;  /* this transaction's MAIL could not be read */
	uint64_t bdat_left;
	bool bdat_last;
	size_t qhead, qlen;
	struct line_buf cl, sv;
	/* From here on, only what is written before it is read is left
	 * unzeroed at start (see smtp_conv_init). */
	char helo[SMTP_HELO_MAX];
	char from[SMTP_ADDR_MAX];
	struct pending q[SMTP_PENDING_MAX];
};

static void
emit(struct smtp_conv *c, enum sensor_event_type type, int reply,
     const char *from, const char *to)
{
	if (type == SENSOR_EV_RCPT)
		c->ctr->rcpts++;
	c->fn(type, reply, c->helo, from ? from : "", to ? to : "", c->ctx);
}

/* --- the queue of commands awaiting replies --- */

static struct pending *
q_front(struct smtp_conv *c)
{
	return c->qlen ? &c->q[c->qhead] : NULL;
}

/* Reports a pending command as unanswered and drops it. */
static void
q_drop_front(struct smtp_conv *c, int reply)
{
	struct pending *p = &c->q[c->qhead];

	if (p->cmd == CMD_RCPT && p->arg)
		emit(c, SENSOR_EV_RCPT, reply, p->arg,
		     p->arg + strlen(p->arg) + 1);
	else if (p->cmd == CMD_STARTTLS && reply == 0)
		emit(c, SENSOR_EV_STARTTLS, 0, NULL, NULL);
	if (p->arg) {
		free(p->arg);
		p->arg = NULL;
	}
	c->qhead = (c->qhead + 1) % SMTP_PENDING_MAX;
	c->qlen--;
}

static void
q_flush(struct smtp_conv *c)
{
	while (c->qlen)
		q_drop_front(c, 0);
}

static void
q_push(struct smtp_conv *c, enum cmd cmd, char *arg)
{
	if (c->replies_lost) {
		/* No reply will be matched: report at once. */
		struct pending p = {cmd, arg};

		c->q[c->qhead] = p;
		c->qlen = 1;
		q_drop_front(c, 0);
		return;
	}
	if (c->qlen == SMTP_PENDING_MAX) {
		/* A client that pipelines past any sane depth, or a server
		 * we cannot hear: stop matching rather than mismatch. */
		q_flush(c);
		c->replies_lost = true;
		q_push(c, cmd, arg);
		return;
	}
	c->q[(c->qhead + c->qlen) % SMTP_PENDING_MAX] =
		(struct pending){cmd, arg};
	c->qlen++;
}

size_t
smtp_conv_size(void)
{
	return sizeof(struct smtp_conv);
}

struct smtp_conv *
smtp_conv_init(void *mem, struct sensor_counters *counters, bool from_start,
	       smtp_event_fn *fn, void *ctx)
{
	struct smtp_conv *c = mem;

	/* Only the head is zeroed: helo and from are set before they are
	 * read, and the queue's entries when they are pushed. */
	memset(c, 0, offsetof(struct smtp_conv, helo));
	c->helo[0] = c->from[0] = 0;
	c->ctr = counters;
	c->fn = fn;
	c->ctx = ctx;
	if (from_start)
		q_push(c, CMD_GREETING, NULL);
	return c;
}

void
smtp_conv_end(struct smtp_conv *c)
{
	q_flush(c);
	free(c->cl.buf);
	free(c->sv.buf);
	c->cl.buf = c->sv.buf = NULL;
}

struct smtp_conv *
smtp_conv_new(struct sensor_counters *counters, bool from_start,
	      smtp_event_fn *fn, void *ctx)
{
	void *mem = malloc(sizeof(struct smtp_conv));

	return mem ? smtp_conv_init(mem, counters, from_start, fn, ctx) : NULL;
}

void
smtp_conv_free(struct smtp_conv *c)
{
	if (!c)
		return;
	smtp_conv_end(c);
	free(c);
}

bool
smtp_conv_is_done(const struct smtp_conv *c)
{
	return c->mode == CM_DONE;
}

/* --- line assembly, shared by both directions --- */

/* A complete line, without CR LF, read where it lies (len bytes, not
 * NUL-terminated); NULL for a line that was too long to keep. */
typedef void line_fn(struct smtp_conv *c, const char *line, size_t len);

/* Consumes bytes up to and including one LF. Returns bytes used; calls
 * on_line for a complete line (without CR LF). */
/* Inlined into its two callers, so that on_line is a direct call. */
static inline __attribute__((always_inline)) size_t
line_feed(struct smtp_conv *c, struct line_buf *lb, const uint8_t *buf,
	  size_t len, line_fn *on_line)
{
	const uint8_t *lf = memchr(buf, '\n', len);
	size_t take = lf ? (size_t)(lf - buf) + 1 : len;
	size_t body = lf ? take - 1 : take;
	/* A whole line in this segment is read where it lies. */
	bool whole = lf && lb->len == 0;
	const char *src;
	size_t n;

	if (!lb->skip_to_lf && !lb->too_long) {
		/* + 1: room for the CR that may end it */
		if (lb->len + body > SMTP_LINE_MAX + 1) {
			lb->too_long = true;
			c->ctr->long_lines++;
		} else {
			/* Commands only: a reply is read for its code. */
			if (lb == &c->cl && memchr(buf, 0, body))
				lb->has_nul = true;
			if (!whole) {
				if (!lb->buf)
					lb->buf = malloc(SMTP_LINE_MAX + 1);
				if (lb->buf) {
					memcpy(lb->buf + lb->len, buf, body);
					lb->len += body;
				} else {
					/* No memory: drop the line, as
					 * after a gap. */
					lb->skip_to_lf = true;
				}
			}
		}
	}
	if (body > 0)
		lb->last_cr = buf[body - 1] == '\r';
	if (!lf)
		return take;
	if (!lb->skip_to_lf) {
		src = whole ? (const char *)buf : lb->buf;
		n = lb->too_long ? 0
		                 : smtp_line_trim(src, whole ? body : lb->len);
		/* SMTP_LINE_MAX + 1 bytes without a CR: one too many */
		if (n > SMTP_LINE_MAX) {
			lb->too_long = true;
			c->ctr->long_lines++;
			n = 0;
		}
		if (!lb->last_cr)
			c->ctr->bare_lf++;
		if (lb->has_nul)
			c->ctr->nul_bytes++;
		/* An over-long line still gets a reply from the server. */
		on_line(c, lb->too_long ? NULL : src, n);
	}
	if (lb->buf) {
		free(lb->buf);
		lb->buf = NULL;
	}
	lb->len = 0;
	lb->too_long = lb->skip_to_lf = lb->has_nul = lb->last_cr = false;
	return take;
}

/* --- client commands --- */

static char *
rcpt_arg(const char *from, const char *to, size_t to_len)
{
	size_t lf = strlen(from);
	char *arg = malloc(lf + to_len + 2);

	if (!arg)
		return NULL;
	memcpy(arg, from, lf + 1);
	memcpy(arg + lf + 1, to, to_len);
	arg[lf + 1 + to_len] = 0;
	return arg;
}

static void
on_command(struct smtp_conv *c, const char *line, size_t len)
{
	struct smtp_command cmd;

	if (c->mode == CM_AUTH) {
		/* A SASL response: never looked at (credentials). A "*"
		 * cancels; the server's reply ends the exchange. */
		return;
	}
	if (!line) {
		q_push(c, CMD_OTHER, NULL);
		c->ctr->garbage++;
		return;
	}
	smtp_command_parse(line, len, &cmd);
	switch (cmd.verb) {
	case SMTP_VERB_HELO:
	case SMTP_VERB_EHLO:
		smtp_printable_copy(c->helo, sizeof(c->helo), cmd.helo,
				    cmd.helo_len);
		c->from[0] = 0;
		c->from_unread = false;
		q_push(c, CMD_HELO, NULL);
		return;
	case SMTP_VERB_MAIL:
		/* A sender the MTA may take but greygate cannot keep (a
		 * space in it, over 256 bytes): this transaction's
		 * recipients have no triplet, rather than one with <>. */
		c->from_unread = cmd.path_status != SMTP_PATH_OK;
		if (c->from_unread)
			break;
		memcpy(c->from, cmd.path, cmd.path_len);
		c->from[cmd.path_len] = 0;
		q_push(c, CMD_MAIL, NULL);
		return;
	case SMTP_VERB_RCPT:
		if (cmd.path_status != SMTP_PATH_OK || cmd.path_len == 0 ||
		    c->from_unread)
			break;
		q_push(c, CMD_RCPT, rcpt_arg(c->from, cmd.path, cmd.path_len));
		return;
	case SMTP_VERB_DATA:
		q_push(c, CMD_DATA, NULL);
		c->mode = CM_DATA_WAIT;
		return;
	case SMTP_VERB_BDAT:
		/* A size that is no number, or absurd: a server refuses it
		 * and reads on as commands. */
		if (!cmd.bdat_ok || cmd.bdat_size >= SMTP_BDAT_SIZE_MAX)
			break;
		c->bdat_left = cmd.bdat_size;
		c->bdat_last = cmd.bdat_last;
		q_push(c, CMD_BDAT, NULL);
		if (c->bdat_left)
			c->mode = CM_BDAT;
		return;
	case SMTP_VERB_STARTTLS:
		q_push(c, CMD_STARTTLS, NULL);
		c->mode = CM_TLS_WAIT;
		return;
	case SMTP_VERB_XCLIENT:
		/* A proxy's connection (greygate's own hand-off, or another
		 * proxy's): the client it speaks for is not the one seen
		 * here, and was seen where it connected. */
		c->mode = CM_DONE;
		c->ctr->proxied_flows++;
		return;
	case SMTP_VERB_AUTH:
		q_push(c, CMD_AUTH, NULL);
		/* With an initial response and no server to tell us more,
		 * assume the exchange is one line. */
		if (c->server_seen || !memchr(cmd.arg, ' ', cmd.arg_len))
			c->mode = CM_AUTH;
		return;
	case SMTP_VERB_RSET:
		c->from[0] = 0;
		c->from_unread = false;
		q_push(c, CMD_OTHER, NULL);
		return;
	case SMTP_VERB_QUIT:
	case SMTP_VERB_NOOP:
	case SMTP_VERB_VRFY:
	case SMTP_VERB_EXPN:
	case SMTP_VERB_HELP:
		q_push(c, CMD_OTHER, NULL);
		return;
	case SMTP_VERB_OTHER:
		break;
	}
	c->ctr->garbage++;
	q_push(c, CMD_OTHER, NULL);
}

/* Skips DATA body bytes; returns how many were body (the end included). */
static size_t
body_skip(struct smtp_conv *c, const uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		uint8_t ch = buf[i];

		switch (c->body_state) {
		case 0: { /* inside a line: only a '.' that starts a line can
			   * begin the end, so jump from dot to dot (bodies are
			   * mostly base64 or text: few dots, many lines) */
			const uint8_t *dot = memchr(buf + i, '.', len - i);
			size_t k;

			if (!dot) {
				c->body_state = buf[len - 1] == '\n' ? 1 : 0;
				return len;
			}
			k = (size_t)(dot - buf);
			/* at i the byte before was no line end (state 0) */
			c->body_state = k > i && buf[k - 1] == '\n' ? 2 : 0;
			i = k;
			break;
		}
		case 1: /* at a line's start */
			c->body_state = ch == '.' ? 2 : ch == '\n' ? 1 : 0;
			break;
		case 2: /* "." at a line's start */
			if (ch == '\r') {
				c->body_state = 3;
				break;
			}
			if (ch != '\n') {
				c->body_state = 0; /* a dot-stuffed line */
				break;
			}
			/* ".\n" ends it too */
			__attribute__((fallthrough));
		case 3:
			if (ch == '\n') {
				c->mode = CM_COMMAND;
				q_push(c, CMD_DATA_END, NULL);
				return i + 1;
			}
			c->body_state = 0;
			break;
		}
	}
	return len;
}

void
smtp_conv_client(struct smtp_conv *c, const uint8_t *buf, size_t len)
{
	if (len > 0 && !c->client_spoke) {
		c->client_spoke = true;
		/* A PROXY header (v2's signature starts with an empty line, v1
		 * with "PROXY "): a proxy's connection, as with XCLIENT. */
		if ((len >= 4 && memcmp(buf, "\r\n\r\n", 4) == 0) ||
		    (len >= 6 && memcmp(buf, "PROXY ", 6) == 0)) {
			c->mode = CM_DONE;
			c->ctr->proxied_flows++;
			return;
		}
	}
	while (len > 0 && c->mode != CM_DONE) {
		size_t used;

		switch (c->mode) {
		case CM_DATA_WAIT:
			/* Body bytes before we heard the 354: the server's
			 * side is not captured. */
			c->mode = CM_BODY;
			c->body_state = 1;
			continue;
		case CM_TLS_WAIT:
			if (buf[0] == 0x16) { /* a TLS handshake record */
				c->mode = CM_DONE;
				c->ctr->tls_flows++;
				if (q_front(c) && q_front(c)->cmd == CMD_STARTTLS)
					q_drop_front(c, 0);
				return;
			}
			c->mode = CM_COMMAND;
			continue;
		case CM_BODY:
			used = body_skip(c, buf, len);
			break;
		case CM_BDAT:
			used = len < c->bdat_left ? len : (size_t)c->bdat_left;
			c->bdat_left -= used;
			if (c->bdat_left == 0)
				c->mode = CM_COMMAND;
			break;
		default:
			used = line_feed(c, &c->cl, buf, len, on_command);
			break;
		}
		buf += used;
		len -= used;
	}
}

/* --- server replies --- */

static void
on_reply(struct smtp_conv *c, int code)
{
	struct pending *p = q_front(c);

	if (!p || c->replies_lost)
		return; /* unsolicited (a 421 at timeout) or unmatchable */
	switch (p->cmd) {
	case CMD_HELO:
		emit(c, SENSOR_EV_HELO, code, NULL, NULL);
		break;
	case CMD_RCPT:
		if (p->arg)
			emit(c, SENSOR_EV_RCPT, code, p->arg,
			     p->arg + strlen(p->arg) + 1);
		break;
	case CMD_DATA:
		if (c->mode == CM_DATA_WAIT) {
			c->mode = code == 354 ? CM_BODY : CM_COMMAND;
			c->body_state = 1;
		}
		break;
	case CMD_AUTH:
		if (code == 334)
			return; /* the exchange goes on */
		emit(c, SENSOR_EV_AUTH, code, NULL, NULL);
		if (c->mode == CM_AUTH)
			c->mode = CM_COMMAND;
		break;
	case CMD_STARTTLS:
		emit(c, SENSOR_EV_STARTTLS, code, NULL, NULL);
		if (code == 220) {
			c->mode = CM_DONE;
			c->ctr->tls_flows++;
		} else if (c->mode == CM_TLS_WAIT) {
			c->mode = CM_COMMAND;
		}
		break;
	default:
		break;
	}
	if (p->arg) {
		free(p->arg);
		p->arg = NULL;
	}
	c->qhead = (c->qhead + 1) % SMTP_PENDING_MAX;
	c->qlen--;
}

static void
on_server_line(struct smtp_conv *c, const char *line, size_t len)
{
	int code;

	switch (line ? smtp_reply_line(line, len, &code) : SMTP_REPLY_BAD) {
	case SMTP_REPLY_BAD:
		c->ctr->garbage++;
		return;
	case SMTP_REPLY_MORE:
		return; /* a multi-line reply goes on */
	case SMTP_REPLY_LAST:
		on_reply(c, code);
		return;
	}
}

void
smtp_conv_server(struct smtp_conv *c, const uint8_t *buf, size_t len)
{
	if (len)
		c->server_seen = true;
	while (len > 0 && c->mode != CM_DONE) {
		size_t used = line_feed(c, &c->sv, buf, len, on_server_line);

		buf += used;
		len -= used;
	}
}

void
smtp_conv_gap(struct smtp_conv *c, bool client)
{
	struct line_buf *lb = client ? &c->cl : &c->sv;

	c->ctr->gaps++;
	lb->len = 0;
	lb->too_long = lb->has_nul = false;
	lb->skip_to_lf = true;
	if (!client) {
		/* Replies were lost: those pending are unanswered. */
		q_flush(c);
		c->replies_lost = true;
	}
}
