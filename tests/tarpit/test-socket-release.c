// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of how a session's socket leaves the loop when the session ends
 * (tarpit_asker.released_by_verdict), on the real server and real sockets
 * (tests/lib/tarpit_rig.h): the asker's opened keeps a duplicate of the
 * socket, as greygated does until it has read the session's ends. Held
 * by the tarpit alone, the socket is closed without asking epoll to
 * forget it (the kernel does, with the last close: one system call a
 * session less); held elsewhere too, epoll is asked, or its entry would
 * outlive the session. The loop's calls to epoll_ctl are counted (linked
 * with --wrap=epoll_ctl), and its epoll entries read from /proc. */
#include <dirent.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "tarpit_rig.h"

static int deletes; /* EPOLL_CTL_DEL asked of the kernel */

int __real_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev);
int __wrap_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev);

int
__wrap_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	if (op == EPOLL_CTL_DEL)
		deletes++;
	return __real_epoll_ctl(epfd, op, fd, ev);
}

static int held = -1;   /* the asker's duplicate of the last socket */
static ino_t held_ino;  /* ... its inode, to find its epoll entry */
static bool let_go;     /* the asker closes its duplicate at once */

static void
on_opened(uint64_t session, int fd, void *ctx)
{
	struct stat st;

	(void)session;
	(void)ctx;
	CHECK(fstat(fd, &st) == 0);
	held_ino = st.st_ino;
	held = dup(fd);
	CHECK(held >= 0);
	if (let_go) {
		close(held);
		held = -1;
	}
}

static int
on_ask(const struct tarpit_attempt *a, void *ctx)
{
	(void)ctx;
	f.session = a->session;
	f.question = a->question;
	f.kind = a->kind;
	f.asks++;
	return 0;
}

/* Is there an epoll entry, in any epoll of this process, for the file
 * of inode ino? (/proc/self/fdinfo: "tfd: N events: E data: D pos: P
 * ino: I sdev: S", I in hex.) */
static bool
epoll_watches(ino_t ino)
{
	DIR *d = opendir("/proc/self/fdinfo");
	struct dirent *e;
	char path[300], line[256], want[32];
	bool found = false;

	CHECK(d);
	snprintf(want, sizeof(want), "ino:%lx ", (unsigned long)ino);
	while (!found && (e = readdir(d))) {
		FILE *fp;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", e->d_name);
		fp = fopen(path, "r");
		if (!fp)
			continue;
		while (!found && fgets(line, sizeof(line), fp))
			found = strncmp(line, "tfd:", 4) == 0 && strstr(line, want);
		fclose(fp);
	}
	closedir(d);
	return found;
}

static void
start(bool released_by_verdict, bool asker_lets_go)
{
	setup(5000, 1000);
	tarpit_set_asker(f.tp, &(struct tarpit_asker){
				       .ask = on_ask,
				       .opened = on_opened,
				       .wait_ms = 5000,
				       .released_by_verdict =
					       released_by_verdict});
	let_go = asker_lets_go;
	held = -1;
}

/* The client QUITs; the session is over once the tarpit closed its
 * socket (the client hears of it only once the asker's duplicate is
 * closed too). */
static void
quit(int c)
{
	put(c, "QUIT\r\n");
	CHECK_STR(line_from(c), "221 2.0.0 Bye");
	for (int t = 0; t < 3000 && tarpit_get_counters(f.tp)->open; t++)
		loop_run_once(f.loop, 1);
	CHECK_INT(tarpit_get_counters(f.tp)->open, 0);
	close(c);
}

static bool
starts(const char *line, const char *with)
{
	return line && strncmp(line, with, strlen(with)) == 0;
}

static void
answer_greylist(void)
{
	struct tarpit_verdict v = {.action = TARPIT_GREYLIST,
				   .wait_sec = 300,
				   .handoff_fd = -1};

	CHECK_INT(tarpit_verdict(f.tp, f.session, f.question, &v), 0);
}

/* A session greylisted at RCPT, then QUIT: the EPOLL_CTL_DELs its end
 * asked for, and no epoll entry left of its socket. */
static int
greylisted_session(void)
{
	int c = client_at_rcpt("MAIL FROM:<a@a.test>\r\n");

	answer_greylist();
	CHECK(starts(line_from(c), "451 "));
	deletes = 0;
	quit(c);
	CHECK(!epoll_watches(held_ino));
	return deletes;
}

/* The asker let go, its verdict came: closed with no EPOLL_CTL_DEL. */
static void
test_released_closes_alone(void)
{
	start(true, true);
	CHECK_INT(greylisted_session(), 0);
	teardown();
}

/* The asker still holds the socket (no verdict yet): epoll is told, and
 * no entry outlives the session though the socket lives on. */
static void
test_held_without_verdict(void)
{
	int c;

	start(true, false);
	c = client_after_ehlo();
	deletes = 0;
	quit(c);
	CHECK_INT(deletes, 1);
	CHECK(held >= 0);
	CHECK(!epoll_watches(held_ino));
	close(held);
	teardown();
}

/* An asker that does not say it lets go at a verdict: epoll is told
 * even after one. */
static void
test_not_released_by_verdict(void)
{
	start(false, false);
	CHECK_INT(greylisted_session(), 1);
	close(held);
	teardown();
}

/* No asker's opened: the tarpit is the socket's only holder from the
 * start (the tarpit alone, the benchmark's). */
static void
test_no_opened(void)
{
	int c;

	setup(5000, 1000);
	tarpit_set_asker(f.tp, &(struct tarpit_asker){.ask = on_ask,
						    .wait_ms = 5000});
	c = client_connect();
	CHECK(starts(line_from(c), "220 "));
	deletes = 0;
	quit(c);
	CHECK_INT(deletes, 0);
	teardown();
}

int
main(void)
{
	RUN(test_released_closes_alone);
	RUN(test_held_without_verdict);
	RUN(test_not_released_by_verdict);
	RUN(test_no_opened);
	return 0;
}
