// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer target for the privilege boundary: any sequence of records
 * the child could send, several a run, each with or without a
 * descriptor (a session's real socket, a unix socket, a listener), through
 * what greygated takes from it (ipc_take_up and the sessions' table) and,
 * when taken, on to the decision it would lead to, over a real store in a
 * temp folder. Nothing the child sends may crash greygated, keep a
 * descriptor open, or name a client: a question's client is always the
 * session socket's peer. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "attempt.h"
#include "ipc.h"
#include "policy.h"
#include "store.h"

/* Descriptors a record may carry: connections the "tarpit" accepted, the
 * other end of one, a unix socket, the listener. */
enum { ACCEPTED = 3, POOL = ACCEPTED + 3 };

static struct store *store;
static struct grey *grey;
static int pool[POOL];
static uint16_t tarpit_port;

static void
setup(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sin);
	struct grey_config cfg;
	int listener = socket(AF_INET, SOCK_STREAM, 0), sv[2], client = -1;

	if (store_open_temp(&store) < 0)
		abort();
	grey_config_defaults(&cfg);
	grey = grey_new(&cfg);
	if (listener < 0 || bind(listener, (struct sockaddr *)&sin, len) < 0 ||
	    listen(listener, 8) < 0 ||
	    getsockname(listener, (struct sockaddr *)&sin, &len) < 0)
		abort();
	tarpit_port = ntohs(sin.sin_port);
	for (int i = 0; i < ACCEPTED; i++) {
		client = socket(AF_INET, SOCK_STREAM, 0);
		if (client < 0 ||
		    connect(client, (struct sockaddr *)&sin, sizeof(sin)) < 0)
			abort();
		pool[i] = accept(listener, NULL, NULL);
		if (pool[i] < 0)
			abort();
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0)
		abort();
	pool[ACCEPTED] = client; /* the last client's own end */
	pool[ACCEPTED + 1] = sv[0];
	pool[ACCEPTED + 2] = listener;
}

/* One record from the input at *pos: an op byte (the record's type, and
 * which descriptor comes with it), then the fields the type reads. */
static size_t
next_record(const uint8_t *data, size_t size, size_t pos,
	    struct ipc_record *rec, size_t *len, int *fd)
{
	static const uint16_t types[] = {IPC_OPEN,  IPC_CLOSE, IPC_ATTEMPT,
					 IPC_EVENT, IPC_LOG,   IPC_STATS,
					 IPC_VERDICT, 0};
	uint8_t op = data[pos++];
	uint8_t which = (op >> 3) & 7;
	size_t n;

	memset(rec, 0, sizeof(*rec));
	rec->version = IPC_VERSION;
	rec->type = types[op & 7];
	*len = sizeof(*rec);
	*fd = which < POOL ? dup(pool[which]) : -1;
	/* Ids and question numbers from a small range, so that sessions
	 * opened are asked about, closed, and reopened. */
	if (pos < size)
		rec->u.session.session = data[pos++] & 15;
	if (rec->type == IPC_ATTEMPT && pos < size) {
		rec->u.attempt.question = data[pos++] & 7;
		rec->u.attempt.kind = pos < size ? data[pos++] % 4 : 1;
	}
	/* The rest of the record's bytes, as many as the input gives (an
	 * attempt's and an event's strings, unended or not). */
	n = pos < size ? data[pos++] : 0;
	if (n > size - pos)
		n = size - pos;
	if (rec->type == IPC_EVENT || rec->type == IPC_LOG ||
	    rec->type == IPC_STATS || !rec->type)
		memcpy(&rec->u, data + pos, n < sizeof(rec->u) ? n
							       : sizeof(rec->u));
	else if (rec->type == IPC_ATTEMPT)
		memcpy(rec->u.attempt.helo, data + pos,
		       n < sizeof(rec->u.attempt) -
				   offsetof(struct ipc_attempt, helo)
			       ? n
			       : sizeof(rec->u.attempt) -
					 offsetof(struct ipc_attempt, helo));
	pos += n;
	/* A byte of the op says whether the length comes right. */
	if (op & 0x80)
		*len = sizeof(*rec) - (op & 0x40 ? 1 : 0) + (op & 0x20 ? 1 : 0);
	return pos;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sessions *s;
	size_t pos = 0;

	if (!store)
		setup();
	s = sessions_new(8, &tarpit_port, 1);
	if (!s)
		abort();
	while (pos < size) {
		struct ipc_record rec;
		struct ipc_up up;
		struct grey_attempt a;
		struct grey_decision d;
		struct sensor_event ev;
		size_t len;
		int fd, r;

		pos = next_record(data, size, pos, &rec, &len, &fd);
		r = ipc_take_up(s, &rec, len, fd, &up);
		/* Whatever it was, the descriptor is closed. */
		if (fd >= 0 && fcntl(fd, F_GETFD) >= 0)
			abort();
		if (r < 0 && !up.why)
			abort();
		if (r == IPC_UP_ATTEMPT) {
			const struct sockaddr_in *c =
				(const void *)&up.session->ends.client;

			/* The client is the socket's peer: loopback. */
			if (c->sin_family != AF_INET ||
			    c->sin_addr.s_addr != htonl(INADDR_LOOPBACK))
				abort();
			ipc_attempt_view(&rec.u.attempt, &up.session->ends, &a);
			a.now = 1700000000;
			store_decide(store, grey, &a, &d);
			/* Half the questions are answered. */
			if (rec.u.attempt.question & 1)
				ipc_answered(s, rec.u.attempt.session);
		} else if (r == IPC_UP_EVENT) {
			ipc_event_view(&rec.u.ev, &ev);
			if (ev.path != SENSOR_PATH_FAST)
				abort();
			if (attempt_of_event(&ev, 1700000000, &a))
				store_decide(store, grey, &a, &d);
		}
	}
	sessions_free(s);
	/* (a temporary store: a failed commit is a bug of its own) */
	if (store_pending(store) > 1000 && store_flush(store) < 0)
		abort();
	return 0;
}
