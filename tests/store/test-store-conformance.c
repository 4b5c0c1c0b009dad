// SPDX-License-Identifier: GPL-2.0-or-later
/* The greylist's store interface (store/grey_store.h), the same story
 * told to each backend through greygated's decider (decider_decide_async):
 * LMDB, memory, and a real redis-server through greygated's shared-store
 * glue (tests/lib/redis_server.h: a unix socket, no network). Every
 * backend must give the same decisions: a new triplet greylisted, an
 * early retry greylisted with the seconds left, a retry after the delay
 * passed, the passed network's other addresses passed, a visit within
 * the refresh interval not a refresh and one after it a refresh, a
 * greytrap trapped and still trapped; and a new greylist over the same
 * store (a restart's) finds the pass and the trap there, not in the
 * greylist that decided them; forgotten, they are gone. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#include "config_parts.h"
#include "check.h"
#include "decide.h"
#include "decider_rig.h"
#include "grey_store.h"
#include "log.h"
#include "redis_server.h"
#include "shared.h"

/* What the decider is made with, as greygated wires it. */
static struct {
	struct config *cfg;
	struct loop *loop;
	struct store *store;
	struct grey_store *records;
	struct decider *decider;
} gw;
static struct config cfg;
static char dir[64];
static struct redis_server server;
/* Redis keeps keys by its own clock: the story happens now. */
static int64_t t0;

/* --- the backends --- */

static void
open_common(void)
{
	struct decider_settings part;

	snprintf(dir, sizeof(dir), "/tmp/gg-conformance-XXXXXX");
	CHECK(mkdtemp(dir));
	config_defaults(&cfg);
	snprintf(cfg.store_dir, sizeof(cfg.store_dir), "%s", dir);
	memset(&gw, 0, sizeof(gw));
	gw.cfg = &cfg;
	gw.loop = loop_new(timesrc_system());
	CHECK(gw.loop);
	/* (the report's own store, as greygated keeps beside Redis) */
	CHECK_INT(store_open(dir, false, &gw.store), 0);
	config_decider_part(&cfg, &part);
	gw.decider = decider_new(gw.loop, &part);
	CHECK(gw.decider);
	CHECK_INT(decider_open(gw.decider, gw.store), 0);
	CHECK_INT(grey_trap_add(decider_grey(gw.decider), "trap@example.org"),
	          0);
}

static void
open_lmdb(void)
{
	open_common();
	gw.records = grey_store_lmdb_new(gw.store);
	CHECK(gw.records);
	decider_use_records(gw.decider, gw.records);
}

static void
open_memory(void)
{
	open_common();
	gw.records = grey_store_memory_new();
	CHECK(gw.records);
	decider_use_records(gw.decider, gw.records);
}

static void
open_redis(void)
{
	struct shared_settings part;
	char err[512] = "", path[128];
	const char *why = NULL;
	FILE *f;

	redis_server_start_or_skip(&server);
	open_common();
	snprintf(cfg.store, sizeof(cfg.store), "redis+unix://%s", server.sock);
	CHECK_INT(store_url_parse(cfg.store, &cfg.store_url, &why), 0);
	snprintf(path, sizeof(path), "%s/redis.pass", dir);
	CHECK((f = fopen(path, "w")));
	fputs(REDIS_TEST_PASSWORD "\n", f);
	fclose(f);
	CHECK_INT(chmod(path, 0600), 0);
	snprintf(cfg.store_password_file, sizeof(cfg.store_password_file),
	         "%s", path);
	snprintf(cfg.hostname, sizeof(cfg.hostname), "mx1.test");
	config_shared_part(&cfg, &part);
	if (shared_open(gw.loop, &part, &(struct shared_allow_source){0},
	                &gw.records, err) < 0) {
		fprintf(stderr, "shared_open: %s\n", err);
		exit(1);
	}
	CHECK(gw.records);
	decider_use_records(gw.decider, gw.records);
	struct grey_store_status st;
	grey_store_get_status(gw.records, &st);
	CHECK(st.remote);
	CHECK(st.up);
}

static void
close_backend(void)
{
	char cmd[128];

	grey_store_free(gw.records); /* (Redis: its connection too) */
	decider_free(gw.decider);
	store_close(gw.store);
	loop_free(gw.loop);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
}

/* --- the story --- */

