// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the allow lists as a service, through allow_lists.h only,
 * made with a real decider over a real LMDB store and no kernel sets
 * (as greygated without a gateway): a run-time entry allows its network at the
 * decider at once, is kept across a restart, is one entry however it is
 * written, ends with its ttl, goes with disallow; what cannot be an entry is
 * refused with its own error; entries of the files are not the admin's to
 * disallow; every reload is a new generation. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config_parts.h"
#include "allow_lists.h"
#include "check.h"
#include "decider_rig.h"
#include "log.h"

#define T0 1700000000

static struct timesrc_fake clock_;
static struct decider_rig rig;

static struct allow_lists *
open_lists(void)
{
	struct allow_settings part;
	struct allow_lists *al;

	config_allow_part(&rig.cfg, &part);
	al = allow_lists_open(&(struct allow_links){
	        rig.loop, rig.decider, NULL, rig.records}, &part);

	CHECK(al);
	CHECK_INT(allow_lists_reload(al), 0);
	return al;
}

static void
setup(void)
{
	char path[300];
	FILE *f;

	timesrc_fake_init(&clock_, T0);
	decider_rig_open(&rig, "allow-lists", &clock_.base);
	/* one file of the admin's: a provider's bank */
	snprintf(rig.cfg.allow_dir, sizeof(rig.cfg.allow_dir), "%s/allow.d",
	         rig.dir);
	CHECK_INT(mkdir(rig.cfg.allow_dir, 0700), 0);
	snprintf(path, sizeof(path), "%.250s/bank.txt", rig.cfg.allow_dir);
	CHECK((f = fopen(path, "w")));
	fputs("# a provider's bank\n203.0.113.0/24\n", f);
	fclose(f);
}

static void
teardown(void)
{
	decider_rig_close(&rig);
}

/* What the decider does with a first attempt from addr. */
static enum grey_action
first_attempt(const char *addr)
{
	return decider_rig_attempt(&rig, addr, "alice@example.com",
	                           "bob@example.org")
	        .action;
}

static bool
holds(const struct allow_lists *al, const char *cidr)
{
	size_t n;
	const struct allow_runtime *e = allow_lists_runtime_entries(al, &n);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(e[i].cidr, cidr))
			return true;
	return false;
}

/* An entry allows its network at once, and is there after a restart. */
static void
test_runtime_entry_allows_and_stays(void)
{
	struct allow_lists *al;
	size_t n;
	uint64_t g0, g1;

	setup();
	al = open_lists();
	allow_lists_ranges(al, &n, &g0);
	CHECK_INT(n, 1); /* the file's bank */
	CHECK_INT(first_attempt("198.51.100.7"), GREY_GREYLIST);
	CHECK_INT(allow_lists_runtime(al, "198.51.100.0/24", 0, "partner"), 0);
	allow_lists_ranges(al, &n, &g1);
	CHECK_INT(n, 2);
	CHECK(g1 > g0); /* a new generation with every reload */
	CHECK_INT(first_attempt("198.51.100.8"), GREY_ALLOWED);
	CHECK_INT(first_attempt("203.0.113.9"), GREY_ALLOWED);
	allow_lists_close(al);

	/* greygated again: the saved list read back, the policy told */
	decider_close(rig.decider);
	CHECK_INT(decider_open(rig.decider, rig.store), 0);
	CHECK_INT(first_attempt("198.51.100.9"), GREY_GREYLIST);
	al = open_lists();
	CHECK(holds(al, "198.51.100.0/24"));
	CHECK_INT(first_attempt("198.51.100.10"), GREY_ALLOWED);
	allow_lists_close(al);
	teardown();
}

/* The same network however written is one entry; its comment and ttl
 * are the last given. */
static void
test_one_entry_per_network(void)
{
	struct allow_lists *al;
	const struct allow_runtime *e;
	size_t n;

	setup();
	al = open_lists();
	CHECK_INT(allow_lists_runtime(al, "198.51.100.0/24", 0, "first"), 0);
	CHECK_INT(allow_lists_runtime(al, "198.51.100.77/24", 600, "second"),
	          0);
	e = allow_lists_runtime_entries(al, &n);
	CHECK_INT(n, 1);
	CHECK_STR(e[0].cidr, "198.51.100.0/24");
	CHECK_STR(e[0].comment, "second");
	CHECK_INT(e[0].expires, T0 + 600);
	CHECK_INT(allow_lists_runtime(al, "2001:db8:1::/48", 0, NULL), 0);
	e = allow_lists_runtime_entries(al, &n);
	CHECK_INT(n, 2);
	CHECK_INT(first_attempt("2001:db8:1::25"), GREY_ALLOWED);
	allow_lists_close(al);
	teardown();
}

