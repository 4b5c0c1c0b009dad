/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A unit test that needs the kernel's networking (nftables, policy
 * routes) runs in a network namespace of its own: made with unshare, it
 * goes with the process, so the machine's own is never touched and
 * nothing is left to remove. */
#ifndef GREYGATE_TEST_OWN_NETNS_H
#define GREYGATE_TEST_OWN_NETNS_H

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* own_netns_or_skip - this process in a new network namespace, or the
 * test skipped (exit 77: meson's "skipped") where it cannot make one
 * (not root). */
static inline void
own_netns_or_skip(void)
{
	if (unshare(CLONE_NEWNET) < 0) {
		printf("SKIP: no network namespace of its own (%s)\n",
		       strerror(errno));
		exit(77);
	}
}

#endif
