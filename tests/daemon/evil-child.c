// SPDX-License-Identifier: GPL-2.0-or-later
/* A compromised child, for tests/integration/test-compromised-child.sh.
 * greygated-seam (a build of greygated for the tests only) runs it in its
 * child's place when GREYGATE_TEST_CHILD names it. It starts the real
 * child behind itself (GREYGATE_REAL_CHILD: a greygated binary, run with
 * --child, on a socket pair of ours and the tarpit's listeners), relays
 * every record both ways with its descriptors, so that real senders are
 * served as ever, and for each line written to the FIFO GG_EVIL_CTL sends
 * greygated forged records of its own, as a child whose parser was taken
 * over could. Each command's line goes to GG_EVIL_LOG once done.
 *
 * Commands: v2-attempt, attempt-unknown, attempt-closed, open-reuse,
 * open-nofd, open-unix, open-listener, open-two, fd-on-attempt,
 * double-ask, out-of-order, extremes, "event PATH ADDR RCPT",
 * "session-event live|closed ADDR RCPT" (a handed session's later RCPT,
 * naming the newest session open or the last closed), "flood N",
 * "open-two N" (open-two N times), stop-reading, start-reading, linger
 * (a client's connection accepted by itself before the real child could,
 * the client reading nothing: its send buffer filled, SO_LINGER {1, 40}
 * set, opened as a session and its own copy closed, so that greygated's
 * close is the last). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "ipc.h"

#define LIVE_MAX 64

static int up_sock = IPC_FD_SOCK; /* to greygated */
static int child_sock = -1;       /* to the real child */
static FILE *log_file;
/* Sessions the real child opened (a copy of each socket), and the last
 * one it closed. */
static struct {
	uint64_t id;
	int fd;
} live[LIVE_MAX];
static int nlive;
static uint64_t last_closed, max_id;
static int last_closed_fd = -1;

static void
die(const char *what)
{
	fprintf(stderr, "evil-child: %s: %s\n", what, strerror(errno));
	exit(3);
}

/* One message and the descriptors that came with it (at most 4). */
static ssize_t
recv_fds(int sock, void *buf, size_t len, int *fds, int *nfds)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = {buf, len};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = control.buf,
			     .msg_controllen = sizeof(control.buf)};
	ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);

	*nfds = 0;
	if (n < 0)
		return n;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm;
	     cm = CMSG_NXTHDR(&msg, cm))
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SCM_RIGHTS) {
			*nfds = (int)((cm->cmsg_len - CMSG_LEN(0)) /
				      sizeof(int));
			memcpy(fds, CMSG_DATA(cm), *nfds * sizeof(int));
		}
	return n;
}

static void
send_fds(int sock, const void *buf, size_t len, const int *fds, int nfds)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = {(void *)buf, len};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

	if (nfds > 0) {
		struct cmsghdr *cm;

		memset(&control, 0, sizeof(control));
		msg.msg_control = control.buf;
		msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
	}
	if (sendmsg(sock, &msg, MSG_NOSIGNAL) < 0 && errno != EPIPE)
		die("sendmsg");
}

/* What the real child says of its sessions, remembered for forging. */
static void
observe(const struct ipc_record *rec, size_t n, int fd)
{
	if (n != sizeof(*rec))
		return;
	if (rec->type == IPC_OPEN && fd >= 0) {
		if (rec->u.session.session > max_id)
			max_id = rec->u.session.session;
		if (nlive == LIVE_MAX) {
			close(live[0].fd);
			memmove(live, live + 1, sizeof(live[0]) * --nlive);
		}
		live[nlive].id = rec->u.session.session;
		live[nlive++].fd = dup(fd);
	} else if (rec->type == IPC_CLOSE) {
		for (int i = 0; i < nlive; i++) {
			if (live[i].id != rec->u.session.session)
				continue;
			if (last_closed_fd >= 0)
				close(last_closed_fd);
			last_closed = live[i].id;
			last_closed_fd = live[i].fd;
			live[i] = live[--nlive];
			break;
		}
	}
}

