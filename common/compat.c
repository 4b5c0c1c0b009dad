// SPDX-License-Identifier: GPL-2.0-or-later
/* Calls the C libraries disagree on (see compat.h). */
#include <dirent.h>
#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat.h"

int
compat_pidfd_open(pid_t pid, unsigned int flags)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, flags);
#else
	(void)pid;
	(void)flags;
	errno = ENOSYS;
	return -1;
#endif
}

/* Before close_range: each fd the process has, from the kernel's list
 * (opendir allocates: between a threaded process's fork and exec, only
 * on a kernel older than 5.9). */
static int
close_listed(int low)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int r = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && fd >= low &&
		    fd != dirfd(d))
			close(fd);
	}
	if (closedir(d) < 0)
		r = -1;
	return r;
}

int
compat_close_from(int low)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)low, ~0u, 0u) == 0)
		return 0;
	if (errno != ENOSYS)
		return -1;
#endif
	return close_listed(low);
}

/* The walk under way in this thread: POSIX's twalk passes no context. */
struct walk {
	compat_walk_fn *action;
	void *ctx;
};
static _Thread_local struct walk walking;

static void
walk_node(const void *nodep, VISIT which, int depth)
{
	(void)depth;
	walking.action(nodep, which, walking.ctx);
}

void
compat_twalk_r(const void *root, compat_walk_fn *action, void *ctx)
{
	struct walk outer = walking;

	walking.action = action;
	walking.ctx = ctx;
	twalk(root, walk_node);
	walking = outer;
}
