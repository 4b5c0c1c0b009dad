// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the transparent hand-off's policy route (markroute.h) against
 * the kernel's routing tables, in a network namespace of this process's
 * own (unshare: it goes with the process): installed for IPv4 and IPv6
 * with greygate's protocol tag, one rule whatever a previous run left
 * (its stale rules removed and counted), a mark or table another rule
 * uses refused with nothing left in place, and all of it removed again.
 * Skipped (77) where no namespace can be made (not root). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "own_netns.h"
#include "markroute.h"

static const struct markroute_config route = {.mark = 0x4747,
                                              .table = 4747,
                                              .sport = 25};

/* Runs an iproute2 command in this namespace. Return: its exit status. */
static int
ip(const char *args)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "ip %s >/dev/null 2>&1", args);
	return system(cmd);
}

/* Installed once, whatever was there; removed whole. */
static void
test_installed_once_and_removed(void)
{
	struct markroute_result res;

	CHECK_INT(markroute_count(&route), 0);
	CHECK_INT(markroute_install(&route, &res), 0);
	CHECK_INT(res.stale, 0);
	CHECK(res.ipv6); /* (the namespace's loopback has IPv6) */
	CHECK_INT(markroute_count(&route), 2); /* (one a family) */
	CHECK_INT(ip("-4 route show table 4747 type local"), 0);
	/* a greygated killed before it removed them: the next start takes
	 * them away first, and there is still one rule */
	CHECK_INT(markroute_install(&route, &res), 0);
	CHECK_INT(res.stale, 2);
	CHECK_INT(markroute_count(&route), 2);
	CHECK_INT(markroute_remove(&route), 2);
	CHECK_INT(markroute_count(&route), 0);
	/* none there is no error */
	CHECK_INT(markroute_remove(&route), 0);
}

/* A mark or table a rule not greygate's uses is refused, and nothing of
 * greygate's is left behind; such a rule is never removed. */
static void
test_others_rules_refused_and_kept(void)
{
	struct markroute_result res;

	CHECK_INT(ip("-4 rule add fwmark 0x4747 lookup 100"), 0);
	CHECK_INT(markroute_install(&route, &res), -EADDRINUSE);
	CHECK(strlen(markroute_explain(-EADDRINUSE)) > 10);
	CHECK_INT(markroute_count(&route), 0);
	CHECK_INT(markroute_remove(&route), 0);
	CHECK_INT(ip("-4 rule del fwmark 0x4747 lookup 100"), 0);

	CHECK_INT(ip("-4 rule add fwmark 0x99 lookup 4747"), 0);
	CHECK_INT(markroute_install(&route, &res), -EADDRINUSE);
	CHECK_INT(markroute_count(&route), 0);
	CHECK_INT(ip("-4 rule del fwmark 0x99 lookup 4747"), 0);

	CHECK_INT(markroute_install(&route, &res), 0);
	CHECK_INT(markroute_count(&route), 2);
	CHECK_INT(markroute_remove(&route), 2);
}

/* This kernel can route by mark and port (the check needs no
 * privilege). */
static void
test_kernel_checked(void)
{
	CHECK_INT(markroute_check(), 0);
}

int
main(void)
{
	own_netns_or_skip();
	/* (a new namespace's loopback is down) */
	CHECK_INT(ip("link set lo up"), 0);
	RUN(test_kernel_checked);
	RUN(test_installed_once_and_removed);
	RUN(test_others_rules_refused_and_kept);
	return 0;
}