/* What cannot be an entry is refused, each with its own error, and
 * nothing is added. */
static void
test_refusals(void)
{
	struct allow_lists *al;
	size_t n;

	setup();
	al = open_lists();
	CHECK_INT(allow_lists_runtime(al, "not-a-network", 0, ""), -EINVAL);
	CHECK_INT(allow_lists_runtime(al, "198.51.100.0/33", 0, ""), -EINVAL);
	CHECK_INT(allow_lists_runtime(al, "198.51.100.0/24",
	                              ALLOW_TTL_MAX_SEC + 1, ""),
	          -ERANGE);
	CHECK_INT(allow_lists_runtime(al, "198.51.100.0/24", 0, "two\nlines"),
	          -EILSEQ);
	allow_lists_runtime_entries(al, &n);
	CHECK_INT(n, 0);
	CHECK_INT(first_attempt("198.51.100.7"), GREY_GREYLIST);
	allow_lists_close(al);
	teardown();
}

/* An entry with a ttl ends with it: dropped, saved, out of the policy at
 * the reload housekeeping does. */
static void
test_ttl_ends(void)
{
	struct allow_lists *al;
	size_t n;

	setup();
	al = open_lists();
	CHECK_INT(allow_lists_runtime(al, "198.51.100.0/24", 60, "a minute"),
	          0);
	CHECK_INT(first_attempt("198.51.100.7"), GREY_ALLOWED);
	CHECK(!allow_lists_expire(al, T0 + 59)); /* (its last second) */
	CHECK(allow_lists_expire(al, T0 + 60));
	allow_lists_runtime_entries(al, &n);
	CHECK_INT(n, 0);
	timesrc_fake_advance_ms(&clock_, 60 * 1000);
	CHECK_INT(allow_lists_reload(al), 0);
	CHECK_INT(first_attempt("198.51.100.8"), GREY_GREYLIST);
	allow_lists_close(al);
	/* and the saved list no longer holds it */
	al = open_lists();
	CHECK(!holds(al, "198.51.100.0/24"));
	allow_lists_close(al);
	teardown();
}

/* disallow takes a run-time entry away, however written; one that is
 * not there (or is the files') is -ENOENT and changes nothing. */
static void
test_disallow(void)
{
	struct allow_lists *al;
	size_t n;

	setup();
	al = open_lists();
	CHECK_INT(allow_lists_runtime(al, "198.51.100.0/24", 0, ""), 0);
	CHECK_INT(allow_lists_disallow(al, "192.0.2.0/24", "test"), -ENOENT);
	CHECK_INT(allow_lists_disallow(al, "203.0.113.0/24", "test"), -ENOENT);
	CHECK_INT(allow_lists_disallow(al, "nonsense", "test"), -EINVAL);
	CHECK_INT(allow_lists_disallow(al, "198.51.100.1/24", "test"), 0);
	allow_lists_runtime_entries(al, &n);
	CHECK_INT(n, 0);
	allow_lists_ranges(al, &n, NULL);
	CHECK_INT(n, 1); /* the file's stays */
	CHECK_INT(first_attempt("198.51.100.7"), GREY_GREYLIST);
	CHECK_INT(first_attempt("203.0.113.7"), GREY_ALLOWED);
	allow_lists_close(al);
	teardown();
}

/* Entries told by another gateway (put, remove without apply) wait for
 * one apply: the policy changes then, not before. */
static void
test_put_then_apply(void)
{
	struct allow_lists *al;
	struct allow_runtime e = {.cidr = "198.51.100.0/24",
	                          .comment = "from mx2"};
	struct grey_client net;

	setup();
	al = open_lists();
	CHECK_INT(allow_lists_put(al, &e, false), 1);
	CHECK_INT(allow_lists_put(al, &e, false), 0); /* the same again */
	CHECK_INT(first_attempt("198.51.100.7"), GREY_GREYLIST);
	CHECK_INT(allow_lists_apply(al), 0);
	CHECK_INT(first_attempt("198.51.100.8"), GREY_ALLOWED);
	CHECK_INT(grey_cidr_parse("198.51.100.0/24", &net), 0);
	CHECK_INT(allow_lists_remove(al, &net, true), 1);
	CHECK_INT(allow_lists_remove(al, &net, true), 0);
	CHECK_INT(first_attempt("198.51.100.9"), GREY_GREYLIST);
	allow_lists_close(al);
	teardown();
}

int
main(void)
{
	log_init("test-allow-lists", false, LOG_LEVEL_WARN);
	RUN(test_runtime_entry_allows_and_stays);
	RUN(test_one_entry_per_network);
	RUN(test_refusals);
	RUN(test_ttl_ends);
	RUN(test_disallow);
	RUN(test_put_then_apply);
	return 0;
}
