// SPDX-License-Identifier: GPL-2.0-or-later
/* The records between greygated and its child (see ipc.h): made on one
 * side, checked and taken on the other, in one place. */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc.h"

static void
end_string(char *s, size_t size)
{
	s[size - 1] = 0;
}

/* Refused, and why. */
static int
refuse(struct ipc_up *out, const char *why)
{
	out->why = why;
	return -EPROTO;
}

/* An address of a session's, as an event holds one. */
static void
event_address(const struct sockaddr_storage *ss, uint8_t bytes[16],
	      uint16_t *port)
{
	memset(bytes, 0, 16);
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

		memcpy(bytes, &sin->sin_addr, 4);
		*port = ntohs(sin->sin_port);
	} else {
		const struct sockaddr_in6 *sin6 =
			(const struct sockaddr_in6 *)ss;

		memcpy(bytes, &sin6->sin6_addr, 16);
		*port = ntohs(sin6->sin6_port);
	}
}

/* A handed session's later RCPT: who the client is comes from the
 * session's socket, never from the child (sessions.h). */
static int
take_session_event(struct sessions *s, struct ipc_event *e,
		   struct ipc_up *out)
{
	const struct session_info *si = sessions_find(s, e->session);
	const struct sockaddr_storage *server;

	if (!si)
		return refuse(out, "an event of a session that is not open");
	if (!si->handed)
		return refuse(out, "an event of a session not handed to the "
				   "MTA");
	if (e->type != SENSOR_EV_RCPT)
		return refuse(out, "an event of a handed session that is not "
				   "a RCPT");
	server = si->ends.dst.ss_family ? &si->ends.dst : &si->ends.local;
	e->family = (uint8_t)si->ends.client.ss_family;
	event_address(&si->ends.client, e->client, &e->client_port);
	event_address(server, e->server, &e->server_port);
	return 0;
}

static int
check_event(struct sessions *s, struct ipc_event *e, struct ipc_up *out)
{
	int r;

	/* The sensor tells of EHLO (a visit), RCPT and STARTTLS on the fast
	 * path; the tarpit speaks for its own sessions, and only a replay
	 * has no path: from the child, anything else could pass a client
	 * (the policy passes on a retry it is shown off the fast path). */
	if (e->type != SENSOR_EV_RCPT && e->type != SENSOR_EV_STARTTLS &&
	    e->type != SENSOR_EV_HELO)
		return refuse(out, "an event of an unknown type");
	if (e->path != SENSOR_PATH_FAST)
		return refuse(out, "an event that is not of the fast path");
	if (e->session && (r = take_session_event(s, e, out)) < 0)
		return r;
	if (e->family != AF_INET && e->family != AF_INET6)
		return refuse(out, "an event of no address family");
	end_string(e->helo, sizeof(e->helo));
	end_string(e->from, sizeof(e->from));
	end_string(e->to, sizeof(e->to));
	return IPC_UP_EVENT;
}

static int
take_attempt(struct sessions *s, struct ipc_attempt *at, struct ipc_up *out)
{
	struct session_info *si = sessions_find(s, at->session);

	if (at->kind != TARPIT_ASK_RCPT && at->kind != TARPIT_ASK_STARTTLS)
		return refuse(out, "a question of an unknown kind");
	if (!si)
		return refuse(out, "a question of a session that is not open "
				   "(never opened, or ended)");
	if (at->question <= si->last_question)
		return refuse(out, "a question number asked before");
	if (si->in_flight >= SESSION_IN_FLIGHT_MAX)
		return refuse(out, "too many questions of one session waiting");
	if (si->questions >= TARPIT_ASKS_MAX)
		return refuse(out, "too many questions of one session");
	end_string(at->helo, sizeof(at->helo));
	end_string(at->from, sizeof(at->from));
	end_string(at->to, sizeof(at->to));
	si->last_question = at->question;
	si->questions++;
	si->in_flight++;
	out->session = si;
	return IPC_UP_ATTEMPT;
}

