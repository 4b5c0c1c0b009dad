// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of greygatectl's socket (daemon/control/control.h) on a real unix socket
 * with a fake clock: a request's arguments reach the command as given;
 * what is not a request (no arguments, an argument not ended, too many)
 * is refused; a long answer comes whole and in order, made in pieces
 * while it is read, and a client that does not read it holds up nobody
 * else; an answer with nothing yet waits until woken; a request not
 * ended in time is dropped. Who may ask: root, a member of the admin
 * group, never the child's user even in that group (real processes of
 * those users, when run as root). A socket that answers is another
 * greygated's (refused); one left by a dead one is replaced. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "control.h"
#include "log.h"
#include "loop.h"

#define ADMIN_GID 65534 /* nogroup */
#define CHILD_UID 65534 /* nobody */
#define OTHER_UID 4242  /* an admin: in the group, not the child */

static struct timesrc_fake clock_;
static struct loop *loop;
static struct control *ctl;
static char dir[48], path[100];
static char last_args[512]; /* the last request's arguments, '|'-joined */
static char *long_state;    /* a long answer under way (its pieces) */
static void *waiting_wake;  /* an answer that waits for more */

/* A long answer: LONG_LINES numbered lines, a piece of 100 at a time. */
#define LONG_LINES 50000

struct long_answer {
	unsigned next;
};

static int
long_more(void *state, FILE *out)
{
	struct long_answer *a = state;

	for (int i = 0; i < 100 && a->next < LONG_LINES; i++, a->next++)
		fprintf(out, "line %06u of the long answer\n", a->next);
	return a->next < LONG_LINES;
}

static bool woken;        /* ... and the test woke it */
static unsigned later_asked; /* how often it was asked for more */

static int
later_more(void *state, FILE *out, void *wake)
{
	later_asked++;
	if (!woken) {
		waiting_wake = wake;
		return CONTROL_MORE_LATER;
	}
	fputs("it came\n", out);
	return 0;
}

static void
free_state(void *state)
{
	free(state);
	long_state = NULL;
}

static int
run(void *ctx, int argc, char **argv, const char *who, FILE *out,
    struct control_stream *stream, char *err, size_t err_len)
{
	last_args[0] = '\0';
	for (int i = 0; i < argc; i++)
		snprintf(last_args + strlen(last_args),
		         sizeof(last_args) - strlen(last_args), "%s%s",
		         i ? "|" : "", argv[i]);
	if (!strcmp(argv[0], "long")) {
		struct long_answer *a = calloc(1, sizeof(*a));

		CHECK(a);
		long_state = (char *)a;
		fputs("the start\n", out);
		*stream = (struct control_stream){long_more, NULL, free_state,
		                                  a};
		return 0;
	}
	if (!strcmp(argv[0], "later")) {
		waiting_wake = NULL;
		woken = false;
		later_asked = 0;
		*stream = (struct control_stream){NULL, later_more, free_state,
		                                  calloc(1, 1)};
		return 0;
	}
	if (!strcmp(argv[0], "fail")) {
		snprintf(err, err_len, "it failed: %s", argc > 1 ? argv[1] : "");
		return -EINVAL;
	}
	fprintf(out, "hello %s\n", who);
	return 0;
}

static void
setup(gid_t admin_gid)
{
	struct control_access access = {admin_gid, CHILD_UID, "greygate-admin"};
	char err[512] = "";

	snprintf(dir, sizeof(dir), "/tmp/gg-control-XXXXXX");
	CHECK(mkdtemp(dir));
	CHECK_INT(chmod(dir, 0711), 0); /* (other users reach the folder) */
	snprintf(path, sizeof(path), "%.47s/ctl/control.sock", dir);
	timesrc_fake_init(&clock_, 1700000000);
	loop = loop_new(&clock_.base);
	CHECK(loop);
	if (control_open(path, &access, loop, run, NULL, &ctl, err) < 0) {
		fprintf(stderr, "control_open: %s\n", err);
		exit(1);
	}
}

static void
teardown(void)
{
	char cmd[128];

	control_close(ctl);
	loop_free(loop);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
}

