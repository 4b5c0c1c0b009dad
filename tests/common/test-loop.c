// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the epoll dispatcher and the clocks: fds, signals, timers in
 * deadline order, removal during a turn, the fake clock. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "check.h"
#include "loop.h"

struct pipe_seen {
	int reads;
	char last;
};

static void
on_pipe(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct pipe_seen *seen = ctx;

	CHECK(events & EPOLLIN);
	CHECK_INT(read(fd, &seen->last, 1), 1);
	seen->reads++;
}

static void
test_fd_callback(void)
{
	struct loop *loop = loop_new(timesrc_system());
	struct pipe_seen seen = {0};
	int p[2];

	CHECK(loop);
	CHECK_INT(pipe(p), 0);
	CHECK_INT(loop_add_fd(loop, p[0], EPOLLIN, on_pipe, &seen), 0);
	CHECK_INT(loop_add_fd(loop, p[0], EPOLLIN, on_pipe, &seen), -EEXIST);
	CHECK_INT(loop_run_once(loop, 0), 0);
	CHECK_INT(write(p[1], "x", 1), 1);
	CHECK_INT(loop_run_once(loop, 1000), 1);
	CHECK_INT(seen.reads, 1);
	CHECK_INT(seen.last, 'x');
	CHECK_INT(loop_del_fd(loop, p[0]), 0);
	CHECK_INT(loop_del_fd(loop, p[0]), -ENOENT);
	CHECK_INT(write(p[1], "y", 1), 1);
	CHECK_INT(loop_run_once(loop, 0), 0);
	CHECK_INT(seen.reads, 1);
	close(p[0]);
	close(p[1]);
	loop_free(loop);
}

/* Two fds ready in one turn; the first callback removes the second: the
 * second's handler must not run. */
struct remover {
	int victim;
	int calls;
};

static void
on_ready_remove(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct remover *r = ctx;

	r->calls++;
	loop_del_fd(loop, r->victim);
	loop_del_fd(loop, fd);
}

static void
test_delete_during_turn(void)
{
	struct loop *loop = loop_new(timesrc_system());
	struct remover ra = {0}, rb = {0};
	int a[2], b[2];

	CHECK_INT(pipe(a), 0);
	CHECK_INT(pipe(b), 0);
	ra.victim = b[0];
	rb.victim = a[0];
	CHECK_INT(loop_add_fd(loop, a[0], EPOLLIN, on_ready_remove, &ra), 0);
	CHECK_INT(loop_add_fd(loop, b[0], EPOLLIN, on_ready_remove, &rb), 0);
	CHECK_INT(write(a[1], "x", 1), 1);
	CHECK_INT(write(b[1], "x", 1), 1);
	CHECK_INT(loop_run_once(loop, 1000), 1);
	CHECK_INT(ra.calls + rb.calls, 1);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
	loop_free(loop);
}

struct timer_log {
	int order[8];
	int n;
};

struct tagged_timer {
	struct loop_timer timer;
	int tag;
	struct timer_log *log;
};

static void
on_timer(struct loop *loop, struct loop_timer *timer, void *ctx)
{
	struct tagged_timer *t = ctx;

	t->log->order[t->log->n++] = t->tag;
}

static void
test_timers_fire_in_deadline_order(void)
{
	struct timesrc_fake clock;
	struct timer_log log = {0};
	struct tagged_timer t[5];
	const uint64_t due[5] = {500, 100, 300, 200, 400};
	struct loop *loop;

	timesrc_fake_init(&clock, 1700000000);
	loop = loop_new(&clock.base);
	for (int i = 0; i < 5; i++) {
		t[i].tag = i;
		t[i].log = &log;
		loop_timer_init(&t[i].timer, on_timer, &t[i]);
		CHECK_INT(loop_timer_arm(loop, &t[i].timer, due[i]), 0);
	}
	/* Cancel the one due at 300 and move the one due at 500 to 50. */
	loop_timer_cancel(loop, &t[2].timer);
	CHECK(!loop_timer_is_armed(&t[2].timer));
	CHECK_INT(loop_timer_arm(loop, &t[0].timer, 50), 0);

	CHECK_INT(loop_run_once(loop, 0), 0);
	timesrc_fake_advance_ms(&clock, 150);
	CHECK_INT(loop_run_once(loop, 0), 2);
	CHECK_INT(log.n, 2);
	CHECK_INT(log.order[0], 0);
	CHECK_INT(log.order[1], 1);
	timesrc_fake_advance_ms(&clock, 1000);
	CHECK_INT(loop_run_once(loop, 0), 2);
	CHECK_INT(log.order[2], 3);
	CHECK_INT(log.order[3], 4);
	CHECK(!loop_timer_is_armed(&t[4].timer));
	loop_free(loop);
}

/* With the real clock, a timer bounds how long the loop waits. */
static void
test_timer_wakes_real_loop(void)
{
	const struct timesrc *sys = timesrc_system();
	struct loop *loop = loop_new(sys);
	struct timer_log log = {0};
	struct tagged_timer t = {.tag = 7, .log = &log};
	uint64_t start = timesrc_mono_ms(sys), took;

	loop_timer_init(&t.timer, on_timer, &t);
	CHECK_INT(loop_timer_arm(loop, &t.timer, start + 30), 0);
	while (log.n == 0)
		CHECK(loop_run_once(loop, -1) >= 0);
	took = timesrc_mono_ms(sys) - start;
	CHECK(took >= 30);
	CHECK(took < 1000);
	loop_free(loop);
}

static void
on_signal(struct loop *loop, int signo, void *ctx)
{
	*(int *)ctx = signo;
	loop_quit(loop, 42);
}