/* One attempt at t0 + at, decided through the interface; its answer. */
static struct grey_decision
decide(enum grey_attempt_kind kind, const char *client, const char *sender,
       const char *rcpt, enum grey_path path, int64_t at, bool pooled)
{
	struct grey_attempt a = {.kind = kind,
	                         .now = t0 + at,
	                         .helo = "c.test",
	                         .sender = sender,
	                         .rcpt = rcpt,
	                         .path = path,
	                         .pooled = pooled};

	a.client.family = AF_INET;
	CHECK_INT(inet_pton(AF_INET, client, a.client.bytes), 1);
	return decider_wait(gw.loop, gw.decider, &a, false);
}

static struct grey_decision
rcpt(const char *client, const char *sender, const char *to, int64_t at)
{
	return decide(GREY_ATTEMPT_RCPT, client, sender, to, GREY_PATH_TARPIT,
	              at, false);
}

static struct grey_decision
visit(const char *client, int64_t at)
{
	return decide(GREY_ATTEMPT_VISIT, client, "", "", GREY_PATH_FAST, at,
	              false);
}

/* --- walks --- */

struct seen {
	size_t clients, triplets;
	char first[64];
	size_t pooled; /* triplets keyed by the pool ("spf") */
	char pooled_sender[64];
	bool woken;
};

static int
seen_client(const struct grey_client *c, const struct store_client *rec,
            void *ctx)
{
	struct seen *n = ctx;

	if (!n->clients++)
		grey_client_format(c, n->first, sizeof(n->first));
	return 0;
}

static int
seen_triplet(const struct grey_client *c, const char *sender,
             const char *rcpt, const struct store_triplet *t, void *ctx)
{
	struct seen *n = ctx;

	if (!n->triplets++)
		snprintf(n->first, sizeof(n->first), "%s>%s", sender, rcpt);
	if (c->family == GREY_FAMILY_POOL && !n->pooled++)
		snprintf(n->pooled_sender, sizeof(n->pooled_sender), "%s",
		         sender);
	return 0;
}

static void
woken(void *ctx)
{
	((struct seen *)ctx)->woken = true;
}

/* Every row of a walk, one at a time (the reader's batch at its least);
 * a walk that says "later" is waited for on the loop until it wakes its
 * reader (no fixed wait). */
static struct seen
walk_all(enum grey_store_table table, int64_t at)
{
	struct seen n = {0};
	const struct grey_store_rows rows = {seen_client, seen_triplet, &n};
	struct grey_store_walk *w;
	int r;

	CHECK_INT(grey_store_walk_start(gw.records, table, t0 + at, &w), 0);
	while ((r = grey_store_walk_more(w, 1, &rows, woken, &n)) != 0) {
		CHECK(r == GREY_STORE_WALK_MORE || r == GREY_STORE_WALK_LATER);
		if (r == GREY_STORE_WALK_LATER) {
			n.woken = false;
			LOOP_UNTIL(gw.loop, n.woken, 5000);
			CHECK(n.woken);
		}
	}
	grey_store_walk_end(w);
	return n;
}

static void
walk_story(void)
{
	const uint32_t delay = cfg.grey.delay_sec;
	struct seen n;
	struct grey_store_walk *w;

	n = walk_all(GREY_STORE_PASSES, delay + 11);
	CHECK_INT(n.clients, 1);
	CHECK_STR(n.first, "198.51.100.0/24");
	n = walk_all(GREY_STORE_TRAPS, delay + 11);
	CHECK_INT(n.clients, 1);
	CHECK_STR(n.first, "203.0.113.5/32");
	/* a pass is told while it lasts, not after */
	n = walk_all(GREY_STORE_PASSES,
	             delay + cfg.grey.refresh_interval_sec + 3 +
	                     cfg.grey.pass_ttl_sec);
	CHECK_INT(n.clients, 0);
	/* alice>bob of 198.51.100.0/24 (it passed) and of 203.0.113.5
	 * (greylisted); a passed or trapped client's attempts keep none */
	n = walk_all(GREY_STORE_TRIPLETS, delay + 11);
	CHECK_INT(n.clients, 0);
	CHECK_INT(n.triplets, 2);
	/* a walk ended before it is over frees what it holds */
	CHECK_INT(grey_store_walk_start(gw.records, GREY_STORE_TRIPLETS, t0,
	                                &w),
	          0);
	grey_store_walk_end(w);
	LOOP_UNTIL(gw.loop, false, 50); /* (a scan's end, if under way: a
	                                    later one is freed at close) */
}

