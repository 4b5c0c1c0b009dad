// SPDX-License-Identifier: GPL-2.0-or-later
/* The epoll dispatcher: fd table indexed by fd with a generation count so a
 * handler removed mid-turn never runs, a signalfd for all signals, and a
 * pairing heap of timers, linked through the timers themselves: arming
 * one never allocates, so it never fails. */
#include "loop.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#define LOOP_BATCH 64
#define LOOP_NSIG 65

struct fd_slot {
	loop_fd_fn *fn;
	void *ctx;
	uint32_t gen; /* bumped on every add and delete */
	uint32_t events; /* what epoll watches for now */
	bool used;
};

struct sig_slot {
	loop_signal_fn *fn;
	void *ctx;
};

struct loop {
	const struct timesrc *ts;
	int epfd;
	int sigfd;
	sigset_t sigmask;
	struct fd_slot *fds;
	size_t nfds_alloc;
	struct sig_slot sigs[LOOP_NSIG];
	struct loop_timer *timers; /* the heap's root: the one due first */
	struct hook {
		loop_hook_fn *fn;
		void *ctx;
	} hooks[LOOP_HOOKS_MAX];
	bool quit;
	int quit_code;
};

struct loop *
loop_new(const struct timesrc *ts)
{
	struct loop *loop = calloc(1, sizeof(*loop));

	if (!loop)
		return NULL;
	loop->ts = ts;
	loop->sigfd = -1;
	sigemptyset(&loop->sigmask);
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (loop->epfd < 0) {
		int e = errno;

		free(loop);
		errno = e;
		return NULL;
	}
	return loop;
}

void
loop_free(struct loop *loop)
{
	if (!loop)
		return;
	if (loop->sigfd >= 0)
		close(loop->sigfd);
	close(loop->epfd);
	free(loop->fds);
	free(loop);
}

static int
fd_table_reserve(struct loop *loop, int fd)
{
	size_t want = (size_t)fd + 1, n = loop->nfds_alloc ? loop->nfds_alloc : 64;
	struct fd_slot *grown;

	if (want <= loop->nfds_alloc)
		return 0;
	while (n < want)
		n *= 2;
	grown = realloc(loop->fds, n * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	memset(grown + loop->nfds_alloc, 0,
	       (n - loop->nfds_alloc) * sizeof(*grown));
	loop->fds = grown;
	loop->nfds_alloc = n;
	return 0;
}

static uint64_t
fd_token(int fd, uint32_t gen)
{
	return (uint64_t)gen << 32 | (uint32_t)fd;
}

int
loop_add_fd(struct loop *loop, int fd, uint32_t events, loop_fd_fn *fn,
	    void *ctx)
{
	struct epoll_event ev = {.events = events};
	struct fd_slot *slot;
	int r;

	if (fd < 0)
		return -EBADF;
	r = fd_table_reserve(loop, fd);
	if (r < 0)
		return r;
	slot = &loop->fds[fd];
	if (slot->used)
		return -EEXIST;
	slot->gen++;
	ev.data.u64 = fd_token(fd, slot->gen);
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	slot->fn = fn;
	slot->ctx = ctx;
	slot->events = events;
	slot->used = true;
	return 0;
}

int
loop_mod_fd(struct loop *loop, int fd, uint32_t events)
{
	struct epoll_event ev = {.events = events};

	if (fd < 0 || (size_t)fd >= loop->nfds_alloc || !loop->fds[fd].used)
		return -ENOENT;
	/* Level-triggered: the same events again would change nothing, and
	 * the tarpit asks for EPOLLIN again after every answer it gives (a
	 * system call a session saved under a flood). */
	if (loop->fds[fd].events == events)
		return 0;
	ev.data.u64 = fd_token(fd, loop->fds[fd].gen);
	if (epoll_ctl(loop->epfd, EPOLL_CTL_MOD, fd, &ev) < 0)
		return -errno;
	loop->fds[fd].events = events;
	return 0;
}

int
loop_forget_fd(struct loop *loop, int fd)
{
	struct fd_slot *slot;

	if (fd < 0 || (size_t)fd >= loop->nfds_alloc || !loop->fds[fd].used)
		return -ENOENT;
	slot = &loop->fds[fd];
	slot->used = false;
	slot->gen++;
	return 0;
}

int
loop_del_fd(struct loop *loop, int fd)
{
	int r = loop_forget_fd(loop, fd);

	if (r == 0 && epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL) < 0)
		return -errno;
	return r;
}

static void
on_signalfd(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct signalfd_siginfo si;

	(void)events;
	(void)ctx;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo < LOOP_NSIG && loop->sigs[si.ssi_signo].fn)
			loop->sigs[si.ssi_signo].fn(loop, (int)si.ssi_signo,
						    loop->sigs[si.ssi_signo].ctx);
	}
}

