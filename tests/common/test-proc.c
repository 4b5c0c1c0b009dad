// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of child processes on the loop (common/proc.h), with real
 * forked children: an end told with its status; a stop that a child
 * ignores forced by SIGKILL after the grace while the loop goes on; a
 * child nobody watches left for its own parent to reap (no waitpid(-1));
 * the stop at the end, waited for outside the loop. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "loop.h"
#include "proc.h"

static struct loop *loop;

struct seen {
	bool ended;
	pid_t pid;
	int status;
	uint64_t at_ms;
};

static void
on_ended(struct proc *p, pid_t pid, int status, void *ctx)
{
	struct seen *s = ctx;

	s->ended = true;
	s->pid = pid;
	s->status = status;
	s->at_ms = loop_now_ms(loop);
}

static void
run_until(bool *cond, uint32_t ms)
{
	uint64_t end = loop_now_ms(loop) + ms;

	while (!*cond && loop_now_ms(loop) < end)
		loop_run_once(loop, 20);
}

/* A child that exits with code after ms. */
static pid_t
child_exiting(int code, unsigned ms)
{
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		usleep(ms * 1000);
		_exit(code);
	}
	return pid;
}

/* A child that ignores SIGTERM (ready once it does). */
static pid_t
child_stubborn(void)
{
	int p[2];
	char c;
	pid_t pid;

	CHECK_INT(pipe(p), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		signal(SIGTERM, SIG_IGN);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	CHECK_INT(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

static void
test_end_told(void)
{
	struct seen s = {0};
	pid_t pid = child_exiting(3, 50);

	CHECK(proc_watch(loop, pid, on_ended, &s));
	run_until(&s.ended, 3000);
	CHECK(s.ended);
	CHECK_INT(s.pid, pid);
	CHECK(WIFEXITED(s.status) && WEXITSTATUS(s.status) == 3);
	CHECK_INT(kill(pid, 0), -1); /* reaped: no zombie left */
}

static bool ticked;

static void
on_tick(struct loop *l, struct loop_timer *t, void *ctx)
{
	ticked = true;
}

/* A child that ignores SIGTERM is killed at the grace's end, and the
 * loop went on meanwhile (a timer due before fired first). */
static void
test_stop_forced(void)
{
	struct seen s = {0};
	struct loop_timer tick;
	pid_t pid = child_stubborn();
	struct proc *p = proc_watch(loop, pid, on_ended, &s);
	uint64_t asked = loop_now_ms(loop);

	CHECK(p);
	ticked = false;
	loop_timer_init(&tick, on_tick, NULL);
	loop_timer_arm(loop, &tick, asked + 50);
	proc_stop(p, 300);
	run_until(&s.ended, 3000);
	CHECK(s.ended);
	CHECK(ticked);
	CHECK(WIFSIGNALED(s.status) && WTERMSIG(s.status) == SIGKILL);
	CHECK(s.at_ms - asked >= 300);
}

/* A plain child ends at the SIGTERM, not at the grace. */
static void
test_stop_asked(void)
{
	struct seen s = {0};
	pid_t pid = child_exiting(0, 60000);
	struct proc *p = proc_watch(loop, pid, on_ended, &s);
	uint64_t asked = loop_now_ms(loop);

	CHECK(p);
	proc_stop(p, 5000);
	run_until(&s.ended, 3000);
	CHECK(s.ended);
	CHECK(WIFSIGNALED(s.status) && WTERMSIG(s.status) == SIGTERM);
	CHECK(s.at_ms - asked < 2000);
}

/* Another child of this process, not watched, is left to be reaped by
 * its own parent (a waitpid(-1) would have taken it). */
static void
test_others_left_alone(void)
{
	struct seen s = {0};
	pid_t other = child_exiting(7, 0);
	pid_t pid = child_exiting(0, 200);
	int status;

	CHECK(proc_watch(loop, pid, on_ended, &s));
	run_until(&s.ended, 3000);
	CHECK(s.ended);
	CHECK_INT(waitpid(other, &status, 0), other);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7);
}

/* At the end, outside the loop: a stubborn child is gone after the
 * grace. */
static void
test_stop_wait(void)
{
	struct seen s = {0};
	pid_t pid = child_stubborn();
	struct proc *p = proc_watch(loop, pid, on_ended, &s);
	uint64_t asked = loop_now_ms(loop);

	CHECK(p);
	proc_stop_wait(p, 200);
	CHECK(loop_now_ms(loop) - asked >= 200);
	CHECK(loop_now_ms(loop) - asked < 2000);
	CHECK_INT(kill(pid, 0), -1);
	CHECK_INT(errno, ESRCH);
	CHECK(!s.ended);
	proc_stop_wait(NULL, 100);
}

int
main(void)
{
	loop = loop_new(timesrc_system());
	CHECK(loop);
	RUN(test_end_told);
	RUN(test_stop_forced);
	RUN(test_stop_asked);
	RUN(test_others_left_alone);
	RUN(test_stop_wait);
	loop_free(loop);
	return 0;
}
