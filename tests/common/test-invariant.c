// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the invariants (common/invariant.h), in forked children: a
 * broken one aborts and its log line names the file, the line, the
 * function and what broke; one that holds costs nothing; a hash table
 * freed with entries in it is such a break (a registry that must be
 * empty when freed, issue 58). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "hash_table.h"
#include "invariant.h"
#include "log.h"

/* Runs fn in a child, its stderr into out; its wait status. */
static int
in_child(void (*fn)(void), char *out, size_t len)
{
	int fds[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	CHECK_INT(pipe(fds), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		log_init("test-invariant", false, LOG_LEVEL_INFO);
		fn();
		_exit(0);
	}
	close(fds[1]);
	while ((n = read(fds[0], out + got, len - 1 - (size_t)got)) > 0)
		got += n;
	out[got] = 0;
	close(fds[0]);
	CHECK_INT(waitpid(pid, &status, 0), pid);
	return status;
}

static void
holds(void)
{
	int x = 2;

	INVARIANT(x == 2);
}

static void
breaks(void)
{
	int x = 2;

	INVARIANT(x == 3);
}

static void
freed_full(void)
{
	struct hash_table t;
	struct hash_node n;

	if (hash_table_init(&t, 4) == 0) {
		hash_table_add(&t, &n, hash_table_hash(&t, "k", 1));
		hash_table_free(&t);
	}
}

static void
test_broken_says_where(void)
{
	char out[1024];
	int status;

	status = in_child(holds, out, sizeof(out));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_STR(out, "");
	status = in_child(breaks, out, sizeof(out));
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	CHECK(strstr(out, "invariant broken at "));
	CHECK(strstr(out, "test-invariant.c:"));
	CHECK(strstr(out, " in breaks(): x == 3"));
	status = in_child(freed_full, out, sizeof(out));
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	CHECK(strstr(out, "hash_table.c:"));
	CHECK(strstr(out, "in hash_table_free(): t->count == 0"));
}

int
main(void)
{
	RUN(test_broken_says_where);
	return 0;
}
