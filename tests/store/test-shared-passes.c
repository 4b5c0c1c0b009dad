// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the passes a gateway on a shared store knows (for decisions
 * while Redis is away): found while they last and not after, kept with
 * the earliest start and the latest end, told apart by family and
 * prefix, forgotten, purged when ended; a start not known is what it
 * must have been at the latest (the end less the pass's length). */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "check.h"
#include "check_grey.h"
#include "policy.h"
#include "shared_passes.h"

#define T0 1800000000LL
#define TTL (35 * 86400u)

static void
test_found_while_it_lasts(void)
{
	struct shared_passes *p = shared_passes_new();
	struct grey_client a = net("198.51.100.0/24");
	struct store_client rec;

	CHECK(p);
	CHECK(!shared_passes_find(p, &a, T0, TTL, &rec));
	CHECK_INT(shared_passes_put(p, &a, T0 - 100, T0 + 100), 0);
	CHECK(shared_passes_find(p, &a, T0, TTL, &rec));
	CHECK_INT(rec.since, T0 - 100);
	CHECK_INT(rec.expires, T0 + 100);
	CHECK_INT(rec.deliveries, 0);
	CHECK(!shared_passes_find(p, &a, T0 + 100, TTL, &rec));
	/* again: the earlier start, the later end */
	CHECK_INT(shared_passes_put(p, &a, T0 - 50, T0 + 900), 0);
	CHECK_INT(shared_passes_put(p, &a, T0 - 500, T0 + 10), 0);
	CHECK(shared_passes_find(p, &a, T0, TTL, &rec));
	CHECK_INT(rec.since, T0 - 500);
	CHECK_INT(rec.expires, T0 + 900);
	CHECK_INT(shared_passes_count(p), 1);
	shared_passes_free(p);
}

/* Issue 29 D3: a pass known here was made or last refreshed pass_ttl
 * before its end: a delivery decided from it (Redis away) refreshes it
 * at most once per refresh_interval, as the store's record would. */
static void
test_refresh_interval_holds(void)
{
	struct shared_passes *p = shared_passes_new();
	struct grey_config cfg;
	struct grey *bare;
	struct grey_attempt a = {.kind = GREY_ATTEMPT_RCPT, .now = T0,
	                         .helo = "", .sender = "a@example.org",
	                         .rcpt = "b@example.net",
	                         .path = GREY_PATH_FAST, .reply = 250};
	struct grey_records w;
	struct grey_decision d;

	CHECK(p);
	grey_config_defaults(&cfg); /* refresh_interval: an hour */
	bare = grey_new(&cfg);
	CHECK(bare);
	a.client.family = AF_INET;
	memcpy(a.client.bytes, (uint8_t[]){198, 51, 100, 7}, 4);
	grey_records_prepare(bare, &a, &w);
	/* passed 10 minutes ago */
	CHECK_INT(shared_passes_put(p, &w.pass_key, T0 - 600,
	                            T0 - 600 + cfg.pass_ttl_sec),
	          0);
	CHECK(shared_passes_find(p, &w.pass_key, T0, cfg.pass_ttl_sec,
	                         &w.pass));
	CHECK_INT(w.pass.refreshed, T0 - 600);
	w.pass_found = STORE_FOUND;
	CHECK_INT(grey_decide_records(bare, &a, &w, &d), 0);
	CHECK_INT(d.action, GREY_PASS); /* not a refresh */
	/* refreshed 2 hours ago (its end moved on): refreshed now */
	a.now = T0 + 7200;
	CHECK_INT(shared_passes_put(p, &w.pass_key, 0,
	                            T0 + cfg.pass_ttl_sec),
	          0);
	grey_records_prepare(bare, &a, &w);
	CHECK(shared_passes_find(p, &w.pass_key, a.now, cfg.pass_ttl_sec,
	                         &w.pass));
	CHECK_INT(w.pass.refreshed, T0);
	CHECK_INT(w.pass.since, T0 - 600);
	w.pass_found = STORE_FOUND;
	CHECK_INT(grey_decide_records(bare, &a, &w, &d), 0);
	CHECK_INT(d.action, GREY_REFRESH);
	grey_free(bare);
	shared_passes_free(p);
}

static void
test_start_not_known(void)
{
	struct shared_passes *p = shared_passes_new();
	struct grey_client a = net("203.0.113.0/24");
	struct store_client rec;

	CHECK_INT(shared_passes_put(p, &a, 0, T0 + TTL), 0);
	CHECK(shared_passes_find(p, &a, T0, TTL, &rec));
	CHECK_INT(rec.since, T0);
	/* a start learned later takes its place */
	CHECK_INT(shared_passes_put(p, &a, T0 - 7, T0 + 5), 0);
	CHECK(shared_passes_find(p, &a, T0, TTL, &rec));
	CHECK_INT(rec.since, T0 - 7);
	CHECK_INT(rec.expires, T0 + TTL);
	shared_passes_free(p);
}

static void
test_keys_told_apart(void)
{
	struct shared_passes *p = shared_passes_new();
	struct grey_client v4 = net("198.51.100.0/24");
	struct grey_client v4_32 = net("198.51.100.0/32");
	struct grey_client v6 = net("2001:db8:1::/64");
	struct grey_client v6_other = net("2001:db8:2::/64");
	struct store_client rec;

	CHECK_INT(shared_passes_put(p, &v4, T0, T0 + 10), 0);
	CHECK_INT(shared_passes_put(p, &v6, T0, T0 + 20), 0);
	CHECK(!shared_passes_find(p, &v4_32, T0, TTL, &rec));
	CHECK(!shared_passes_find(p, &v6_other, T0, TTL, &rec));
	CHECK(shared_passes_find(p, &v6, T0, TTL, &rec));
	CHECK_INT(rec.expires, T0 + 20);
	shared_passes_forget(p, &v6);
	shared_passes_forget(p, &v6_other); /* (not there: nothing) */
	CHECK(!shared_passes_find(p, &v6, T0, TTL, &rec));
	CHECK(shared_passes_find(p, &v4, T0, TTL, &rec));
	CHECK_INT(shared_passes_count(p), 1);
	shared_passes_free(p);
}

/* Many, half of them ended: a purge drops exactly those. Also what a
 * pass costs in memory (the README's figure), at most 128 bytes. */
static void
test_purge(void)
{
	struct shared_passes *p = shared_passes_new();
	struct store_client rec;
	char cidr[64];
	size_t before = mallinfo2().uordblks, per_pass;

	for (int i = 0; i < 5000; i++) {
		struct grey_client c;

		snprintf(cidr, sizeof(cidr), "2001:db8:%x::/64", i);
		c = net(cidr);
		CHECK_INT(
		        shared_passes_put(p, &c, T0, i % 2 ? T0 + 60 : T0 - 1),
		        0);
	}
	CHECK_INT(shared_passes_count(p), 5000);
	if (mallinfo2().uordblks > before) {
		per_pass = (mallinfo2().uordblks - before) / 5000;
		printf("memory: %zu bytes a pass known\n", per_pass);
		CHECK(per_pass <= 128);
	} else {
		printf("memory: not measured (a sanitizer's allocator)\n");
	}
	CHECK_INT(shared_passes_purge(p, T0), 2500);
	CHECK_INT(shared_passes_count(p), 2500);
	CHECK_INT(shared_passes_purge(p, T0), 0);
	for (int i = 0; i < 5000; i++) {
		struct grey_client c;

		snprintf(cidr, sizeof(cidr), "2001:db8:%x::/64", i);
		c = net(cidr);
		CHECK(shared_passes_find(p, &c, T0, TTL, &rec) == (i % 2 == 1));
	}
	CHECK_INT(shared_passes_purge(p, T0 + 60), 2500);
	CHECK_INT(shared_passes_count(p), 0);
	shared_passes_free(p);
	shared_passes_free(NULL);
}

int
main(void)
{
	RUN(test_found_while_it_lasts);
	RUN(test_start_not_known);
	RUN(test_refresh_interval_holds);
	RUN(test_keys_told_apart);
	RUN(test_purge);
	return 0;
}
