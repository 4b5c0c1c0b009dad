// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the sets' listener (daemon/sets/follow_sets.h) between two
 * gateways on one real redis-server, each a real decider over LMDB with
 * its allow lists, no kernel sets: what the store already holds is taken
 * at the start (said in one line); a run-time allow entry made at one
 * gateway reaches the other's lists and decisions, and so does its
 * removal. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_parts.h"
#include "check.h"
#include "decider_rig.h"
#include "follow_sets.h"
#include "log.h"
#include "log_capture.h"
#include "redis_server.h"
#include "nftset_commit.h"

static struct allow_settings allow_part;     /* (theirs) */

static struct redis_server server;

/* A gateway: its decider, allow lists and listener. */
struct gateway_rig {
	struct decider_rig rig;
	struct allow_lists *allow;
	struct sets_follower *sets;
};

static struct gateway_rig mx1, mx2;

static void
open_gateway(struct gateway_rig *g, const char *name)
{
	decider_rig_open(&g->rig, name, timesrc_system());
	decider_rig_use_redis(&g->rig, server.sock, name);
	snprintf(g->rig.cfg.allow_dir, sizeof(g->rig.cfg.allow_dir),
	         "%.100s/allow.d", g->rig.dir);
	config_allow_part(&g->rig.cfg, &allow_part);
	g->allow = allow_lists_open(
	        &(struct allow_links){g->rig.loop, g->rig.decider, NULL,
	                              g->rig.records}, &allow_part);
	CHECK(g->allow);
	CHECK_INT(allow_lists_reload(g->allow), 0);
	CHECK_INT(sets_follow_store(
	                  &(struct set_links){g->rig.loop, g->rig.decider, NULL,
	                                      g->rig.records, g->allow},
	                  &g->sets),
	          0);
}

static void
close_gateway(struct gateway_rig *g)
{
	allow_lists_close(g->allow);
	decider_rig_close(&g->rig); /* (the store's listener with it) */
	sets_follower_free(g->sets);
}

/* Both loops turn until cond holds (3 s at most). */
#define TURN_UNTIL(cond)                                                       \
	do {                                                                   \
		for (int t_ = 0; t_ < 300 && !(cond); t_++) {                  \
			loop_run_once(mx1.rig.loop, 5);                        \
			loop_run_once(mx2.rig.loop, 5);                        \
		}                                                              \
		CHECK(cond);                                                   \
	} while (0)

static bool
holds(const struct gateway_rig *g, const char *cidr)
{
	size_t n;
	const struct allow_runtime *e =
	        allow_lists_runtime_entries(g->allow, &n);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(e[i].cidr, cidr))
			return true;
	return false;
}

static enum grey_action
first_attempt(struct gateway_rig *g, const char *addr)
{
	return decider_rig_attempt(&g->rig, addr, "a@s.test", "b@example.org")
	        .action;
}

static void
test_allow_entries_follow(void)
{
	redis_server_start_or_skip(&server);
	log_capture_start();
	open_gateway(&mx1, "mx1.test");
	/* made before mx2 starts: taken at its start */
	CHECK_INT(allow_lists_runtime(mx1.allow, "198.51.100.0/24", 0, "bank"),
	          0);
	TURN_UNTIL(true);
	open_gateway(&mx2, "mx2.test");
	TURN_UNTIL(holds(&mx2, "198.51.100.0/24"));
	log_capture_expect("nft: rebuilt from ");
	CHECK_INT(first_attempt(&mx2, "198.51.100.7"), GREY_ALLOWED);

	/* made while both run: mx2 has it within its turns */
	CHECK_INT(allow_lists_runtime(mx1.allow, "203.0.113.0/24", 3600,
	                              "for an hour"),
	          0);
	TURN_UNTIL(holds(&mx2, "203.0.113.0/24"));
	CHECK_INT(first_attempt(&mx2, "203.0.113.9"), GREY_ALLOWED);
	log_capture_expect("action=allow, client=203.0.113.0/24");
	log_capture_expect("comment=for an hour (from the shared store)");

	/* taken away at mx2: gone at mx1 too */
	CHECK_INT(allow_lists_disallow(mx2.allow, "198.51.100.0/24", "test"),
	          0);
	TURN_UNTIL(!holds(&mx1, "198.51.100.0/24"));
	log_capture_expect("action=disallow, client=198.51.100.0/24 (from "
	                   "the shared store)");
	CHECK_INT(first_attempt(&mx1, "198.51.100.8"), GREY_GREYLIST);
	CHECK(holds(&mx1, "203.0.113.0/24"));
	log_capture_stop();
	close_gateway(&mx2);
	close_gateway(&mx1);
	redis_server_stop(&server);
}

/* A set change that does not reach the kernel is said the first time and
 * every hundredth, with what the client sees (the sets own their commit
 * and its failures, issue 58: the decider counted them). */
static void
test_set_failures_said(void)
{
	log_capture_start();
	for (uint64_t i = 1; i <= 250; i++)
		nftset_say_failed(i, "pass", "198.51.100.0/24", -ENOBUFS);
	log_capture_expect("nft: pass of 198.51.100.0/24 did not reach the kernel's "
	             "set (No buffer space available): it meets the tarpit "
	             "again until one of its attempts puts it back (1 set "
	             "change(s) failed so far)");
	log_capture_expect("(101 set change(s) failed so far)");
	log_capture_expect("(201 set change(s) failed so far)");
	CHECK(!strstr(log_capture_text(), "(2 set change(s)"));
	nftset_say_failed(301, "trap", "192.0.2.66", -EIO);
	log_capture_expect("it is greylisted, not trapped, until it is trapped again");
	nftset_say_failed(401, "forget", "192.0.2.66", -EIO);
	log_capture_expect("it stays passed until its element times out");
	/* (no sets: nothing counted, nothing said) */
	nftset_failed(NULL, "pass", "192.0.2.1", -EIO);
	CHECK(!strstr(log_capture_text(), "192.0.2.1 "));
	log_capture_stop();
}

int
main(void)
{
	log_init("test-follow-sets", false, LOG_LEVEL_INFO);
	RUN(test_allow_entries_follow);
	RUN(test_set_failures_said);
	return 0;
}