/* A record from one side to the other, as it came. */
static bool
relay(int from, int to, bool up)
{
	struct ipc_record rec;
	int fds[4], nfds;
	ssize_t n = recv_fds(from, &rec, sizeof(rec), fds, &nfds);

	if (n <= 0)
		return false;
	if (up)
		observe(&rec, (size_t)n, nfds ? fds[0] : -1);
	send_fds(to, &rec, (size_t)n, fds, nfds);
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	return true;
}

static void
forge(const struct ipc_record *rec, const int *fds, int nfds)
{
	send_fds(up_sock, rec, sizeof(*rec), fds, nfds);
}

static struct ipc_record
attempt(uint64_t session, uint32_t question, const char *rcpt)
{
	struct tarpit_attempt a = {.session = session,
				   .question = question,
				   .kind = TARPIT_ASK_RCPT,
				   .helo = "evil.test",
				   .sender = "x@evil.test",
				   .rcpt = rcpt};
	struct ipc_record rec;

	ipc_fill_attempt(&rec, &a);
	rec.version = IPC_VERSION;
	return rec;
}

static struct ipc_record
session_record(enum ipc_type type, uint64_t session)
{
	struct ipc_record rec;

	ipc_fill_session(&rec, type, session);
	return rec;
}

/* The socket of the newest session the real child has open (-1 if
 * none). */
static int
newest_live(void)
{
	return nlive ? live[nlive - 1].fd : -1;
}

static void
event(int path, const char *addr, const char *rcpt, uint64_t session)
{
	struct sensor_event ev = {.type = SENSOR_EV_RCPT,
				  .path = (enum sensor_path)path,
				  .reply = 250,
				  .helo = "evil.test",
				  .from = "x@evil.test",
				  .to = rcpt};
	struct ipc_record rec;

	ev.family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	inet_pton(ev.family, addr, ev.client);
	ev.session = session;
	gettimeofday(&ev.ts, NULL);
	ipc_fill_event(&rec, &ev);
	forge(&rec, NULL, 0);
}

static void
extremes(void)
{
	struct ipc_record rec;
	char big[sizeof(rec) + 100];

	rec = attempt(UINT64_MAX, UINT32_MAX, "b@b.test");
	rec.u.attempt.kind = 255;
	memset(rec.u.attempt.helo, 'A', sizeof(rec.u.attempt.helo) +
						 sizeof(rec.u.attempt.from) +
						 sizeof(rec.u.attempt.to));
	forge(&rec, NULL, 0);
	rec = session_record(IPC_OPEN, 0);
	forge(&rec, NULL, 0);
	rec = session_record(IPC_CLOSE, UINT64_MAX);
	forge(&rec, NULL, 0);
	rec = session_record(IPC_LOG, 0);
	rec.u.log.level = 255;
	forge(&rec, NULL, 0);
	memset(&rec, 0xff, sizeof(rec));
	forge(&rec, NULL, 0);
	rec = session_record(0x7fff, 0);
	forge(&rec, NULL, 0);
	rec = session_record(IPC_EVENT, 0);
	rec.u.ev.family = 255;
	rec.u.ev.type = SENSOR_EV_RCPT;
	rec.u.ev.path = SENSOR_PATH_FAST;
	forge(&rec, NULL, 0);
	/* Too short, too long. */
	rec = attempt(max_id, 1, "b@b.test");
	send_fds(up_sock, &rec, 10, NULL, 0);
	memset(big, 0, sizeof(big));
	memcpy(big, &rec, sizeof(rec));
	send_fds(up_sock, big, sizeof(big), NULL, 0);
}

/* The linger command (see the top): a client's connection to the
 * tarpit, accepted here before the real child takes it (tried for up to
 * LINGER_WAIT_SEC, the test's clients connecting meanwhile: on a busy
 * machine their start alone may take seconds). Return: 0, or -1. */
