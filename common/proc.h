/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A child process watched on greygate's loop: its end is an event like
 * any other. Each is watched through its own pidfd (no SIGCHLD, no
 * waitpid(-1) that would reap another supervisor's child, nothing that
 * sleeps or spins inside the loop); a stop is asked (SIGTERM) and
 * forced (SIGKILL) after a grace, by a timer. On a kernel without pidfds
 * (before Linux 5.3) the process is looked at every 100 ms instead,
 * still by its own pid. */
#ifndef GREYGATE_PROC_H
#define GREYGATE_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct loop;
struct proc;

/* The process ended (status as waitpid gives it) and was reaped; p is
 * freed after the call. */
typedef void proc_ended_fn(struct proc *p, pid_t pid, int status, void *ctx);

/*
 * proc_watch - watch pid, a child of this process, until it ends.
 * Return: the watch, or NULL (errno; the process is the caller's still).
 */
struct proc *proc_watch(struct loop *loop, pid_t pid, proc_ended_fn *ended,
                        void *ctx);

pid_t proc_pid(const struct proc *p);

/* proc_set_ended - who is told of its end from now on. */
void proc_set_ended(struct proc *p, proc_ended_fn *ended, void *ctx);

/* proc_stop - SIGTERM now, SIGKILL grace_ms later if it has not ended;
 * ended is told as always. Asked again, the earlier SIGKILL stands. */
void proc_stop(struct proc *p, uint32_t grace_ms);

/* proc_stop_wait - for the end, outside the loop's turns (greygated
 * stopping): SIGTERM, its end waited for grace_ms at most, then SIGKILL
 * and its end. ended is not told; p is freed. NULL ok. */
void proc_stop_wait(struct proc *p, uint32_t grace_ms);

#endif