static void
test_signal_ends_run(void)
{
	struct loop *loop = loop_new(timesrc_system());
	int got = 0;

	CHECK_INT(loop_add_signal(loop, SIGUSR1, on_signal, &got), 0);
	CHECK_INT(loop_add_signal(loop, SIGUSR2, on_signal, &got), 0);
	CHECK_INT(kill(getpid(), SIGUSR2), 0);
	CHECK_INT(loop_run(loop), 42);
	CHECK_INT(got, SIGUSR2);
	loop_free(loop);
}

static void
test_fake_clock(void)
{
	struct timesrc_fake clock;

	timesrc_fake_init(&clock, 1000);
	CHECK_INT(timesrc_mono_ms(&clock.base), 0);
	timesrc_fake_advance_ms(&clock, 600);
	CHECK_INT(timesrc_wall_sec(&clock.base), 1000);
	timesrc_fake_advance_ms(&clock, 600);
	CHECK_INT(timesrc_wall_sec(&clock.base), 1001);
	CHECK_INT(timesrc_mono_ms(&clock.base), 1200);
	timesrc_fake_advance_ms(&clock, 300 * 1000);
	CHECK_INT(timesrc_wall_sec(&clock.base), 1301);
}

/* Many timers armed, moved and cancelled in a random order (the heap
 * links them through themselves: issue 29, arming may never fail): each
 * armed one fires once, none cancelled does, all in deadline order, and
 * a timer may re-arm or cancel others from its callback. */
#define MANY 5000

struct many {
	struct loop_timer t[MANY];
	bool armed[MANY];
	uint64_t due[MANY];
	int fired[MANY];
	bool cancelled_by_another[MANY];
	uint64_t last_due;
	bool in_order;
};

static struct many *many;

static void
on_many(struct loop *loop, struct loop_timer *t, void *ctx)
{
	size_t i = (size_t)(uintptr_t)ctx;

	many->fired[i]++;
	if (t->due_ms < many->last_due)
		many->in_order = false;
	many->last_due = t->due_ms;
	many->armed[i] = false;
	/* from a callback: cancel a later one, re-arm another later */
	if (i % 7 == 0 && many->armed[(i + 1) % MANY]) {
		loop_timer_cancel(loop, &many->t[(i + 1) % MANY]);
		many->armed[(i + 1) % MANY] = false;
		many->cancelled_by_another[(i + 1) % MANY] = true;
	}
}

static void
test_many_timers(void)
{
	struct timesrc_fake clock;
	struct loop *loop;
	uint32_t seed = 12345;

	timesrc_fake_init(&clock, 1000);
	loop = loop_new(&clock.base);
	many = calloc(1, sizeof(*many));
	CHECK(loop && many);
	many->in_order = true;
	for (size_t i = 0; i < MANY; i++)
		loop_timer_init(&many->t[i], on_many, (void *)(uintptr_t)i);
	for (int op = 0; op < 4 * MANY; op++) {
		size_t i;

		seed = seed * 1103515245 + 12345;
		i = (seed >> 8) % MANY;
		if ((seed >> 4) % 5 == 0) {
			loop_timer_cancel(loop, &many->t[i]);
			many->armed[i] = false;
		} else {
			many->due[i] = 1 + (seed >> 12) % 100000;
			CHECK_INT(loop_timer_arm(loop, &many->t[i],
			                         many->due[i]),
			          0);
			many->armed[i] = true;
		}
		CHECK(loop_timer_is_armed(&many->t[i]) == many->armed[i]);
	}
	{
		bool want[MANY];

		for (size_t i = 0; i < MANY; i++)
			want[i] = many->armed[i];
		for (int step = 0; step < 110; step++) {
			timesrc_fake_advance_ms(&clock, 1000);
			loop_run_once(loop, 0);
		}
		CHECK(many->in_order);
		for (size_t i = 0; i < MANY; i++) {
			CHECK_INT(many->fired[i],
			          want[i] && !many->cancelled_by_another[i]);
			CHECK(!loop_timer_is_armed(&many->t[i]));
		}
	}
	free(many);
	loop_free(loop);
}

static void
count_hook(void *ctx)
{
	(*(int *)ctx)++;
}

/* A hook runs before each wait, with what the turn did before it; stopped,
 * it runs no more; there is room for LOOP_HOOKS_MAX. */
static void
test_before_wait_hooks(void)
{
	struct loop *loop = loop_new(timesrc_system());
	int a = 0, b = 0;

	CHECK(loop);
	CHECK_INT(loop_before_wait(loop, count_hook, &a), 0);
	CHECK_INT(loop_before_wait(loop, count_hook, &b), 0);
	for (int i = 0; i < 3; i++)
		CHECK(loop_run_once(loop, 0) >= 0);
	CHECK_INT(a, 3);
	CHECK_INT(b, 3);
	loop_before_wait_stop(loop, count_hook, &a);
	CHECK(loop_run_once(loop, 0) >= 0);
	CHECK_INT(a, 3);
	CHECK_INT(b, 4);
	for (int i = 1; i < LOOP_HOOKS_MAX; i++)
		CHECK_INT(loop_before_wait(loop, count_hook, &a), 0);
	CHECK_INT(loop_before_wait(loop, count_hook, &a), -ENOSPC);
	loop_free(loop);
}

int
main(void)
{
	RUN(test_fd_callback);
	RUN(test_delete_during_turn);
	RUN(test_timers_fire_in_deadline_order);
	RUN(test_timer_wakes_real_loop);
	RUN(test_signal_ends_run);
	RUN(test_fake_clock);
	RUN(test_many_timers);
	RUN(test_before_wait_hooks);
	return 0;
}