#define LINGER_WAIT_SEC 20
static int
lingering_session(void)
{
	static char chunk[65536];
	struct timeval t0, t;
	struct linger lg = {1, 40};
	struct ipc_record rec;
	struct pollfd listener = {.fd = IPC_FD_LISTEN, .events = POLLIN};
	int s = -1;

	gettimeofday(&t0, NULL);
	do {
		/* (woken with the real child: whichever accepts first) */
		if (poll(&listener, 1, 100) > 0)
			s = accept4(IPC_FD_LISTEN, NULL, NULL, SOCK_NONBLOCK);
		gettimeofday(&t, NULL);
	} while (s < 0 && (t.tv_sec - t0.tv_sec) < LINGER_WAIT_SEC);
	if (s < 0)
		return -1;
	/* (its client reads nothing: the buffers fill) */
	for (int i = 0; i < 1000; i++)
		if (send(s, chunk, sizeof(chunk), MSG_DONTWAIT) <= 0)
			break;
	setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	rec = session_record(IPC_OPEN, max_id + 1);
	forge(&rec, &s, 1);
	close(s);
	return 0;
}

static void
command(char *line)
{
	struct ipc_record rec;
	char rcpt[128], addr[64];
	int path, n, fds[2], sv[2];

	line[strcspn(line, "\r\n")] = 0;
	if (!strcmp(line, "v2-attempt")) {
		/* The old layout: an attempt naming its client, 127.0.0.1. */
		memset(&rec, 0, sizeof(rec));
		rec.version = 2;
		rec.type = IPC_ATTEMPT;
		((uint8_t *)&rec.u)[22] = AF_INET;
		memcpy((uint8_t *)&rec.u + 24, "\x7f\0\0\x01", 4);
		forge(&rec, NULL, 0);
	} else if (!strcmp(line, "attempt-unknown")) {
		rec = attempt(999999999, 1, "bob@example.org");
		forge(&rec, NULL, 0);
	} else if (!strcmp(line, "attempt-closed")) {
		rec = attempt(last_closed, 1000, "bob@example.org");
		forge(&rec, NULL, 0);
	} else if (!strcmp(line, "open-reuse")) {
		rec = session_record(IPC_OPEN, last_closed);
		fds[0] = last_closed_fd;
		forge(&rec, fds, last_closed_fd >= 0);
	} else if (!strcmp(line, "open-nofd")) {
		rec = session_record(IPC_OPEN, max_id + 1000);
		forge(&rec, NULL, 0);
	} else if (!strcmp(line, "open-unix")) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
			die("socketpair");
		rec = session_record(IPC_OPEN, max_id + 1001);
		forge(&rec, sv, 1);
		close(sv[0]);
		close(sv[1]);
	} else if (!strcmp(line, "open-listener")) {
		rec = session_record(IPC_OPEN, max_id + 1002);
		fds[0] = IPC_FD_LISTEN;
		forge(&rec, fds, 1);
	} else if (!strcmp(line, "open-two")) {
		rec = session_record(IPC_OPEN, max_id + 1003);
		fds[0] = newest_live() >= 0 ? newest_live() : IPC_FD_LISTEN;
		fds[1] = IPC_FD_LISTEN;
		forge(&rec, fds, 2);
	} else if (!strcmp(line, "fd-on-attempt")) {
		rec = attempt(nlive ? live[nlive - 1].id : 1, 1000,
			      "bob@example.org");
		fds[0] = newest_live() >= 0 ? newest_live() : IPC_FD_LISTEN;
		forge(&rec, fds, 1);
	} else if (!strcmp(line, "double-ask")) {
		rec = attempt(nlive ? live[nlive - 1].id : 1, 100000,
			      "bob@example.org");
		forge(&rec, NULL, 0);
		forge(&rec, NULL, 0);
	} else if (!strcmp(line, "out-of-order")) {
		rec = session_record(IPC_CLOSE, max_id + 2000);
		forge(&rec, NULL, 0);
		rec = attempt(max_id + 2001, 1, "bob@example.org");
		forge(&rec, NULL, 0);
	} else if (!strcmp(line, "extremes")) {
		extremes();
	} else if (!strcmp(line, "linger")) {
		if (lingering_session() < 0) {
			fprintf(log_file, "failed: %s\n", line);
			fflush(log_file);
			return;
		}
	} else if (sscanf(line, "event %d %63s %127s", &path, addr, rcpt) ==
		   3) {
		event(path, addr, rcpt, 0);
	} else if (sscanf(line, "session-event live %63s %127s", addr,
			  rcpt) == 2) {
		event(2, addr, rcpt, nlive ? live[nlive - 1].id : 1);
	} else if (sscanf(line, "session-event closed %63s %127s", addr,
			  rcpt) == 2) {
		event(2, addr, rcpt, last_closed);
	} else if (sscanf(line, "open-two %d", &n) == 1) {
		for (int i = 0; i < n; i++) {
			rec = session_record(IPC_OPEN, max_id + 5000 + i);
			fds[0] = IPC_FD_LISTEN;
			fds[1] = IPC_FD_LISTEN;
			forge(&rec, fds, 2);
		}
	} else if (sscanf(line, "flood %d", &n) == 1) {
		rec = attempt(999999999, 1, "bob@example.org");
		for (int i = 0; i < n; i++)
			forge(&rec, NULL, 0);
	} else if (strcmp(line, "stop-reading") &&
		   strcmp(line, "start-reading")) {
		fprintf(log_file, "unknown: %s\n", line);
		fflush(log_file);
		return;
	}
	fprintf(log_file, "done: %s\n", line);
	fflush(log_file);
}

