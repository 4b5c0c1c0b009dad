/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A unit test that needs the kernel's networking (nftables, policy
 * routes) runs in a network namespace of its own: made with unshare, it
 * goes with the process, so the machine's own is never touched and
 * nothing is left to remove. */
#ifndef GREYGATE_TEST_OWN_NETNS_H
#define GREYGATE_TEST_OWN_NETNS_H

#include <errno.h>
#include <linux/netlink.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Can this process speak the netlink family? (qemu-user, which runs the
 * arm64 build's unit tests, has no nf_tables netlink and no
 * IP_TRANSPARENT: those tests are the native build's.) */
static inline bool
own_netns_speaks(int family)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, family);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* own_netns_or_skip - this process in a new network namespace, or the
 * test skipped (exit 77: meson's "skipped") where it cannot make one
 * (not root) or cannot speak nf_tables' and the routes' netlink. */
static inline void
own_netns_or_skip(void)
{
	if (unshare(CLONE_NEWNET) < 0) {
		printf("SKIP: no network namespace of its own (%s)\n",
		       strerror(errno));
		exit(77);
	}
	if (!own_netns_speaks(NETLINK_NETFILTER) ||
	    !own_netns_speaks(NETLINK_ROUTE)) {
		printf("SKIP: no netlink for nf_tables or routes here "
		       "(qemu-user?)\n");
		exit(77);
	}
}

#endif
