// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the calls the C libraries disagree on (compat.h), the same on
 * glibc and musl: the tree walk with a context, inside another walk too
 * (each walk's context its own); every fd from a number up closed, the
 * ones below kept; a pidfd readable when its process ends. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <search.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "compat.h"

static void
keep(void *p)
{
	(void)p; /* (static arrays: nothing to free) */
}

static int
cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

struct sum {
	long total;
	const void *inner_root; /* walked inside each node's visit, if set */
	long inner_total;
};

static void
add_inner(const void *nodep, VISIT which, void *ctx)
{
	if (which == postorder || which == leaf)
		*(long *)ctx += **(int *const *)nodep;
}

static void
add(const void *nodep, VISIT which, void *ctx)
{
	struct sum *s = ctx;

	if (which != postorder && which != leaf)
		return;
	s->total += **(int *const *)nodep;
	if (s->inner_root)
		compat_twalk_r(s->inner_root, add_inner, &s->inner_total);
}

static void
test_twalk_r(void)
{
	static int outer[100], inner[10];
	void *root = NULL, *inner_root = NULL;
	struct sum s = {0};

	for (int i = 0; i < 100; i++) {
		outer[i] = i + 1;
		CHECK(tsearch(&outer[i], &root, cmp_int));
	}
	for (int i = 0; i < 10; i++) {
		inner[i] = 1000 + i;
		CHECK(tsearch(&inner[i], &inner_root, cmp_int));
	}
	compat_twalk_r(root, add, &s);
	CHECK_INT(s.total, 5050);
	s = (struct sum){.inner_root = inner_root};
	compat_twalk_r(root, add, &s);
	CHECK_INT(s.total, 5050);
	CHECK_INT(s.inner_total, 100 * 10045);
	compat_twalk_r(NULL, add, &s); /* an empty tree: nothing */
	CHECK_INT(s.total, 5050);
	tdestroy(root, keep);
	tdestroy(inner_root, keep);
	printf("ok: the walk's context, inside another walk too\n");
}

static bool
open_fd(int fd)
{
	return fcntl(fd, F_GETFD) >= 0 || errno != EBADF;
}

static void
test_close_from(void)
{
	int null_fd = open("/dev/null", O_RDONLY);

	CHECK(null_fd >= 0);
	CHECK(dup2(null_fd, 200) == 200 && dup2(null_fd, 201) == 201 &&
	      dup2(null_fd, 300) == 300 && dup2(null_fd, 199) == 199);
	CHECK_INT(compat_close_from(200), 0);
	CHECK(!open_fd(200) && !open_fd(201) && !open_fd(300));
	CHECK(open_fd(199) && open_fd(null_fd) && open_fd(2));
	close(199);
	close(null_fd);
	printf("ok: every fd from 200 up closed, those below kept\n");
}

static void
test_pidfd(void)
{
	pid_t pid = fork();
	int fd, status;

	CHECK(pid >= 0);
	if (pid == 0)
		_exit(3);
	fd = compat_pidfd_open(pid, 0);
	if (fd < 0) {
		CHECK_INT(errno, ENOSYS); /* a kernel before 5.3 */
		waitpid(pid, &status, 0);
		printf("ok: no pidfd on this kernel, said as ENOSYS\n");
		return;
	}
	CHECK_INT(poll(&(struct pollfd){.fd = fd, .events = POLLIN}, 1, 10000), 1);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	close(fd);
	printf("ok: the pidfd is readable when its process ends\n");
}

int
main(void)
{
	test_twalk_r();
	test_close_from();
	test_pidfd();
	printf("PASS\n");
	return 0;
}
