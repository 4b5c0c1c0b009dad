/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The one epoll dispatcher every greygate process runs: file descriptors
 * with a callback each, signals through a signalfd, and timers kept in a
 * deadline heap on a struct timesrc's monotonic clock. No threads. */
#ifndef GREYGATE_LOOP_H
#define GREYGATE_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timesrc.h"

struct loop;
struct loop_timer;

/* Called with the epoll events (EPOLLIN, EPOLLOUT, EPOLLHUP, ...) of fd. */
typedef void loop_fd_fn(struct loop *loop, int fd, uint32_t events, void *ctx);
typedef void loop_signal_fn(struct loop *loop, int signo, void *ctx);
typedef void loop_timer_fn(struct loop *loop, struct loop_timer *timer,
			   void *ctx);
/* Called before the loop waits: what the turn queued goes out now. */
typedef void loop_hook_fn(void *ctx);

/* A timer lives inside its owner's struct; the loop only points at it
 * (the timers waiting are linked through themselves: nothing is
 * allocated to arm one). */
struct loop_timer {
	uint64_t due_ms;   /* monotonic deadline while armed */
	bool armed;
	struct loop_timer *child, *sibling, *prev; /* the loop's, while armed */
	loop_timer_fn *fn; /* called once when due_ms has passed */
	void *ctx;         /* handed to fn */
};

/*
 * loop_new - a new dispatcher.
 * @ts: clock for timers (borrowed: must outlive the loop)
 * Return: the loop, or NULL with errno set.
 */
struct loop *loop_new(const struct timesrc *ts);

/* loop_free - close the epoll and signal fds; NULL is fine. Registered fds
 * are not closed: their owners close them. */
void loop_free(struct loop *loop);

/*
 * loop_add_fd - watch fd for events; fn runs when any of them is ready.
 * Return: 0, or -errno (-EEXIST if fd is already watched).
 */
int loop_add_fd(struct loop *loop, int fd, uint32_t events, loop_fd_fn *fn,
		void *ctx);
/* loop_mod_fd - change the events watched on fd (level-triggered: the
 * same events again ask nothing of the kernel). Return: 0 or -errno. */
int loop_mod_fd(struct loop *loop, int fd, uint32_t events);
/* loop_del_fd - stop watching fd (before closing it). Safe from inside any
 * callback: a pending event for fd in the same turn is dropped.
 * Return: 0 or -errno (-ENOENT when fd was not watched). */
int loop_del_fd(struct loop *loop, int fd);
/* loop_forget_fd - as loop_del_fd, without a word to the kernel: only
 * for a descriptor about to be closed whose file no other descriptor
 * anywhere refers to (the kernel drops its epoll entry with the file's
 * last close; had another, the entry would stay and wake the loop for
 * nothing until that one closed too). One system call less. */
int loop_forget_fd(struct loop *loop, int fd);

/*
 * loop_add_signal - block signo and have fn run from the loop when it
 * arrives. Return: 0 or -errno.
 */
int loop_add_signal(struct loop *loop, int signo, loop_signal_fn *fn,
		    void *ctx);

/* loop_timer_init - make an idle timer that will call fn(ctx). */
void loop_timer_init(struct loop_timer *timer, loop_timer_fn *fn, void *ctx);
/* loop_timer_arm - (re)arm timer to fire at monotonic due_ms. It cannot
 * fail (nothing is allocated). Return: 0. */
int loop_timer_arm(struct loop *loop, struct loop_timer *timer,
		   uint64_t due_ms);
/* loop_timer_cancel - disarm; an idle timer is left as it is. */
void loop_timer_cancel(struct loop *loop, struct loop_timer *timer);
/* loop_timer_is_armed - true while the timer waits to fire. */
bool loop_timer_is_armed(const struct loop_timer *timer);

/* loop_now_ms - the loop clock's monotonic time. */
uint64_t loop_now_ms(const struct loop *loop);

/* loop_wall_sec - the loop clock's wall time (epoch seconds): what a
 * process on this loop calls now, so a fake clock moves it too. */
int64_t loop_wall_sec(const struct loop *loop);

/*
 * loop_run_once - fire due timers, run the hooks (loop_before_wait),
 * wait for events at most max_wait_ms
 * (less if a timer is due sooner; -1 waits for the next event or timer),
 * dispatch them, fire timers that became due.
 * Return: number of callbacks run, or -errno from epoll_wait.
 */
int loop_run_once(struct loop *loop, int max_wait_ms);

/* Hooks run before each wait, at most this many. */
#define LOOP_HOOKS_MAX 4

/*
 * loop_before_wait - fn(ctx) runs each time before the loop waits for
 * events (issue 58: the sets send what a turn queued, whoever queued
 * it). Return: 0, or -ENOSPC (LOOP_HOOKS_MAX already).
 */
int loop_before_wait(struct loop *loop, loop_hook_fn *fn, void *ctx);

/* loop_before_wait_stop - fn(ctx) no longer runs. */
void loop_before_wait_stop(struct loop *loop, loop_hook_fn *fn, void *ctx);

/* loop_run - run turns until loop_quit. Return: the code given to
 * loop_quit, or -errno if waiting failed. */
int loop_run(struct loop *loop);

/* loop_quit - make loop_run return code after the current turn. */
void loop_quit(struct loop *loop, int code);

#endif
