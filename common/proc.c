// SPDX-License-Identifier: GPL-2.0-or-later
/* Child processes on the loop by their pidfds (see proc.h). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compat.h"
#include "loop.h"
#include "proc.h"

/* Without a pidfd: how often the process is looked at. */
#define LOOK_MS 100

struct proc {
	struct loop *loop;
	pid_t pid;
	int pidfd; /* -1: looked at by the timer instead */
	proc_ended_fn *ended;
	void *ctx;
	struct loop_timer look; /* without a pidfd */
	struct loop_timer kill; /* the stop's SIGKILL */
};

static void
release(struct proc *p)
{
	loop_timer_cancel(p->loop, &p->look);
	loop_timer_cancel(p->loop, &p->kill);
	if (p->pidfd >= 0) {
		loop_del_fd(p->loop, p->pidfd);
		close(p->pidfd);
	}
	free(p);
}

/* Reaped if it ended. Return: true (and told). */
static bool
reap(struct proc *p)
{
	int status;
	pid_t r;

	do
		r = waitpid(p->pid, &status, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return false;
	if (r < 0)
		status = 0; /* (reaped by someone else: ended, unknown how) */
	p->ended(p, p->pid, status, p->ctx);
	release(p);
	return true;
}

static void
on_pidfd(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	reap(ctx);
}

static void
on_look(struct loop *loop, struct loop_timer *t, void *ctx)
{
	if (!reap(ctx))
		loop_timer_arm(loop, t, loop_now_ms(loop) + LOOK_MS);
}

static void
on_kill(struct loop *loop, struct loop_timer *t, void *ctx)
{
	struct proc *p = ctx;

	kill(p->pid, SIGKILL);
}

struct proc *
proc_watch(struct loop *loop, pid_t pid, proc_ended_fn *ended, void *ctx)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	*p = (struct proc){.loop = loop, .pid = pid, .ended = ended,
	                   .ctx = ctx};
	loop_timer_init(&p->look, on_look, p);
	loop_timer_init(&p->kill, on_kill, p);
	p->pidfd = compat_pidfd_open(pid, 0);
	if (p->pidfd < 0 && errno != ENOSYS) {
		free(p);
		return NULL;
	}
	if (p->pidfd < 0) {
		loop_timer_arm(loop, &p->look, loop_now_ms(loop) + LOOK_MS);
	} else if (loop_add_fd(loop, p->pidfd, EPOLLIN, on_pidfd, p) < 0) {
		int e = errno;

		close(p->pidfd);
		free(p);
		errno = e;
		return NULL;
	}
	return p;
}

pid_t
proc_pid(const struct proc *p)
{
	return p->pid;
}

void
proc_set_ended(struct proc *p, proc_ended_fn *ended, void *ctx)
{
	p->ended = ended;
	p->ctx = ctx;
}

void
proc_stop(struct proc *p, uint32_t grace_ms)
{
	kill(p->pid, SIGTERM);
	if (!p->kill.armed)
		loop_timer_arm(p->loop, &p->kill,
		               loop_now_ms(p->loop) + grace_ms);
}

/* Waits for its end, ms at most. Return: true (it ended). */
static bool
wait_end(struct proc *p, uint32_t ms)
{
	for (uint32_t waited = 0;; waited += LOOK_MS) {
		pid_t r = waitpid(p->pid, NULL, WNOHANG);

		if (r > 0 || (r < 0 && errno != EINTR))
			return true;
		if (waited >= ms)
			return false;
		if (p->pidfd >= 0)
			poll(&(struct pollfd){.fd = p->pidfd, .events = POLLIN},
			     1, (int)(ms - waited < LOOK_MS ? ms - waited
			                                    : LOOK_MS));
		else
			usleep(LOOK_MS * 1000);
	}
}

void
proc_stop_wait(struct proc *p, uint32_t grace_ms)
{
	if (!p)
		return;
	kill(p->pid, SIGTERM);
	if (!wait_end(p, grace_ms)) {
		kill(p->pid, SIGKILL);
		while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	release(p);
}
