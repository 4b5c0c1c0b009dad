/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The unprivileged child: the pcap sensor and the tarpit, everything that
 * reads bytes from the internet. greygated starts it as a new program
 * (its own binary again, `greygated --child`), so it holds nothing of
 * greygated's memory: not the store's map, not the heap. It takes its
 * settings from the first record on the socketpair, opens its capture
 * while it still can, becomes its own user with no capabilities under a
 * seccomp filter (sandbox.h), and sends its SMTP events, counters and log
 * lines up to greygated (ipc.h). */
#ifndef GREYGATE_CHILD_H
#define GREYGATE_CHILD_H

#include <stdbool.h>

/* What greygated opened for the child, put at fixed numbers before the
 * exec (ipc.h: IPC_FD_SOCK, IPC_FD_LISTEN...). */
struct child_handles {
	int listen_fd[4]; /* tarpit listeners, v4 and v6, then the stutter's
			     for trapped clients (-1: none) */
	int sock;         /* the child's end of the socketpair */
	bool keep_stderr; /* greygated logs to stderr: the child's goes
			     there too (sanitizer reports); else /dev/null */
};

/*
 * child_exec - in the forked process: put h's descriptors at their fixed
 * numbers, close every other, and exec greygated --child. Returns only if
 * the exec failed (the caller then _exits).
 */
void child_exec(const struct child_handles *h);

/* child_main - `greygated --child`: serve until greygated goes away or
 * SIGTERM. Return: the exit status. */
int child_main(void);

#endif