/* --- following --- */

struct followed {
	size_t passes, traps, commits, rebuilds;
	char pass[64], trap[64];
	int64_t pass_expires;
	uint64_t told_passes, told_traps;
};

static int64_t
follow_now(void *ctx)
{
	return t0 + cfg.grey.delay_sec + 12;
}

static int
follow_hold(void *ctx, bool trap, const struct grey_client *key,
            int64_t expires)
{
	struct followed *f = ctx;

	if (trap) {
		f->traps++;
		grey_client_format(key, f->trap, sizeof(f->trap));
	} else {
		f->passes++;
		f->pass_expires = expires;
		grey_client_format(key, f->pass, sizeof(f->pass));
	}
	return 1;
}

static void
follow_forgot(void *ctx, bool trap, const struct grey_client *key)
{
}

static int
follow_allowed(void *ctx, const struct grey_client *net, int64_t expires,
               const char *comment, bool apply)
{
	return 0;
}

static void
follow_commit(void *ctx)
{
	((struct followed *)ctx)->commits++;
}

static void
follow_rebuilt(void *ctx, int err, uint64_t passes, uint64_t traps,
               uint64_t allows)
{
	struct followed *f = ctx;

	CHECK_INT(err, 0);
	f->rebuilds++;
	f->told_passes = passes;
	f->told_traps = traps;
}

/* Whoever follows the store is told what it holds: the live pass with
 * its expiry and the trap, then the rebuild's end with their counts. */
static void
follow_story(void)
{
	static struct followed f; /* (a shared store keeps telling it) */
	const struct grey_store_listener l = {
	        .now = follow_now,
	        .hold = follow_hold,
	        .forgot = follow_forgot,
	        .allowed = follow_allowed,
	        .commit = follow_commit,
	        .rebuilt = follow_rebuilt,
	        .ctx = &f,
	};

	memset(&f, 0, sizeof(f));
	CHECK_INT(grey_store_follow(gw.records, &l), 0);
	LOOP_UNTIL(gw.loop, f.rebuilds, 5000);
	CHECK_INT(f.rebuilds, 1);
	CHECK_INT(f.passes, 1);
	CHECK_STR(f.pass, "198.51.100.0/24");
	CHECK_INT(f.pass_expires, t0 + cfg.grey.delay_sec + 1 +
	                                  cfg.grey.refresh_interval_sec + 1 +
	                                  cfg.grey.pass_ttl_sec);
	CHECK_INT(f.traps, 1);
	CHECK_STR(f.trap, "203.0.113.5/32");
	CHECK_INT(f.told_passes, 1);
	CHECK_INT(f.told_traps, 1);
	CHECK(f.commits >= 1);
}

/* --- the report's figures --- */

struct reports_seen {
	size_t gateways, unreadable;
	char name[64];
	bool done;
	int err;
};

static void
report_seen(const char *gateway, const void *figures, size_t len,
            int64_t updated, void *ctx)
{
	struct reports_seen *r = ctx;
	struct grey_stats st;

	CHECK_INT(grey_stats_decode(figures, len, &st), 0);
	CHECK_INT(st.counters.attempts,
	          grey_get_counters(decider_grey(gw.decider))->attempts);
	grey_stats_free(&st);
	r->gateways++;
	snprintf(r->name, sizeof(r->name), "%s", gateway);
}

static void
reports_done(int err, size_t unreadable, void *ctx)
{
	struct reports_seen *r = ctx;

	r->done = true;
	r->err = err;
	r->unreadable = unreadable;
}

/* A store of one gateway holds no site's figures (its own are the
 * site's); a shared one holds each gateway's share as it wrote it. */
static void
report_story(bool shared)
{
	static struct reports_seen r;
	int e;

	memset(&r, 0, sizeof(r));
	grey_store_share_report(gw.records, decider_grey(gw.decider), t0, true);
	e = grey_store_reports(gw.records, report_seen, reports_done, &r);
	if (!shared) {
		CHECK_INT(e, -EOPNOTSUPP);
		return;
	}
	CHECK_INT(e, 0);
	LOOP_UNTIL(gw.loop, r.done, 5000);
	CHECK(r.done);
	CHECK_INT(r.err, 0);
	/* (the share is written before the walk reads: one connection
	 * answers in order) */
	CHECK_INT(r.gateways, 1);
	CHECK_STR(r.name, "mx1.test");
	CHECK_INT(r.unreadable, 0);
}

