// SPDX-License-Identifier: GPL-2.0-or-later
/* The records between greygated and its child (see ipc.h): made on one
 * side, checked on the other, in one place. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "ipc.h"

static void
end_string(char *s, size_t size)
{
	s[size - 1] = 0;
}

int
ipc_check_up(struct ipc_record *rec, size_t len)
{
	struct ipc_event *e = &rec->u.ev;

	if (len != sizeof(*rec) || rec->version != IPC_VERSION)
		return -EPROTO;
	switch (rec->type) {
	case IPC_EVENT:
	case IPC_ATTEMPT:
		/* The sensor also tells of EHLO on the fast path (a
		 * visit); a tarpit session asks at RCPT and STARTTLS. */
		if ((e->family != AF_INET && e->family != AF_INET6) ||
		    (e->type != SENSOR_EV_RCPT &&
		     e->type != SENSOR_EV_STARTTLS &&
		     !(e->type == SENSOR_EV_HELO && rec->type == IPC_EVENT)))
			return -EPROTO;
		end_string(e->helo, sizeof(e->helo));
		end_string(e->from, sizeof(e->from));
		end_string(e->to, sizeof(e->to));
		return 0;
	case IPC_LOG:
		end_string(rec->u.log.text, sizeof(rec->u.log.text));
		return rec->u.log.level <= 2 ? 0 : -EPROTO;
	case IPC_STATS:
		return 0;
	default:
		return -EPROTO;
	}
}

void
ipc_event_view(const struct ipc_event *e, struct sensor_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = (enum sensor_event_type)e->type;
	ev->ts.tv_sec = e->ts_sec;
	ev->ts.tv_usec = e->ts_usec;
	ev->family = e->family;
	memcpy(ev->client, e->client, 16);
	memcpy(ev->server, e->server, 16);
	ev->client_port = e->client_port;
	ev->server_port = e->server_port;
	ev->path = (enum sensor_path)e->path;
	ev->reply = e->reply;
	ev->helo = e->helo;
	ev->from = e->from;
	ev->to = e->to;
}

static void
copy_text(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = 0;
}

static void
start(struct ipc_record *rec, enum ipc_type type)
{
	memset(rec, 0, sizeof(*rec));
	rec->version = IPC_VERSION;
	rec->type = (uint16_t)type;
}

void
ipc_fill_event(struct ipc_record *rec, const struct sensor_event *ev)
{
	struct ipc_event *e = &rec->u.ev;

	start(rec, IPC_EVENT);
	e->ts_sec = ev->ts.tv_sec;
	e->ts_usec = (int32_t)ev->ts.tv_usec;
	e->type = (uint8_t)ev->type;
	e->path = (uint8_t)ev->path;
	e->family = ev->family;
	memcpy(e->client, ev->client, 16);
	memcpy(e->server, ev->server, 16);
	e->client_port = ev->client_port;
	e->server_port = ev->server_port;
	e->reply = ev->reply;
	copy_text(e->helo, sizeof(e->helo), ev->helo);
	copy_text(e->from, sizeof(e->from), ev->from);
	copy_text(e->to, sizeof(e->to), ev->to);
}

void
ipc_fill_attempt(struct ipc_record *rec, const struct tarpit_attempt *a)
{
	struct ipc_event *e = &rec->u.ev;

	start(rec, IPC_ATTEMPT);
	e->session = a->session;
	e->type = a->kind == TARPIT_ASK_STARTTLS ? SENSOR_EV_STARTTLS
	                                         : SENSOR_EV_RCPT;
	e->path = SENSOR_PATH_TARPIT;
	e->family = a->family;
	memcpy(e->client, a->client, 16);
	e->client_port = a->client_port;
	memcpy(e->server, a->server, 16);
	e->server_port = a->server_port;
	copy_text(e->helo, sizeof(e->helo), a->helo);
	copy_text(e->from, sizeof(e->from), a->sender);
	copy_text(e->to, sizeof(e->to), a->rcpt);
}

void
ipc_fill_verdict(struct ipc_record *rec, uint64_t session,
                 const struct tarpit_verdict *v)
{
	start(rec, IPC_VERDICT);
	rec->u.verdict.session = session;
	rec->u.verdict.action = (uint8_t)v->action;
	rec->u.verdict.wait_sec = v->wait_sec;
	rec->u.verdict.handoff = v->handoff_fd >= 0;
	rec->u.verdict.greeted = v->greeted;
}