/* Closes a descriptor the child sent, never waiting on it: a socket with
 * SO_LINGER set (the child chooses its sockets' options) would hold
 * greygated's close, when it is the last, until its unsent bytes are
 * taken or the linger's seconds are over (issue 55: a compromised child
 * froze greygated for 40 s with {1, 40} on a socket whose client did not
 * read). The option is cleared first; the kernel then sends what is left
 * in the background, as for any close. (Not a socket: nothing to
 * clear.) */
static void
close_unlingered(int fd)
{
	static const struct linger off = {0, 0};

	(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &off, sizeof(off));
	close(fd);
}

int
ipc_take_up(struct sessions *s, struct ipc_record *rec, size_t len, int fd,
	    struct ipc_up *out)
{
	int r;

	out->session = NULL;
	out->why = NULL;
	if (len != sizeof(*rec) || rec->version != IPC_VERSION) {
		r = refuse(out, "a record of another size or version");
		goto done;
	}
	if (fd >= 0 && rec->type != IPC_OPEN) {
		r = refuse(out, "a descriptor with a record that takes none");
		goto done;
	}
	switch (rec->type) {
	case IPC_OPEN:
		if (fd < 0) {
			r = refuse(out, "a session opened without its socket");
			break;
		}
		r = sessions_open(s, rec->u.session.session, fd, &out->why);
		r = r < 0 ? -EPROTO : IPC_UP_DONE;
		break;
	case IPC_CLOSE:
		r = sessions_close(s, rec->u.session.session) < 0
			    ? refuse(out, "a session closed that is not open")
			    : IPC_UP_DONE;
		break;
	case IPC_ATTEMPT:
		r = take_attempt(s, &rec->u.attempt, out);
		break;
	case IPC_EVENT:
		r = check_event(s, &rec->u.ev, out);
		break;
	case IPC_LOG:
		end_string(rec->u.log.text, sizeof(rec->u.log.text));
		r = rec->u.log.level <= 2 ? IPC_UP_LOG
					  : refuse(out, "a log line of no level");
		break;
	case IPC_STATS:
		r = IPC_UP_STATS;
		break;
	default:
		r = refuse(out, "a record of a type the child may not send");
		break;
	}
done:
	/* Closed before any later record is taken: the child counts on a
	 * session's socket being let go of by the time it reads a verdict
	 * (tarpit_asker.released_by_verdict). */
	if (fd >= 0)
		close_unlingered(fd);
	return r;
}