int
loop_add_signal(struct loop *loop, int signo, loop_signal_fn *fn, void *ctx)
{
	sigset_t mask = loop->sigmask;
	int fd, r;

	if (signo <= 0 || signo >= LOOP_NSIG)
		return -EINVAL;
	sigaddset(&mask, signo);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return -errno;
	fd = signalfd(loop->sigfd, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (loop->sigfd < 0) {
		r = loop_add_fd(loop, fd, EPOLLIN, on_signalfd, NULL);
		if (r < 0) {
			close(fd);
			return r;
		}
		loop->sigfd = fd;
	}
	loop->sigmask = mask;
	loop->sigs[signo].fn = fn;
	loop->sigs[signo].ctx = ctx;
	return 0;
}

/* --- timers: a pairing heap on due_ms. A timer's prev is its parent
 * when it is the first child, else the sibling before it. --- */

/* Two roots (neither with a parent or siblings) as one: the later under
 * the earlier, as its first child. */
static struct loop_timer *
meld(struct loop_timer *a, struct loop_timer *b)
{
	struct loop_timer *t;

	if (!a)
		return b;
	if (!b)
		return a;
	if (b->due_ms < a->due_ms) {
		t = a;
		a = b;
		b = t;
	}
	b->prev = a;
	b->sibling = a->child;
	if (a->child)
		a->child->prev = b;
	a->child = b;
	return a;
}

/* A list of siblings as one heap: melded in pairs left to right, then
 * the pairs right to left (no recursion: lists can be long). */
static struct loop_timer *
merge_pairs(struct loop_timer *first)
{
	struct loop_timer *pairs = NULL, *root = NULL;

	while (first) {
		struct loop_timer *a = first, *b = a->sibling;

		first = b ? b->sibling : NULL;
		a->sibling = a->prev = NULL;
		if (b)
			b->sibling = b->prev = NULL;
		a = meld(a, b);
		a->sibling = pairs; /* (a stack of the pairs) */
		pairs = a;
	}
	while (pairs) {
		struct loop_timer *next = pairs->sibling;

		pairs->sibling = NULL;
		root = meld(root, pairs);
		pairs = next;
	}
	return root;
}

void
loop_timer_init(struct loop_timer *timer, loop_timer_fn *fn, void *ctx)
{
	timer->due_ms = 0;
	timer->armed = false;
	timer->child = timer->sibling = timer->prev = NULL;
	timer->fn = fn;
	timer->ctx = ctx;
}

bool
loop_timer_is_armed(const struct loop_timer *timer)
{
	return timer->armed;
}

void
loop_timer_cancel(struct loop *loop, struct loop_timer *timer)
{
	struct loop_timer *below;

	if (!timer->armed)
		return;
	timer->armed = false;
	below = merge_pairs(timer->child);
	timer->child = NULL;
	if (timer == loop->timers) {
		loop->timers = below;
		return;
	}
	if (timer->prev->child == timer)
		timer->prev->child = timer->sibling;
	else
		timer->prev->sibling = timer->sibling;
	if (timer->sibling)
		timer->sibling->prev = timer->prev;
	timer->prev = timer->sibling = NULL;
	loop->timers = meld(loop->timers, below);
}

int
loop_timer_arm(struct loop *loop, struct loop_timer *timer, uint64_t due_ms)
{
	loop_timer_cancel(loop, timer);
	timer->due_ms = due_ms;
	timer->armed = true;
	timer->child = timer->sibling = timer->prev = NULL;
	loop->timers = meld(loop->timers, timer);
	return 0;
}

uint64_t
loop_now_ms(const struct loop *loop)
{
	return timesrc_mono_ms(loop->ts);
}

int64_t
loop_wall_sec(const struct loop *loop)
{
	return timesrc_wall_sec(loop->ts);
}

static int
fire_due_timers(struct loop *loop)
{
	uint64_t now = loop_now_ms(loop);
	int fired = 0;

	while (loop->timers && loop->timers->due_ms <= now) {
		struct loop_timer *t = loop->timers;

		loop_timer_cancel(loop, t);
		t->fn(loop, t, t->ctx);
		fired++;
	}
	return fired;
}

static int
wait_budget_ms(struct loop *loop, int max_wait_ms)
{
	uint64_t now, due;

	if (!loop->timers)
		return max_wait_ms;
	now = loop_now_ms(loop);
	due = loop->timers->due_ms;
	if (due <= now)
		return 0;
	if (max_wait_ms >= 0 && (uint64_t)max_wait_ms < due - now)
		return max_wait_ms;
	return due - now > INT32_MAX ? INT32_MAX : (int)(due - now);
}

int
loop_before_wait(struct loop *loop, loop_hook_fn *fn, void *ctx)
{
	for (size_t i = 0; i < LOOP_HOOKS_MAX; i++)
		if (!loop->hooks[i].fn) {
			loop->hooks[i] = (struct hook){fn, ctx};
			return 0;
		}
	return -ENOSPC;
}

void
loop_before_wait_stop(struct loop *loop, loop_hook_fn *fn, void *ctx)
{
	for (size_t i = 0; i < LOOP_HOOKS_MAX; i++)
		if (loop->hooks[i].fn == fn && loop->hooks[i].ctx == ctx)
			loop->hooks[i] = (struct hook){NULL, NULL};
}

int
loop_run_once(struct loop *loop, int max_wait_ms)
{
	struct epoll_event evs[LOOP_BATCH];
	int n, ran = fire_due_timers(loop);

	for (size_t i = 0; i < LOOP_HOOKS_MAX; i++)
		if (loop->hooks[i].fn)
			loop->hooks[i].fn(loop->hooks[i].ctx);

	n = epoll_wait(loop->epfd, evs, LOOP_BATCH,
		       ran ? 0 : wait_budget_ms(loop, max_wait_ms));
	if (n < 0) {
		if (errno == EINTR)
			return ran;
		return -errno;
	}
	for (int i = 0; i < n; i++) {
		int fd = (int)(uint32_t)evs[i].data.u64;
		uint32_t gen = (uint32_t)(evs[i].data.u64 >> 32);
		struct fd_slot *slot = &loop->fds[fd];

		if (!slot->used || slot->gen != gen)
			continue;
		slot->fn(loop, fd, evs[i].events, slot->ctx);
		ran++;
	}
	return ran + fire_due_timers(loop);
}

int
loop_run(struct loop *loop)
{
	loop->quit = false;
	while (!loop->quit) {
		int r = loop_run_once(loop, -1);

		if (r < 0)
			return r;
	}
	return loop->quit_code;
}

void
loop_quit(struct loop *loop, int code)
{
	loop->quit = true;
	loop->quit_code = code;
}
