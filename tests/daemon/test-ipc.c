// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the records between greygated and its child (daemon/ipc/ipc.h)
 * as they travel, on a real SOCK_SEQPACKET pair as greygated makes it:
 * a record arrives whole with the one descriptor sent beside it (opened
 * close-on-exec); a message with two descriptors keeps the first and
 * says more came (the kernel closed the others); a longer message than a
 * record is said longer, a shorter one short, and both are refused by
 * ipc_take_up; a batch reads what waits, each with its own descriptor;
 * nothing waiting is -EAGAIN, the other end gone is 0. Each record
 * made on one side reads the same on the other (verdict, attempt,
 * event, session), strings cut at their field's end; a log line of no
 * level is refused, one without its end is ended in place; a fast-path
 * event becomes the decider's attempt only when it is one. A session's
 * socket whose child set SO_LINGER, with bytes its client will not read,
 * is closed by ipc_take_up at once (issue 55: greygated waited the
 * linger's seconds). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attempt.h"
#include "check.h"
#include "ipc.h"
#include "sessions.h"

static int sv[2]; /* [0] greygated's end, [1] the child's */

static void
pair_open(void)
{
	CHECK_INT(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
}

static void
pair_close(void)
{
	close(sv[0]);
	close(sv[1]);
}

static bool
is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/* Sends len bytes of rec on sock, with the descriptors fds (n of them)
 * beside it. */
static void
send_with(int sock, const void *rec, size_t len, const int *fds, size_t n)
{
	char control[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = {(void *)rec, len};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

	if (n) {
		struct cmsghdr *cm;

		memset(control, 0, sizeof(control));
		m.msg_control = control;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
	}
	CHECK(sendmsg(sock, &m, 0) == (ssize_t)len);
}

/* A record with one descriptor, sent the way greygated sends a verdict
 * with its hand-off connection (ipc_attach_fd), arrives with it. */
static void
test_record_with_descriptor(void)
{
	struct tarpit_verdict v = {.action = TARPIT_PASS,
	                           .wait_sec = 0,
	                           .handoff_fd = 7, /* (only its presence) */
	                           .greeted = true};
	struct ipc_record out, in;
	union ipc_fd_control control;
	struct iovec iov = {&out, sizeof(out)};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	int p[2], fd;
	bool extra;

	pair_open();
	CHECK_INT(pipe(p), 0);
	ipc_fill_verdict(&out, 42, 3, &v);
	ipc_attach_fd(&m, &control, p[0]);
	CHECK(sendmsg(sv[0], &m, 0) == (ssize_t)sizeof(out));
	CHECK_INT(ipc_recv(sv[1], &in, &fd, &extra), sizeof(in));
	CHECK(!extra);
	CHECK(fd >= 0 && fd != p[0]);
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	CHECK_INT(in.version, IPC_VERSION);
	CHECK_INT(in.type, IPC_VERDICT);
	CHECK_INT(in.u.verdict.session, 42);
	CHECK_INT(in.u.verdict.question, 3);
	CHECK_INT(in.u.verdict.action, TARPIT_PASS);
	CHECK_INT(in.u.verdict.handoff, 1);
	CHECK_INT(in.u.verdict.greeted, 1);
	/* the very pipe: what goes in one end comes out of the other */
	CHECK_INT(write(p[1], "x", 1), 1);
	char c = 0;
	CHECK_INT(read(fd, &c, 1), 1);
	CHECK_INT(c, 'x');
	close(fd);
	close(p[0]);
	close(p[1]);
	/* a greylisting verdict carries its seconds, and no connection */
	v = (struct tarpit_verdict){.action = TARPIT_GREYLIST,
	                            .wait_sec = 299,
	                            .handoff_fd = -1};
	ipc_fill_verdict(&out, 43, 1, &v);
	send_with(sv[0], &out, sizeof(out), NULL, 0);
	CHECK_INT(ipc_recv(sv[1], &in, &fd, &extra), sizeof(in));
	CHECK_INT(fd, -1);
	CHECK_INT(in.u.verdict.wait_sec, 299);
	CHECK_INT(in.u.verdict.handoff, 0);
	pair_close();
}

/* Descriptors open in this process. */
static int
open_fds(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += is_open(fd);
	return n;
}

/* Two descriptors with one record: the first is kept, more is said, the
 * second closed (a child sending two at a time must not fill greygated's
 * table), and ipc_take_up closes the first with a record that takes
 * none. */
static void
test_two_descriptors(void)
{
	struct ipc_record rec, in;
	struct sessions *s = sessions_new(8, (const uint16_t[]){2525}, 1);
	struct ipc_up up;
	int p[2], q[2], fd;
	bool extra;

	int before;

	pair_open();
	CHECK_INT(pipe(p), 0);
	CHECK_INT(pipe(q), 0);
	before = open_fds();
	ipc_fill_session(&rec, IPC_CLOSE, 9);
	send_with(sv[1], &rec, sizeof(rec), (int[]){p[0], q[0]}, 2);
	CHECK_INT(ipc_recv(sv[0], &in, &fd, &extra), sizeof(in));
	CHECK(fd >= 0);
	CHECK(extra);
	CHECK_INT(ipc_take_up(s, &in, sizeof(in), fd, &up), -EPROTO);
	CHECK(strstr(up.why, "descriptor"));
	CHECK(!is_open(fd));
	CHECK_INT(open_fds(), before);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	sessions_free(s);
	pair_close();
}

/* Out of descriptors (issue 57: the honest child was blamed for "more
 * than one descriptor"): a record whose one descriptor the receiver's
 * full table cannot take says IPC_FD_LOST, not extra. In a process of
 * its own, its table filled. */
static void
test_descriptor_lost(void)
{
	struct ipc_record rec, in;
	struct rlimit lim;
	pid_t pid;
	int status, p[2];

	pair_open();
	CHECK_INT(pipe(p), 0);
	ipc_fill_session(&rec, IPC_OPEN, 7);
	send_with(sv[1], &rec, sizeof(rec), (int[]){p[0]}, 1);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int fd;
		bool extra;

		/* every descriptor up to the limit taken */
		lim.rlim_cur = lim.rlim_max = 64;
		if (setrlimit(RLIMIT_NOFILE, &lim) < 0)
			_exit(10);
		while (dup(0) >= 0)
			;
		if (errno != EMFILE)
			_exit(11);
		if (ipc_recv(sv[0], &in, &fd, &extra) != sizeof(in))
			_exit(12);
		_exit(fd == IPC_FD_LOST && !extra ? 0 : 13);
	}
	CHECK_INT(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_INT(WEXITSTATUS(status), 0);
	close(p[0]);
	close(p[1]);
	pair_close();
}

/* A message longer than a record is said longer, one shorter says its
 * length; ipc_take_up refuses both. */
static void
test_lengths(void)
{
	struct sessions *s = sessions_new(8, (const uint16_t[]){2525}, 1);
	char big[sizeof(struct ipc_record) + 100];
	struct ipc_record rec, in;
	struct ipc_up up;
	ssize_t n;
	int fd;
	bool extra;

	pair_open();
	memset(big, 0, sizeof(big));
	ipc_fill_session(&rec, IPC_CLOSE, 1);
	memcpy(big, &rec, sizeof(rec));
	send_with(sv[1], big, sizeof(big), NULL, 0);
	n = ipc_recv(sv[0], &in, &fd, &extra);
	CHECK_INT(n, sizeof(in) + 1);
	CHECK_INT(ipc_take_up(s, &in, (size_t)n, fd, &up), -EPROTO);
	CHECK(strstr(up.why, "size or version"));
	send_with(sv[1], &rec, 10, NULL, 0);
	n = ipc_recv(sv[0], &in, &fd, &extra);
	CHECK_INT(n, 10);
	CHECK_INT(ipc_take_up(s, &in, (size_t)n, fd, &up), -EPROTO);
	/* nothing waits: -EAGAIN; the child gone: 0 */
	CHECK_INT(ipc_recv(sv[0], &in, &fd, &extra), -EAGAIN);
	close(sv[1]);
	CHECK_INT(ipc_recv(sv[0], &in, &fd, &extra), 0);
	close(sv[0]);
	sessions_free(s);
}

/* A batch reads every record that waits, up to IPC_BATCH, each with its
 * own descriptor. */
static void
test_batch(void)
{
	static struct ipc_batch b;
	struct ipc_record rec;
	int p[2];
	int n, total = 0;

	pair_open();
	CHECK_INT(pipe(p), 0);
	for (uint64_t i = 1; i <= IPC_BATCH + 6; i++) {
		ipc_fill_session(&rec, IPC_OPEN, i);
		send_with(sv[1], &rec, sizeof(rec), &p[0], i == 5 ? 1 : 0);
	}
	n = ipc_recv_batch(sv[0], &b);
	CHECK_INT(n, IPC_BATCH);
	for (int i = 0; i < n; i++) {
		CHECK_INT(b.len[i], sizeof(rec));
		CHECK_INT(b.rec[i].u.session.session, i + 1);
		CHECK_INT(b.fd[i] >= 0, i == 4);
		CHECK(!b.extra[i]);
	}
	close(b.fd[4]);
	total += n;
	n = ipc_recv_batch(sv[0], &b);
	CHECK_INT(n, 6);
	CHECK_INT(b.rec[5].u.session.session, IPC_BATCH + 6);
	total += n;
	CHECK_INT(total, IPC_BATCH + 6);
	CHECK_INT(ipc_recv_batch(sv[0], &b), -EAGAIN);
	close(p[0]);
	close(p[1]);
	pair_close();
}

/* What the child makes reads the same in greygated; strings longer than
 * their field are cut there, never run into the next. */
static void
test_round_trips(void)
{
	char long_rcpt[GREY_ADDR_MAX + 40];
	struct tarpit_attempt a = {.session = 5,
	                           .question = 2,
	                           .kind = TARPIT_ASK_STARTTLS,
	                           .helo = "mx.sender.test",
	                           .sender = "alice@sender.test"};
	struct sensor_event ev = {.type = SENSOR_EV_HELO,
	                          .family = AF_INET6,
	                          .path = SENSOR_PATH_FAST,
	                          .reply = 250,
	                          .client_port = 40000,
	                          .server_port = 25,
	                          .helo = "c.test",
	                          .from = "",
	                          .to = "",
	                          .session = 0};
	struct sensor_event back;
	struct ipc_record rec;

	memset(long_rcpt, 'r', sizeof(long_rcpt) - 1);
	long_rcpt[sizeof(long_rcpt) - 1] = 0;
	a.rcpt = long_rcpt;
	ipc_fill_attempt(&rec, &a);
	CHECK_INT(rec.type, IPC_ATTEMPT);
	CHECK_INT(rec.u.attempt.session, 5);
	CHECK_INT(rec.u.attempt.question, 2);
	CHECK_INT(rec.u.attempt.kind, TARPIT_ASK_STARTTLS);
	CHECK_STR(rec.u.attempt.helo, "mx.sender.test");
	CHECK_STR(rec.u.attempt.from, "alice@sender.test");
	CHECK_INT(strlen(rec.u.attempt.to), sizeof(rec.u.attempt.to) - 1);

	ev.client[0] = 0x20;
	ev.client[1] = 0x01;
	ev.client[15] = 7;
	ev.ts.tv_sec = 1700000000;
	ev.ts.tv_usec = 123456;
	ipc_fill_event(&rec, &ev);
	ipc_event_view(&rec.u.ev, &back);
	CHECK_INT(back.type, SENSOR_EV_HELO);
	CHECK_INT(back.family, AF_INET6);
	CHECK_INT(back.path, SENSOR_PATH_FAST);
	CHECK_INT(back.client[15], 7);
	CHECK_INT(back.client_port, 40000);
	CHECK_INT(back.server_port, 25);
	CHECK_INT(back.ts.tv_sec, 1700000000);
	CHECK_INT(back.ts.tv_usec, 123456);
	CHECK_STR(back.helo, "c.test");
	CHECK_INT(back.session, 0);
}

/* A log line: a level greygated knows (error, warning, info), its text
 * ended in place whatever the child wrote. */
static void
test_log_lines(void)
{
	struct sessions *s = sessions_new(8, (const uint16_t[]){2525}, 1);
	struct ipc_record rec;
	struct ipc_up up;

	memset(&rec, 0, sizeof(rec));
	rec.version = IPC_VERSION;
	rec.type = IPC_LOG;
	rec.u.log.level = 1;
	memset(rec.u.log.text, 'y', sizeof(rec.u.log.text));
	CHECK_INT(ipc_take_up(s, &rec, sizeof(rec), -1, &up), IPC_UP_LOG);
	CHECK_INT(strlen(rec.u.log.text), sizeof(rec.u.log.text) - 1);
	rec.u.log.level = 3;
	CHECK_INT(ipc_take_up(s, &rec, sizeof(rec), -1, &up), -EPROTO);
	CHECK(strstr(up.why, "no level"));
	rec.type = IPC_STATS;
	CHECK_INT(ipc_take_up(s, &rec, sizeof(rec), -1, &up), IPC_UP_STATS);
	sessions_free(s);
}

/* A fast-path event as the decider's attempt (decide/attempt.h): a
 * RCPT always; a STARTTLS only once answered 220 (the session is in TLS
 * from there), except off the fast path; an EHLO answered 2xx is a
 * visit, one refused is nothing; anything else is nothing. */
static void
test_events_as_attempts(void)
{
	struct sensor_event ev = {.type = SENSOR_EV_RCPT,
	                          .family = AF_INET,
	                          .path = SENSOR_PATH_FAST,
	                          .reply = 450,
	                          .helo = "h.test",
	                          .from = "a@s.test",
	                          .to = "b@example.org"};
	struct grey_attempt a;

	ev.client[0] = 198;
	ev.client[3] = 7;
	CHECK(attempt_of_event(&ev, 1700000000, &a));
	CHECK_INT(a.kind, GREY_ATTEMPT_RCPT);
	CHECK_INT(a.now, 1700000000);
	CHECK_INT(a.path, GREY_PATH_FAST);
	CHECK_INT(a.reply, 450);
	CHECK_INT(a.client.family, AF_INET);
	CHECK_INT(a.client.bytes[3], 7);
	CHECK_STR(a.rcpt, "b@example.org");
	ev.type = SENSOR_EV_STARTTLS;
	ev.reply = 454;
	CHECK(!attempt_of_event(&ev, 0, &a));
	ev.reply = 220;
	CHECK(attempt_of_event(&ev, 0, &a));
	CHECK_INT(a.kind, GREY_ATTEMPT_STARTTLS);
	ev.path = SENSOR_PATH_UNKNOWN; /* (a replay's: any answer) */
	ev.reply = 0;
	CHECK(attempt_of_event(&ev, 0, &a));
	CHECK_INT(a.path, GREY_PATH_UNKNOWN);
	ev.path = SENSOR_PATH_FAST;
	ev.type = SENSOR_EV_HELO;
	ev.reply = 250;
	CHECK(attempt_of_event(&ev, 0, &a));
	CHECK_INT(a.kind, GREY_ATTEMPT_VISIT);
	ev.reply = 554;
	CHECK(!attempt_of_event(&ev, 0, &a));
	ev.reply = 0; /* (no answer seen) */
	CHECK(!attempt_of_event(&ev, 0, &a));
	ev.type = 99;
	ev.reply = 250;
	CHECK(!attempt_of_event(&ev, 0, &a));
}

/* A TCP connection on loopback whose client reads nothing: the server's
 * end (returned) with its send buffer full; *client its client's end,
 * *port the port it was accepted on. */
static int
stuck_connection(int *client, uint16_t *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
	                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int lst = socket(AF_INET, SOCK_STREAM, 0), srv, small = 4096;
	static char chunk[65536];

	CHECK(lst >= 0);
	CHECK_INT(bind(lst, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK_INT(listen(lst, 1), 0);
	CHECK_INT(getsockname(lst, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	*client = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(*client >= 0);
	setsockopt(*client, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	CHECK_INT(connect(*client, (struct sockaddr *)&a, sizeof(a)), 0);
	srv = accept(lst, NULL, NULL);
	CHECK(srv >= 0);
	close(lst);
	for (int i = 0; i < 10000; i++)
		if (send(srv, chunk, sizeof(chunk), MSG_DONTWAIT) < 0)
			break;
	return srv;
}

static void
test_lingering_socket(void)
{
	struct linger lg = {1, 3};
	struct ipc_record rec;
	struct ipc_up up;
	uint16_t port;
	int client, srv = stuck_connection(&client, &port);
	struct sessions *s = sessions_new(8, &port, 1);
	double t0;

	CHECK(s);
	CHECK_INT(setsockopt(srv, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	ipc_fill_session(&rec, IPC_OPEN, 1);
	t0 = check_now_sec();
	/* (the child's copy closed: greygated's is the last) */
	CHECK_INT(ipc_take_up(s, &rec, sizeof(rec), srv, &up), IPC_UP_DONE);
	CHECK(check_now_sec() - t0 < 1.0);
	CHECK(sessions_find(s, 1));
	close(client);
	sessions_free(s);
}

int
main(void)
{
	RUN(test_record_with_descriptor);
	RUN(test_two_descriptors);
	RUN(test_descriptor_lost);
	RUN(test_lengths);
	RUN(test_batch);
	RUN(test_round_trips);
	RUN(test_log_lines);
	RUN(test_events_as_attempts);
	RUN(test_lingering_socket);
	return 0;
}