/* Forgotten: the pass of 198.51.100.0/24 with its triplets, the trap of
 * 203.0.113.5; a store that answers later is given until a visit finds
 * no pass (no fixed wait: a busy machine only makes it slower). */
static void
forget_story(void)
{
	const uint32_t delay = cfg.grey.delay_sec;
	struct grey_client key, trap;
	struct grey_decision d;
	uint64_t end;
	int r;

	CHECK_INT(grey_cidr_parse("198.51.100.0/24", &key), 0);
	CHECK_INT(grey_cidr_parse("203.0.113.5", &trap), 0);
	r = grey_store_forget(gw.records, &key, &trap);
	CHECK(r == GREY_STORE_UNDER_WAY || r >= 3); /* pass, trap, triplet */
	end = loop_now_ms(gw.loop) + 5000;
	while ((d = visit("198.51.100.7", delay + 8)).action != GREY_ACTION_NONE &&
	       loop_now_ms(gw.loop) < end)
		loop_run_once(gw.loop, 20);
	CHECK_INT(d.action, GREY_ACTION_NONE);
	d = rcpt("198.51.100.7", "alice@a.test", "bob@example.org", delay + 9);
	CHECK_INT(d.action, GREY_GREYLIST);
	CHECK_INT(d.reason, GREY_REASON_NEW);
	d = rcpt("203.0.113.5", "eve@e.test", "bob@example.org", delay + 10);
	CHECK_INT(d.action, GREY_GREYLIST);
}

/* A pooled sender (SPF passed for its domain, issue 31): its triplet is
 * the pool's, found from another network, walked as the pool's; the
 * pass is the retrying client's network. */
static void
pool_story(void)
{
	const uint32_t delay = cfg.grey.delay_sec;
	struct grey_decision d;
	struct seen n;
	char key[64];

	d = decide(GREY_ATTEMPT_RCPT, "192.0.2.7", "pool@p.test",
	           "bob@example.org", GREY_PATH_TARPIT, delay + 20, true);
	CHECK_INT(d.reason, GREY_REASON_NEW);
	d = decide(GREY_ATTEMPT_RCPT, "198.18.0.7", "pool@p.test",
	           "bob@example.org", GREY_PATH_TARPIT, 2 * delay + 21, true);
	CHECK_INT(d.action, GREY_PASS);
	CHECK_INT(d.reason, GREY_REASON_RETRY_PASSED);
	CHECK_STR(grey_client_format(&d.client, key, sizeof(key)),
	          "198.18.0.0/24");
	/* not pooled, the same sender from a third network: its own */
	d = decide(GREY_ATTEMPT_RCPT, "198.18.1.7", "pool@p.test",
	           "bob@example.org", GREY_PATH_TARPIT, 2 * delay + 22, false);
	CHECK_INT(d.reason, GREY_REASON_NEW);
	n = walk_all(GREY_STORE_TRIPLETS, 2 * delay + 23);
	CHECK_INT(n.pooled, 1);
	CHECK_STR(n.pooled_sender, "pool@p.test");
}