static int
connect_ctl(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);

	CHECK(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	CHECK_INT(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static bool
starts(const char *text, const char *start)
{
	return !strncmp(text, start, strlen(start));
}

static void
send_bytes(int fd, const char *b, size_t len)
{
	CHECK(write(fd, b, len) == (ssize_t)len);
}

/* The loop turns until fd is closed by the server (or turns run out);
 * what it sent is in a static buffer (at most max bytes read). */
static struct {
	char *text;
	size_t len, size;
	bool ended;
} got;

static void
read_until_end(int fd, int turns)
{
	got.len = 0;
	got.ended = false;
	for (int t = 0; t < turns && !got.ended; t++) {
		ssize_t n;

		loop_run_once(loop, 5);
		for (;;) {
			if (got.len + 65536 > got.size) {
				got.size = got.size ? got.size * 2 : 1 << 20;
				got.text = realloc(got.text, got.size);
				CHECK(got.text);
			}
			n = read(fd, got.text + got.len,
			         got.size - got.len - 1);
			if (n <= 0)
				break;
			got.len += (size_t)n;
		}
		if (n == 0)
			got.ended = true;
	}
	if (got.text)
		got.text[got.len] = '\0';
}

/* One request (its arguments NUL-ended, then a newline); the answer. */
static const char *
ask(const char *first, ...)
{
	char req[CONTROL_REQUEST_MAX];
	size_t len = 0;
	va_list ap;
	int fd = connect_ctl();

	va_start(ap, first);
	for (const char *a = first; a; a = va_arg(ap, const char *)) {
		memcpy(req + len, a, strlen(a) + 1);
		len += strlen(a) + 1;
	}
	va_end(ap);
	req[len++] = '\n';
	send_bytes(fd, req, len);
	read_until_end(fd, 2000);
	CHECK(got.ended);
	close(fd);
	return got.text;
}

static void
test_requests(void)
{
	setup((gid_t)-1);
	CHECK(starts(ask("status", "--json", "a b", NULL), "ok\nhello uid 0 "));
	CHECK_STR(last_args, "status|--json|a b");
	CHECK_STR(ask("fail", "why", NULL), "error: it failed: why\n");
	/* not requests */
	{
		int fd = connect_ctl();

		send_bytes(fd, "\n", 1);
		read_until_end(fd, 200);
		CHECK_STR(got.text, "error: malformed request\n");
		close(fd);
		fd = connect_ctl();
		send_bytes(fd, "status\n", 7); /* not NUL-ended */
		read_until_end(fd, 200);
		CHECK_STR(got.text, "error: malformed request\n");
		close(fd);
	}
	CHECK_STR(ask("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k",
	              "l", "m", "n", "o", "p", "q", NULL),
	          "error: malformed request\n");
	/* the socket: root and the admin group only (none here: root) */
	struct stat st;
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 0777, 0600);
	teardown();
}

/* 50,000 lines, whole and in order, made while read; meanwhile a client
 * that stopped reading its own long answer holds up nobody. */
static void
test_long_answers(void)
{
	int slow, fd;
	char *p;

	setup((gid_t)-1);
	slow = connect_ctl();
	send_bytes(slow, "long\0\n", 6);
	for (int t = 0; t < 50; t++)
		loop_run_once(loop, 1); /* (it fills its socket, unread) */
	CHECK(long_state); /* still under way */
	CHECK(starts(ask("status", NULL), "ok\nhello"));
	close(slow);
	for (int t = 0; t < 50; t++)
		loop_run_once(loop, 1);
	CHECK(!long_state); /* freed with its reader gone */

	fd = connect_ctl();
	send_bytes(fd, "long\0\n", 6);
	read_until_end(fd, 100000);
	CHECK(got.ended);
	CHECK(starts(got.text, "ok\nthe start\n"));
	p = got.text + 13;
	for (unsigned i = 0; i < LONG_LINES; i++) {
		char want[64];
		int n = snprintf(want, sizeof(want),
		                 "line %06u of the long answer\n", i);

		if (strncmp(p, want, (size_t)n)) {
			fprintf(stderr, "line %u: %.40s\n", i, p);
			CHECK(false);
		}
		p += n;
	}
	CHECK_STR(p, "");
	close(fd);
	teardown();
}

/* An answer with nothing yet waits until woken, not asked again
 * meanwhile; then it comes, and the connection ends. */
static void
test_answer_later(void)
{
	int fd;

	setup((gid_t)-1);
	fd = connect_ctl();
	send_bytes(fd, "later\0\n", 7);
	read_until_end(fd, 50);
	CHECK(!got.ended);
	CHECK(waiting_wake);
	CHECK_STR(got.text, "ok\n");
	CHECK_INT(later_asked, 1); /* not asked again before it is woken */
	woken = true;
	control_stream_wake(waiting_wake);
	read_until_end(fd, 200);
	CHECK(got.ended);
	CHECK_STR(got.text, "it came\n");
	close(fd);
	teardown();
}

/* A request not ended within its 2 s is dropped unanswered. */
static void
test_request_deadline(void)
{
	int fd;

	setup((gid_t)-1);
	fd = connect_ctl();
	send_bytes(fd, "stat", 4);
	read_until_end(fd, 20);
	CHECK(!got.ended);
	timesrc_fake_advance_ms(&clock_, 2001);
	read_until_end(fd, 20);
	CHECK(got.ended);
	CHECK_INT(got.len, 0);
	close(fd);
	teardown();
}

/* What a process of uid, gid (with no other groups) hears to "status". */
static char *
ask_as(uid_t uid, gid_t gid)
{
	static char answer[512];
	int p[2];
	pid_t pid;
	ssize_t n;
	size_t len = 0;

	CHECK_INT(pipe(p), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		char buf[512];
		int fd;
		ssize_t r;
		size_t got_len = 0;

		close(p[0]);
		if (setgroups(0, NULL) < 0 || setgid(gid) < 0 ||
		    setuid(uid) < 0)
			_exit(2);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			dprintf(p[1], "connect: %s", strerror(errno));
			_exit(0);
		}
		if (write(fd, "status\0\n", 8) != 8)
			_exit(3);
		while ((r = read(fd, buf + got_len,
		                 sizeof(buf) - 1 - got_len)) > 0)
			got_len += (size_t)r;
		if (write(p[1], buf, got_len) < 0)
			_exit(4);
		_exit(0);
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	for (int t = 0; t < 2000; t++) {
		loop_run_once(loop, 5);
		n = read(p[0], answer + len, sizeof(answer) - 1 - len);
		if (n == 0)
			break;
		if (n > 0)
			len += (size_t)n;
	}
	answer[len] = '\0';
	close(p[0]);
	CHECK_INT(waitpid(pid, &(int){0}, 0), pid);
	return answer;
}

static void
test_who_may_ask(void)
{
	struct stat st;

	if (geteuid() != 0) {
		printf("skip: other users' processes need root\n");
		return;
	}
	setup(ADMIN_GID);
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 0777, 0660);
	CHECK_INT(st.st_gid, ADMIN_GID);
	*strrchr(path, '/') = '\0';
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 0777, 0750);
	CHECK_INT(st.st_gid, ADMIN_GID);
	strcat(path, "/control.sock");
	/* an admin: in the group */
	CHECK(starts(ask_as(OTHER_UID, ADMIN_GID), "ok\nhello uid 4242 "));
	/* the child's user, though in the group: never */
	CHECK_STR(ask_as(CHILD_UID, ADMIN_GID),
	          "error: permission denied: greygatectl is for root and the "
	          "greygate-admin group\n");
	/* anyone else cannot even reach the socket */
	CHECK(starts(ask_as(OTHER_UID, 4242), "connect: Permission denied"));
	teardown();
}

/* Another greygated's socket answers: refused. A dead one's is replaced. */
static void
test_socket_left_behind(void)
{
	struct control_access access = {(gid_t)-1, CHILD_UID, "g"};
	struct control *second = NULL;
	char err[512] = "";
	int fd;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	setup((gid_t)-1);
	CHECK_INT(control_open(path, &access, loop, run, NULL, &second, err),
	          -EADDRINUSE);
	CHECK(strstr(err, "another greygated is running"));
	control_close(ctl);
	/* a socket file nobody listens on, as a killed greygated leaves */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	CHECK_INT(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	CHECK_INT(control_open(path, &access, loop, run, NULL, &ctl, err), 0);
	CHECK(starts(ask("status", NULL), "ok\n"));
	teardown();
}

int
main(void)
{
	log_init("test-control", false, LOG_LEVEL_WARN);
	signal(SIGPIPE, SIG_IGN); /* (as greygated: a client gone is an EPIPE) */
	RUN(test_requests);
	RUN(test_long_answers);
	RUN(test_answer_later);
	RUN(test_request_deadline);
	RUN(test_who_may_ask);
	RUN(test_socket_left_behind);
	free(got.text);
	return 0;
}