void
ipc_answered(struct sessions *s, uint64_t session)
{
	struct session_info *si = sessions_find(s, session);

	if (si && si->in_flight)
		si->in_flight--;
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
	ev->session = e->session;
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
	e->session = ev->session;
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
ipc_attempt_view(const struct ipc_attempt *at, const struct session_ends *ends,
		 struct grey_attempt *a)
{
	const struct sockaddr_storage *c = &ends->client;

	memset(a, 0, sizeof(*a));
	a->kind = at->kind == TARPIT_ASK_STARTTLS ? GREY_ATTEMPT_STARTTLS
						  : GREY_ATTEMPT_RCPT;
	a->client.family = (uint8_t)c->ss_family;
	if (c->ss_family == AF_INET)
		memcpy(a->client.bytes,
		       &((const struct sockaddr_in *)c)->sin_addr, 4);
	else
		memcpy(a->client.bytes,
		       &((const struct sockaddr_in6 *)c)->sin6_addr, 16);
	a->helo = at->helo;
	a->sender = at->from;
	a->rcpt = at->to;
	a->path = GREY_PATH_TARPIT;
}

void
ipc_fill_attempt(struct ipc_record *rec, const struct tarpit_attempt *a)
{
	struct ipc_attempt *at = &rec->u.attempt;

	start(rec, IPC_ATTEMPT);
	at->session = a->session;
	at->question = a->question;
	at->kind = (uint8_t)a->kind;
	copy_text(at->helo, sizeof(at->helo), a->helo);
	copy_text(at->from, sizeof(at->from), a->sender);
	copy_text(at->to, sizeof(at->to), a->rcpt);
}

void
ipc_fill_session(struct ipc_record *rec, enum ipc_type type, uint64_t session)
{
	start(rec, type);
	rec->u.session.session = session;
}

void
ipc_fill_verdict(struct ipc_record *rec, uint64_t session, uint32_t question,
		 const struct tarpit_verdict *v)
{
	start(rec, IPC_VERDICT);
	rec->u.verdict.session = session;
	rec->u.verdict.question = question;
	rec->u.verdict.action = (uint8_t)v->action;
	rec->u.verdict.wait_sec = v->wait_sec;
	rec->u.verdict.handoff = v->handoff_fd >= 0;
	rec->u.verdict.greeted = v->greeted;
	rec->u.verdict.refused = v->refused;
	rec->u.verdict.gated = v->gated;
}

void
ipc_attach_fd(struct msghdr *m, union ipc_fd_control *control, int fd)
{
	struct cmsghdr *cm;

	memset(control, 0, sizeof(*control));
	m->msg_control = control->buf;
	m->msg_controllen = sizeof(control->buf);
	cm = CMSG_FIRSTHDR(m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
}

/* What came with a message received into m (n bytes): its descriptor,
 * whether more came, and its length as ipc_recv says it. Every
 * descriptor but the first is closed here: the control buffer has room
 * for two (CMSG_SPACE rounds up), and a child that sent two at a time
 * must not fill greygated's table with the second. */
static ssize_t
took(struct msghdr *m, ssize_t n, int *fd, bool *extra)
{
	*fd = -1;
	*extra = false;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(m); cm;
	     cm = CMSG_NXTHDR(m, cm)) {
		size_t count;

		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_RIGHTS) {
			*extra = true;
			continue;
		}
		count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < count; i++) {
			int got;

			memcpy(&got, CMSG_DATA(cm) + i * sizeof(int),
			       sizeof(int));
			if (*fd < 0) {
				*fd = got;
				continue;
			}
			close(got);
			*extra = true;
		}
	}
	/* More descriptors than fit: the kernel closed what did not. None
	 * at all, though our buffer has room for two: the kernel could not
	 * give us the first, our table is full (issue 57: said as the
	 * child's fault, "more than one descriptor") */
	if ((m->msg_flags & MSG_CTRUNC) && *fd < 0 && !*extra)
		*fd = IPC_FD_LOST;
	else if (m->msg_flags & MSG_CTRUNC)
		*extra = true;
	/* A longer record than ours was cut: said as longer. */
	if (m->msg_flags & MSG_TRUNC)
		return (ssize_t)sizeof(struct ipc_record) + 1;
	return n;
}

ssize_t
ipc_recv(int sock, struct ipc_record *rec, int *fd, bool *extra)
{
	union ipc_fd_control control;
	struct iovec iov = {rec, sizeof(*rec)};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = control.buf,
			     .msg_controllen = sizeof(control.buf)};
	ssize_t n = recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	*fd = -1;
	*extra = false;
	if (n < 0)
		return -errno;
	return took(&msg, n, fd, extra);
}

int
ipc_recv_batch(int sock, struct ipc_batch *b)
{
	int n;

	for (int i = 0; i < IPC_BATCH; i++) {
		struct msghdr *m = &b->msgs[i].msg_hdr;

		b->iov[i] = (struct iovec){&b->rec[i], sizeof(b->rec[i])};
		memset(m, 0, sizeof(*m));
		m->msg_iov = &b->iov[i];
		m->msg_iovlen = 1;
		m->msg_control = b->control[i].buf;
		m->msg_controllen = sizeof(b->control[i].buf);
	}
	n = recvmmsg(sock, b->msgs, IPC_BATCH, MSG_DONTWAIT | MSG_CMSG_CLOEXEC,
		     NULL);
	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++)
		b->len[i] = took(&b->msgs[i].msg_hdr, b->msgs[i].msg_len,
				 &b->fd[i], &b->extra[i]);
	return n;
}