static void
story(const char *backend)
{
	const uint32_t delay = cfg.grey.delay_sec;
	const uint32_t refresh = cfg.grey.refresh_interval_sec;
	struct grey_decision d;

	fprintf(stderr, "# %s\n", backend);
	t0 = (int64_t)time(NULL);
	d = rcpt("198.51.100.7", "alice@a.test", "bob@example.org", 0);
	CHECK_INT(d.action, GREY_GREYLIST);
	CHECK_INT(d.reason, GREY_REASON_NEW);
	CHECK_INT(d.wait_sec, delay);
	d = rcpt("198.51.100.7", "alice@a.test", "bob@example.org", 10);
	CHECK_INT(d.action, GREY_GREYLIST);
	CHECK_INT(d.reason, GREY_REASON_EARLY_RETRY);
	CHECK_INT(d.wait_sec, delay - 10);
	d = rcpt("198.51.100.7", "ALICE@a.test", "bob@example.org", delay + 1);
	CHECK_INT(d.action, GREY_PASS);
	CHECK_INT(d.reason, GREY_REASON_RETRY_PASSED);
	CHECK_INT(d.expires, t0 + delay + 1 + cfg.grey.pass_ttl_sec);
	/* the client's network (/24) */
	d = rcpt("198.51.100.99", "carol@c.test", "dan@example.org",
	         delay + 2);
	CHECK_INT(d.action, GREY_PASS);
	CHECK_INT(d.reason, GREY_REASON_PASSED);
	d = visit("198.51.100.7", delay + 60);
	CHECK_INT(d.action, GREY_PASS);
	CHECK_INT(d.reason, GREY_REASON_PASSED);
	d = visit("198.51.100.7", delay + 1 + refresh + 1);
	CHECK_INT(d.action, GREY_REFRESH);
	CHECK_INT(d.expires,
	          t0 + delay + 1 + refresh + 1 + cfg.grey.pass_ttl_sec);
	/* another network: new */
	d = rcpt("203.0.113.5", "alice@a.test", "bob@example.org", delay + 3);
	CHECK_INT(d.action, GREY_GREYLIST);
	CHECK_INT(d.reason, GREY_REASON_NEW);
	d = rcpt("203.0.113.5", "eve@e.test", "trap@example.org", delay + 4);
	CHECK_INT(d.action, GREY_TRAP);
	d = rcpt("203.0.113.5", "eve@e.test", "bob@example.org", delay + 5);
	CHECK_INT(d.action, GREY_TRAP);
	CHECK_INT(d.reason, GREY_REASON_TRAPPED);

	/* A restart's greylist over the same store: what it knows is the
	 * store's. */
	decider_close(gw.decider);
	CHECK_INT(decider_open(gw.decider, gw.store), 0);
	d = rcpt("198.51.100.8", "frank@f.test", "bob@example.org", delay + 6);
	CHECK_INT(d.action, GREY_PASS);
	CHECK_INT(d.reason, GREY_REASON_PASSED);
	d = rcpt("203.0.113.5", "eve@e.test", "bob@example.org", delay + 7);
	CHECK_INT(d.action, GREY_TRAP);
	CHECK_INT(grey_get_counters(decider_grey(gw.decider))->attempts, 2);
	walk_story();
	follow_story();
	report_story(gw.records->settings_agreed);
	forget_story();
	pool_story();
}

static void
test_lmdb(void)
{
	struct grey_store_status st;

	open_lmdb();
	CHECK_STR(grey_store_name(gw.records), "lmdb");
	grey_store_get_status(gw.records, &st);
	CHECK(!st.remote); /* (its figures are the file's own) */
	story("lmdb");
	/* (after the forget's story: the pass and the trap gone; the one
	 * pass is pool_story's, as are two more triplets) */
	CHECK_INT(store_count(gw.store, STORE_PASS), 1);
	CHECK_INT(store_count(gw.store, STORE_TRAP), 0);
	CHECK_INT(grey_store_count(gw.records, GREY_STORE_PASSES, AF_INET), 1);
	CHECK_INT(grey_store_count(gw.records, GREY_STORE_TRIPLETS, 0), 5);
	close_backend();
}

static void
test_memory(void)
{
	size_t passes, traps, triplets;

	open_memory();
	CHECK_STR(grey_store_name(gw.records), "memory");
	story("memory");
	grey_store_memory_count(gw.records, &passes, &traps, &triplets);
	CHECK_INT(passes, 1); /* pool_story's */
	CHECK_INT(traps, 0);
	/* the triplets greylisted after the forget, and 203.0.113.5's
	 * first (its network's triplets were not to be forgotten); the
	 * pool's and the third network's */
	CHECK_INT(triplets, 5);
	/* (the report's store holds none of it) */
	CHECK_INT(store_count(gw.store, STORE_PASS), 0);
	close_backend();
}

static void
test_redis(void)
{
	open_redis();
	CHECK_STR(grey_store_name(gw.records), "redis");
	story("redis");
	CHECK_INT(store_count(gw.store, STORE_PASS), 0);
	/* every gateway writes the passes: no count kept here */
	CHECK_INT(grey_store_count(gw.records, GREY_STORE_PASSES, AF_INET),
	          -EOPNOTSUPP);
	close_backend();
}

int
main(void)
{
	log_init("test-store-conformance", false, LOG_LEVEL_WARN);
	RUN(test_lmdb);
	RUN(test_memory);
	RUN(test_redis);
	return 0;
}
