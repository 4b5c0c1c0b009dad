/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The unprivileged child: the pcap sensor and the tarpit, everything that
 * reads bytes from the internet. It runs as its own user with no
 * capabilities under a seccomp filter, and sends its SMTP events and
 * counters up to greygated over a SOCK_SEQPACKET socket (ipc.h). */
#ifndef GREYGATE_CHILD_H
#define GREYGATE_CHILD_H

#include "config.h"

struct sensor_capture;

/* What the parent opened for the child while it still could. */
struct child_handles {
	struct sensor_capture *cap; /* the live capture */
	int listen_fd[4];           /* tarpit listeners, v4 and v6, then the
				       stutter's for trapped clients (-1:
				       none) */
	int sock;                   /* the child's end of the socketpair */
};

/*
 * child_run - in the forked child: close every other descriptor, drop to
 * cfg->user, no capabilities, no new privileges, seccomp; then serve
 * until the parent goes away or SIGTERM. Never returns.
 */
_Noreturn void child_run(const struct config *cfg, struct child_handles *h);

#endif
