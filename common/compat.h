/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The few calls greygate makes that one C library has and another lacks
 * (glibc 2.34-2.36 added them; musl 1.2.3 has none of them), each in one
 * place, on the kernel's own system call or on what every C library has,
 * so that glibc, musl and the tests go through the same code. */
#ifndef GREYGATE_COMPAT_H
#define GREYGATE_COMPAT_H

#include <search.h>
#include <sys/types.h>

/* compat_pidfd_open - a pidfd for pid (pidfd_open(2), Linux 5.3). Return:
 * the fd, or -1 with errno set (ENOSYS: an older kernel). */
int compat_pidfd_open(pid_t pid, unsigned int flags);

/* compat_close_from - every fd from low up closed (close_range(2), Linux
 * 5.9; before it, each fd /proc/self/fd lists). Return: 0 or -1 with
 * errno set. */
int compat_close_from(int low);

/* What compat_twalk_r calls: glibc's twalk_r's action. */
typedef void compat_walk_fn(const void *nodep, VISIT which, void *ctx);

/* compat_twalk_r - twalk_r (glibc 2.30) on POSIX twalk: every node of the
 * tsearch tree at root, with ctx. A walk may walk another tree inside its
 * action; not from two threads at once with the same action (each
 * thread has its own walk). */
void compat_twalk_r(const void *root, compat_walk_fn *action, void *ctx);

#endif
