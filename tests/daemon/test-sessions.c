// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of what greygated takes from its child (daemon/ipc/sessions.c and
 * ipc_take_up in daemon/ipc/ipc.c), on real sockets over loopback: a
 * session's addresses come from its socket, whatever the child sends;
 * a socket the tarpit did not accept (a unix pair, a listener, a pipe,
 * greygated's own connection to the MTA) is refused, and so is every
 * record naming a session that is not open, a session id used before, a
 * question asked again, a descriptor where none belongs, and an event
 * that is not of the fast path; a socket is opened as a session once, and
 * only while its client is there (issue 55: a compromised child kept a
 * session's socket and opened it again after the delay). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "ipc.h"
#include "sessions.h"

/* A listener on loopback (its port is the "tarpit's"), and one
 * connection accepted on it: *accepted is the tarpit's end, *client the
 * client's. */
struct pair {
	int listener, accepted, client;
	uint16_t port;
};

static uint16_t
port_of(int fd)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);

	CHECK(getsockname(fd, (struct sockaddr *)&sin, &len) == 0);
	return ntohs(sin.sin_port);
}

static void
pair_open(struct pair *p)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};

	p->listener = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(p->listener >= 0);
	CHECK(bind(p->listener, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	CHECK(listen(p->listener, 8) == 0);
	p->port = port_of(p->listener);
	sin.sin_port = htons(p->port);
	p->client = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(p->client >= 0);
	CHECK(connect(p->client, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	p->accepted = accept(p->listener, NULL, NULL);
	CHECK(p->accepted >= 0);
}

/* Another connection to p's listener: the tarpit's end (the client's in
 * *client). */
static int
accept_another(struct pair *p, int *client)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons(p->port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int a;

	*client = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(*client >= 0);
	CHECK(connect(*client, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	a = accept(p->listener, NULL, NULL);
	CHECK(a >= 0);
	return a;
}

static void
pair_close(struct pair *p)
{
	close(p->listener);
	close(p->accepted);
	close(p->client);
}

static bool
is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static void
test_ends_from_the_socket(void)
{
	struct pair p;
	struct sessions *s;
	struct session_info *si;
	const struct sockaddr_in *c;
	const char *why = NULL;

	pair_open(&p);
	s = sessions_new(8, &p.port, 1);
	CHECK(s);
	CHECK_INT(sessions_open(s, 1, p.accepted, &why), 0);
	si = sessions_find(s, 1);
	CHECK(si);
	c = (const struct sockaddr_in *)&si->ends.client;
	CHECK_INT(c->sin_family, AF_INET);
	CHECK_INT(ntohl(c->sin_addr.s_addr), INADDR_LOOPBACK);
	CHECK_INT(ntohs(c->sin_port), port_of(p.client));
	CHECK_INT(ntohs(((const struct sockaddr_in *)&si->ends.local)->sin_port),
		  p.port);
	/* Not redirected: no original destination. */
	CHECK_INT(si->ends.dst.ss_family, 0);
	CHECK_INT(sessions_count(s), 1);
	CHECK_INT(sessions_close(s, 1), 0);
	CHECK(!sessions_find(s, 1));
	CHECK_INT(sessions_close(s, 1), -ENOENT);
	sessions_free(s);
	pair_close(&p);
}

/* A socket opened once, its session ended, is refused as another's; so
 * is one whose client hung up. */
static void
test_opened_once(void)
{
	struct pair p, q;
	struct sessions *s;
	const char *why = NULL;

	pair_open(&p);
	s = sessions_new(8, &p.port, 1);
	CHECK_INT(sessions_open(s, 1, p.accepted, &why), 0);
	CHECK_INT(sessions_open(s, 2, p.accepted, &why), -EALREADY);
	CHECK_STR(why, "its socket was opened as a session before");
	CHECK_INT(sessions_close(s, 1), 0);
	CHECK_INT(sessions_open(s, 3, p.accepted, &why), -EALREADY);
	/* remembered past many sessions of others */
	for (uint64_t id = 10; id < 10 + 200; id++) {
		int c, a = accept_another(&p, &c);

		CHECK_INT(sessions_open(s, id, a, &why), 0);
		CHECK_INT(sessions_close(s, id), 0);
		close(a);
		close(c);
	}
	CHECK_INT(sessions_open(s, 1000, p.accepted, &why), -EALREADY);
	sessions_free(s);
	/* the client has just hung up (CLOSE_WAIT on the tarpit's end):
	 * a fast client, taken */
	pair_open(&q);
	s = sessions_new(8, &q.port, 1);
	close(q.client);
	q.client = -1;
	for (int t = 0; t < 100; t++) {
		char c;

		if (recv(q.accepted, &c, 1, MSG_DONTWAIT) == 0)
			break;
		usleep(1000);
	}
	CHECK_INT(sessions_open(s, 1, q.accepted, &why), 0);
	close(q.accepted);
	/* the tarpit's end shut (FIN_WAIT2): a connection it ended */
	q.accepted = accept_another(&q, &q.client);
	CHECK(shutdown(q.accepted, SHUT_WR) == 0);
	usleep(20000);
	CHECK_INT(sessions_open(s, 2, q.accepted, &why), -ENOTCONN);
	CHECK_STR(why, "its connection is no longer established");
	sessions_free(s);
	pair_close(&p);
	pair_close(&q);
}

/* Only a connected TCP socket on a tarpit port is a session's. */
static void
test_not_a_session_socket(void)
{
	struct pair p;
	struct sessions *s;
	const char *why = NULL;
	int sv[2], pipefd[2], udp, tcp;

	pair_open(&p);
	s = sessions_new(8, &p.port, 1);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CHECK(pipe(pipefd) == 0);
	udp = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(udp >= 0);
	CHECK_INT(sessions_open(s, 1, sv[0], &why), -EPROTONOSUPPORT);
	CHECK_STR(why, "not a TCP socket");
	CHECK_INT(sessions_open(s, 2, udp, &why), -EPROTONOSUPPORT);
	CHECK_INT(sessions_open(s, 3, pipefd[0], &why), -ENOTSOCK);
	CHECK_INT(sessions_open(s, 4, p.listener, &why), -ENOTCONN);
	CHECK_STR(why, "not connected (a listener, or a socket of nothing)");
	/* The client's end (what greygated's own connection to the MTA
	 * looks like): its port is the kernel's, not the tarpit's. */
	CHECK_INT(sessions_open(s, 5, p.client, &why), -EADDRNOTAVAIL);
	CHECK_STR(why, "not accepted on a tarpit port");
	/* A TCP socket connected to nothing. */
	tcp = socket(AF_INET, SOCK_STREAM, 0);
	CHECK_INT(sessions_open(s, 6, tcp, &why), -ENOTCONN);
	close(tcp);
	CHECK_INT(sessions_count(s), 0);
	/* Refused ones leave the ids free. */
	CHECK_INT(sessions_open(s, 7, p.accepted, &why), 0);
	sessions_free(s);
	close(sv[0]);
	close(sv[1]);
	close(pipefd[0]);
	close(pipefd[1]);
	close(udp);
	pair_close(&p);
}

/* An id is used once: never again after it closed, and never one below
 * the highest opened. The table is bounded. */
static void
test_ids_and_bounds(void)
{
	struct pair p;
	struct sessions *s;
	const char *why = NULL;
	int a[4], c[4];

	pair_open(&p);
	for (int i = 0; i < 4; i++)
		a[i] = accept_another(&p, &c[i]);
	s = sessions_new(2, &p.port, 1);
	CHECK_INT(sessions_open(s, 5, p.accepted, &why), 0);
	CHECK_INT(sessions_open(s, 5, a[0], &why), -EEXIST);
	CHECK_INT(sessions_close(s, 5), 0);
	CHECK_INT(sessions_open(s, 5, a[0], &why), -EEXIST);
	CHECK_INT(sessions_open(s, 4, a[0], &why), -EEXIST);
	CHECK_INT(sessions_open(s, 6, a[0], &why), 0);
	CHECK_INT(sessions_open(s, 7, a[1], &why), 0);
	CHECK_INT(sessions_open(s, 8, a[2], &why), -ENOSPC);
	CHECK_STR(why, "too many sessions open");
	/* A new child numbers from 1 again (its sockets are new). */
	sessions_reset(s);
	CHECK_INT(sessions_count(s), 0);
	CHECK_INT(sessions_open(s, 1, a[3], &why), 0);
	sessions_free(s);
	for (int i = 0; i < 4; i++) {
		close(a[i]);
		close(c[i]);
	}
	pair_close(&p);
}

static struct ipc_record
record(enum ipc_type type, uint64_t session)
{
	struct ipc_record rec;

	ipc_fill_session(&rec, type, session);
	return rec;
}

static struct ipc_record
question(uint64_t session, uint32_t n)
{
	struct tarpit_attempt a = {.session = session,
				   .question = n,
				   .kind = TARPIT_ASK_RCPT,
				   .helo = "c.test",
				   .sender = "a@a.test",
				   .rcpt = "b@b.test"};
	struct ipc_record rec;

	ipc_fill_attempt(&rec, &a);
	return rec;
}

static int
take(struct sessions *s, struct ipc_record rec, int fd, struct ipc_up *up)
{
	return ipc_take_up(s, &rec, sizeof(rec), fd, up);
}

/* What ipc_take_up refuses, and that every descriptor is closed. */
static void
test_take_up(void)
{
	struct pair p;
	struct sessions *s;
	struct ipc_up up;
	struct ipc_record rec;
	struct grey_attempt a;
	int dup_fd;

	pair_open(&p);
	s = sessions_new(8, &p.port, 1);
	/* A question of a session never opened. */
	CHECK_INT(take(s, question(1, 1), -1, &up), -EPROTO);
	CHECK(strstr(up.why, "not open"));
	/* Opened without its socket. */
	CHECK_INT(take(s, record(IPC_OPEN, 1), -1, &up), -EPROTO);
	/* Opened with it: the descriptor is greygated's to close. */
	dup_fd = dup(p.accepted);
	CHECK_INT(take(s, record(IPC_OPEN, 1), dup_fd, &up), IPC_UP_DONE);
	CHECK(!is_open(dup_fd));
	/* A descriptor with a question is refused, and closed. */
	dup_fd = dup(p.accepted);
	CHECK_INT(take(s, question(1, 1), dup_fd, &up), -EPROTO);
	CHECK(!is_open(dup_fd));
	/* The question: who asks comes from the socket. */
	CHECK_INT(take(s, question(1, 1), -1, &up), IPC_UP_ATTEMPT);
	CHECK(up.session == sessions_find(s, 1));
	rec = question(1, 1);
	ipc_attempt_view(&rec.u.attempt, &up.session->ends, &a);
	CHECK_INT(a.client.family, AF_INET);
	CHECK_INT(a.client.bytes[0], 127);
	CHECK_STR(a.rcpt, "b@b.test");
	CHECK_INT(a.path, GREY_PATH_TARPIT);
	/* The same question again, or an older one: refused. */
	CHECK_INT(take(s, question(1, 1), -1, &up), -EPROTO);
	CHECK_INT(take(s, question(1, 0), -1, &up), -EPROTO);
	/* At most SESSION_IN_FLIGHT_MAX waiting; an answer makes room. */
	for (uint32_t n = 2; n <= SESSION_IN_FLIGHT_MAX; n++)
		CHECK_INT(take(s, question(1, n), -1, &up), IPC_UP_ATTEMPT);
	CHECK_INT(take(s, question(1, 10), -1, &up), -EPROTO);
	CHECK(strstr(up.why, "waiting"));
	ipc_answered(s, 1);
	CHECK_INT(take(s, question(1, 11), -1, &up), IPC_UP_ATTEMPT);
	/* Closed: its questions are refused, and so is a second close and
	 * its id used again. */
	CHECK_INT(take(s, record(IPC_CLOSE, 1), -1, &up), IPC_UP_DONE);
	CHECK_INT(take(s, question(1, 13), -1, &up), -EPROTO);
	CHECK_INT(take(s, record(IPC_CLOSE, 1), -1, &up), -EPROTO);
	dup_fd = dup(p.accepted);
	CHECK_INT(take(s, record(IPC_OPEN, 1), dup_fd, &up), -EPROTO);
	CHECK(!is_open(dup_fd));
	/* A record of another size or version. */
	rec = question(1, 20);
	CHECK_INT(ipc_take_up(s, &rec, sizeof(rec) - 1, -1, &up), -EPROTO);
	rec.version = 2;
	CHECK_INT(ipc_take_up(s, &rec, sizeof(rec), -1, &up), -EPROTO);
	/* Types the child may not send. */
	rec = record(IPC_VERDICT, 1);
	CHECK_INT(take(s, rec, -1, &up), -EPROTO);
	rec = record(IPC_CONFIG, 1);
	CHECK_INT(take(s, rec, -1, &up), -EPROTO);
	rec.type = 200;
	CHECK_INT(take(s, rec, -1, &up), -EPROTO);
	sessions_free(s);
	pair_close(&p);
}

static struct ipc_record
event(uint8_t path, uint8_t family)
{
	struct sensor_event ev = {.type = SENSOR_EV_RCPT,
				  .family = family,
				  .path = path,
				  .reply = 250,
				  .helo = "c.test",
				  .from = "a@a.test",
				  .to = "b@b.test"};
	struct ipc_record rec;

	ev.client[0] = 203;
	ipc_fill_event(&rec, &ev);
	return rec;
}

/* The sensor speaks for the fast path only: an event of no path (a
 * replay's, which the policy would greylist and pass) or of the tarpit's
 * is refused. Strings are ended in place. */
static void
test_events(void)
{
	struct sessions *s = sessions_new(8, (const uint16_t[]){2525}, 1);
	struct ipc_up up;
	struct ipc_record rec;

	CHECK_INT(take(s, event(SENSOR_PATH_FAST, AF_INET), -1, &up),
		  IPC_UP_EVENT);
	CHECK_INT(take(s, event(SENSOR_PATH_UNKNOWN, AF_INET), -1, &up),
		  -EPROTO);
	CHECK(strstr(up.why, "fast path"));
	CHECK_INT(take(s, event(SENSOR_PATH_TARPIT, AF_INET), -1, &up),
		  -EPROTO);
	CHECK_INT(take(s, event(SENSOR_PATH_FAST, 0), -1, &up), -EPROTO);
	rec = event(SENSOR_PATH_FAST, AF_INET6);
	memset(rec.u.ev.to, 'x', sizeof(rec.u.ev.to));
	CHECK_INT(ipc_take_up(s, &rec, sizeof(rec), -1, &up), IPC_UP_EVENT);
	CHECK_INT(strlen(rec.u.ev.to), sizeof(rec.u.ev.to) - 1);
	rec = event(SENSOR_PATH_FAST, AF_INET);
	rec.u.ev.type = 99;
	CHECK_INT(ipc_take_up(s, &rec, sizeof(rec), -1, &up), -EPROTO);
	sessions_free(s);
}

/* A handed session's later RCPT names the session: its addresses are
 * the session's socket's, whatever the child wrote; a session not open,
 * or open but not handed to the MTA, or an event of it other than a
 * RCPT, is refused. */
static void
test_session_events(void)
{
	struct pair p;
	struct sessions *s;
	struct ipc_up up;
	struct ipc_record rec;
	struct sensor_event ev;
	int dup_fd;

	pair_open(&p);
	s = sessions_new(8, &p.port, 1);
	rec = event(SENSOR_PATH_FAST, AF_INET);
	rec.u.ev.session = 1;
	CHECK_INT(take(s, rec, -1, &up), -EPROTO);
	CHECK(strstr(up.why, "not open"));
	dup_fd = dup(p.accepted);
	CHECK_INT(take(s, record(IPC_OPEN, 1), dup_fd, &up), IPC_UP_DONE);
	CHECK_INT(take(s, rec, -1, &up), -EPROTO);
	CHECK(strstr(up.why, "not handed"));
	sessions_find(s, 1)->handed = true;
	rec.u.ev.type = SENSOR_EV_HELO;
	CHECK_INT(take(s, rec, -1, &up), -EPROTO);
	/* The child names 203.0.0.0 (v6, even): greygated reads 127.0.0.1
	 * and the client's port from the socket. */
	rec = event(SENSOR_PATH_FAST, AF_INET6);
	rec.u.ev.session = 1;
	rec.u.ev.client_port = 1;
	CHECK_INT(ipc_take_up(s, &rec, sizeof(rec), -1, &up), IPC_UP_EVENT);
	ipc_event_view(&rec.u.ev, &ev);
	CHECK_INT(ev.family, AF_INET);
	CHECK_INT(ev.client[0], 127);
	CHECK_INT(ev.client[3], 1);
	CHECK_INT(ev.client_port, port_of(p.client));
	CHECK_INT(ev.server_port, p.port);
	CHECK_INT(ev.session, 1);
	/* Closed: refused again. */
	CHECK_INT(take(s, record(IPC_CLOSE, 1), -1, &up), IPC_UP_DONE);
	rec = event(SENSOR_PATH_FAST, AF_INET);
	rec.u.ev.session = 1;
	CHECK_INT(take(s, rec, -1, &up), -EPROTO);
	sessions_free(s);
	pair_close(&p);
}

int
main(void)
{
	RUN(test_ends_from_the_socket);
	RUN(test_not_a_session_socket);
	RUN(test_opened_once);
	RUN(test_ids_and_bounds);
	RUN(test_take_up);
	RUN(test_events);
	RUN(test_session_events);
	return 0;
}