/* The real child, behind us: its settings are greygated's, but its
 * parent is us. */
static void
start_real_child(void)
{
	const char *exe = getenv("GREYGATE_REAL_CHILD");
	struct ipc_record rec;
	int sv[2];
	pid_t pid;

	if (recv(up_sock, &rec, sizeof(rec), 0) != (ssize_t)sizeof(rec) ||
	    rec.type != IPC_CONFIG)
		die("the settings");
	rec.u.config.parent_pid = (int32_t)getpid();
	if (!exe || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
			       sv) < 0)
		die("GREYGATE_REAL_CHILD, socketpair");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		char *const argv[] = {"greygated", "--child", NULL};

		if (dup2(sv[1], IPC_FD_SOCK) < 0)
			_exit(127);
		execv(exe, argv);
		_exit(127);
	}
	close(sv[1]);
	child_sock = sv[0];
	if (send(child_sock, &rec, sizeof(rec), 0) != (ssize_t)sizeof(rec))
		die("send the settings");
}

int
main(void)
{
	const char *ctl = getenv("GG_EVIL_CTL"), *log = getenv("GG_EVIL_LOG");
	char line[512];
	size_t have = 0;
	bool reading = true;
	int ctl_fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGPIPE, SIG_IGN);
	if (!ctl || !log)
		die("GG_EVIL_CTL and GG_EVIL_LOG");
	/* Read and write: the FIFO never reads as ended. */
	ctl_fd = open(ctl, O_RDWR | O_CLOEXEC);
	log_file = fopen(log, "a");
	if (ctl_fd < 0 || !log_file)
		die(ctl);
	start_real_child();
	for (;;) {
		struct pollfd p[3] = {{up_sock, reading ? POLLIN : 0, 0},
				      {child_sock, POLLIN, 0},
				      {ctl_fd, POLLIN, 0}};

		if (poll(p, 3, -1) < 0 && errno != EINTR)
			die("poll");
		if ((p[0].revents & (POLLIN | POLLHUP)) &&
		    !relay(up_sock, child_sock, false))
			return 0;
		if ((p[1].revents & (POLLIN | POLLHUP)) &&
		    !relay(child_sock, up_sock, true))
			return 0;
		if (p[2].revents & POLLIN) {
			ssize_t n = read(ctl_fd, line + have,
					 sizeof(line) - 1 - have);
			char *nl;

			if (n <= 0)
				continue;
			have += (size_t)n;
			line[have] = 0;
			while ((nl = strchr(line, '\n'))) {
				*nl = 0;
				if (!strcmp(line, "stop-reading"))
					reading = false;
				else if (!strcmp(line, "start-reading"))
					reading = true;
				command(line);
				have -= (size_t)(nl + 1 - line);
				memmove(line, nl + 1, have + 1);
			}
		}
	}
}
