// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the greylist's records in Redis against a real redis-server
 * (tests/lib/redis_server.h: a unix socket, no network): the keys an
 * admin sees; one attempt's three records fetched in one round trip and
 * decided from by the policy with no store of its own; records that do
 * not parse (a word for a number, a field missing, times that
 * contradict) taken as absent and counted, never a crash; a server that
 * stops answering fails the fetch at its deadline. */
#include <arpa/inet.h>
#include <errno.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "grey_store.h"
#include "loop.h"
#include "policy.h"
#include "redis_loop.h"
#include "redis_server.h"
#include "store_copy.h"
#include "store_redis.h"
#include "timesrc.h"

#define T0 1700000000LL
/* The triplets' keys (one literal each: clang warns of literals joined
 * inside an array). */
static const char TRIPLET_198[] =
        "gg:grey:198.51.100.0/24 alice@example.org bob@example.net";
static const char TRIPLET_203[] =
        "gg:grey:203.0.113.0/24 alice@example.org bob@example.net";

static struct redis_server server;
static struct loop *loop;
static struct rconn *conn;

#define RUN_UNTIL(cond, ms) LOOP_UNTIL(loop, cond, ms)

static bool done_sent;

static void
on_done(struct redisReply *reply, void *ctx)
{
	done_sent = true;
	CHECK(reply && reply->type != REDIS_REPLY_ERROR);
}

/* One command, waited for. */
static void
redis(int argc, const char **argv)
{
	done_sent = false;
	CHECK_INT(rconn_command(conn, on_done, NULL, argc, argv, NULL), 0);
	RUN_UNTIL(done_sent, 2000);
	CHECK(done_sent);
}

static bool fetched;
static int fetch_err;

static void
on_fetched(struct grey_records *w, int err, void *ctx)
{
	fetched = true;
	fetch_err = err;
}

static int
fetch(struct grey_records *w, struct store_redis_counters *k)
{
	fetched = false;
	CHECK_INT(store_redis_fetch(conn, "gg:", w, k, on_fetched, NULL), 0);
	RUN_UNTIL(fetched, 3000);
	CHECK(fetched);
	return fetch_err;
}

static struct grey_attempt
rcpt(int64_t now)
{
	struct grey_attempt a = {.kind = GREY_ATTEMPT_RCPT,
	                         .now = now,
	                         .helo = "",
	                         .sender = "Alice@Example.ORG",
	                         .rcpt = "bob@example.net",
	                         .path = GREY_PATH_TARPIT,
	                         .reply = 451};

	a.client.family = AF_INET;
	CHECK_INT(inet_pton(AF_INET, "198.51.100.7", a.client.bytes), 1);
	return a;
}

static void
test_keys(void)
{
	struct grey_client c = {.family = AF_INET, .prefix = 24};
	char key[STORE_REDIS_KEY_MAX];

	CHECK_INT(inet_pton(AF_INET, "198.51.100.0", c.bytes), 1);
	CHECK(store_redis_client_key("gg:", STORE_PASS, &c, key) > 0);
	CHECK_STR(key, "gg:pass:198.51.100.0/24");
	CHECK(store_redis_triplet_key("gg:", &c, "alice@example.org",
	                              "bob@example.net", key) > 0);
	CHECK_STR(key, "gg:grey:198.51.100.0/24 alice@example.org "
	               "bob@example.net");
}

static void
test_fetch_and_decide(void)
{
	struct grey_config cfg;
	struct grey *bare;
	struct grey_attempt a = rcpt(T0);
	struct grey_records w;
	struct grey_decision d;
	struct store_redis_counters k = {0};
	uint64_t sent;

	grey_config_defaults(&cfg);
	bare = grey_new(&cfg);
	CHECK(bare);
	/* Nothing there: a first sight (the trap, the network's pass, the
	 * address's own pass, the triplet). */
	grey_records_prepare(bare, &a, &w);
	sent = rconn_get_counters(conn)->commands;
	CHECK_INT(fetch(&w, &k), 0);
	CHECK_INT(rconn_get_counters(conn)->commands - sent, 4);
	CHECK(!w.trap_found && !w.pass_found && !w.triplet_found);
	CHECK_INT(grey_decide_records(bare, &a, &w, &d), 0);
	CHECK_INT(d.reason, GREY_REASON_NEW);

	/* The triplet another gateway recorded 300 s ago: this retry
	 * passes. */
	{
		const char *argv[] = {"HSET",       TRIPLET_198, "first",
		                      "1700000000", "last",      "1700000000",
		                      "attempts",   "1",         "awaiting",
		                      "0"};

		redis(10, argv);
	}
	a = rcpt(T0 + 300);
	grey_records_prepare(bare, &a, &w);
	CHECK_INT(fetch(&w, &k), 0);
	CHECK_INT(w.triplet_found, STORE_FOUND);
	CHECK_INT(w.triplet.first_seen, T0);
	CHECK_INT(w.triplet.attempts, 1);
	CHECK_INT(grey_decide_records(bare, &a, &w, &d), 0);
	CHECK_INT(d.action, GREY_PASS);
	CHECK_INT(d.reason, GREY_REASON_RETRY_PASSED);

	/* A live trap on the address wins. */
	{
		const char *argv[] = {"HSET",       "gg:trap:198.51.100.7/32",
		                      "since",      "1700000000",
		                      "expires",    "1800000000",
		                      "refreshed",  "0",
		                      "deliveries", "0",
		                      "sessions",   "0"};

		redis(12, argv);
	}
	grey_records_prepare(bare, &a, &w);
	CHECK_INT(fetch(&w, &k), 0);
	CHECK_INT(w.trap_found, STORE_FOUND);
	CHECK_INT(w.trap.expires, 1800000000);
	CHECK_INT(grey_decide_records(bare, &a, &w, &d), 0);
	CHECK_INT(d.action, GREY_TRAP);
	CHECK_INT(k.fetches, 3);
	CHECK_INT(k.records_bad, 0);
	grey_free(bare);
}

static void
test_bad_records_are_absent(void)
{
	static const char *const bad[][12] = {
	        /* a word for a number */
	        {"HSET", "gg:pass:198.51.100.0/24", "since", "1700000000",
	         "expires", "soon", "refreshed", "0", "deliveries", "0",
	         "sessions", "0"},
	        /* a field missing */
	        {"HSET", "gg:pass:198.51.100.0/24", "since", "1700000000",
	         "expires", "1800000000", "refreshed", "0", "deliveries", "0",
	         "sessions", "0"},
	        /* ends before it began */
	        {"HSET", "gg:pass:198.51.100.0/24", "since", "1800000000",
	         "expires", "1700000000", "refreshed", "0", "deliveries", "0",
	         "sessions", "0"},
	        /* too big for its field */
	        {"HSET", "gg:pass:198.51.100.0/24", "since", "1700000000",
	         "expires", "1800000000", "refreshed", "0", "deliveries",
	         "99999999999", "sessions", "0"},
	};
	struct grey_config cfg;
	struct grey *bare;
	struct grey_attempt a = rcpt(T0 + 600);
	struct grey_records w;
	struct store_redis_counters k = {0};

	grey_config_defaults(&cfg);
	bare = grey_new(&cfg);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		const char *del[] = {"DEL", "gg:pass:198.51.100.0/24"};

		redis(2, del);
		/* The second lacks "sessions": written without it. */
		redis(i == 1 ? 10 : 12, (const char **)bad[i]);
		grey_records_prepare(bare, &a, &w);
		CHECK_INT(fetch(&w, &k), 0);
		CHECK_INT(w.pass_found, 0);
		CHECK_INT(k.records_bad, i + 1);
	}
	/* Not a hash at all: Redis answers WRONGTYPE, taken as absent. */
	{
		const char *del[] = {"DEL", "gg:pass:198.51.100.0/24"};
		const char *set[] = {"SET", "gg:pass:198.51.100.0/24", "x"};

		redis(2, del);
		redis(3, set);
	}
	grey_records_prepare(bare, &a, &w);
	CHECK_INT(fetch(&w, &k), 0);
	CHECK_INT(w.pass_found, 0);
	CHECK_INT(k.records_bad, 5);
	grey_free(bare);
}

static bool applied;
static int apply_err;

static void
on_applied(int err, void *ctx)
{
	applied = true;
	apply_err = err;
}

/* One gateway's whole turn: fetch, decide (with no store of its own),
 * write back. */
static struct grey_decision
turn(struct rconn *gw_conn, struct grey *g, const struct grey_attempt *a,
     const char *name)
{
	struct grey_records before, w;
	struct grey_decision d;
	struct rconn *saved = conn;

	conn = gw_conn;
	grey_records_prepare(g, a, &w);
	CHECK_INT(fetch(&w, NULL), 0);
	before = w;
	CHECK_INT(grey_decide_records(g, a, &w, &d), 0);
	applied = false;
	CHECK_INT(store_redis_apply(gw_conn, "gg:", &before, &w, 2 * 86400,
	                            name, NULL, on_applied, NULL),
	          0);
	LOOP_UNTIL(loop, applied, 2000);
	CHECK(applied);
	CHECK_INT(apply_err, 0);
	conn = saved;
	return d;
}

/* Both of one reply's fields, as text. */
static char got[64];

static void
on_text(struct redisReply *reply, void *ctx)
{
	done_sent = true;
	got[0] = 0;
	if (reply && reply->type == REDIS_REPLY_STRING)
		snprintf(got, sizeof(got), "%s", reply->str);
	else if (reply && reply->type == REDIS_REPLY_INTEGER)
		snprintf(got, sizeof(got), "%lld", reply->integer);
}

static const char *
ask(int argc, const char **argv)
{
	done_sent = false;
	CHECK_INT(rconn_command(conn, on_text, NULL, argc, argv, NULL), 0);
	LOOP_UNTIL(loop, done_sent, 2000);
	CHECK(done_sent);
	return got;
}

/* Two gateways on one Redis: the same first attempt seen at both (both
 * fetched before either wrote) records one first sight, the earlier;
 * the retry passes at either; each pass is in the stream for the other
 * gateways' sets; keys expire by themselves. */
static void
test_two_gateways(void)
{
	struct rconn_config rc = {.unix_path = server.sock,
	                          .password = REDIS_TEST_PASSWORD,
	                          .timeout_ms = 1000};
	struct rconn *mx2 = rconn_new(loop, &rc, NULL, NULL);
	struct rconn *mx1 = conn;
	struct grey_config cfg;
	struct grey *g1, *g2;
	struct grey_attempt a1, a2;
	struct grey_records w1, w2, b1, b2;
	struct grey_decision d1, d2;
	const char *flush[] = {"FLUSHALL"};
	const char *first[] = {"HGET", TRIPLET_203, "first"};
	const char *ttl[] = {"TTL", TRIPLET_203};
	const char *pttl[] = {"TTL", "gg:pass:203.0.113.0/24"};
	const char *xlen[] = {"XLEN", "gg:stream"};

	CHECK(mx2);
	LOOP_UNTIL(loop, rconn_up(mx2), 3000);
	CHECK(rconn_up(mx2));
	redis(1, flush);
	grey_config_defaults(&cfg);
	g1 = grey_new(&cfg);
	g2 = grey_new(&cfg);
	/* The now of the test's Redis is real time: the records' ends too,
	 * so that their expiry is in the future. */
	a1 = rcpt(time(NULL));
	a1.client.bytes[0] = 203, a1.client.bytes[1] = 0;
	a1.client.bytes[2] = 113, a1.client.bytes[3] = 10;
	a2 = a1;
	a2.now = a1.now + 1;
	/* Both fetch before either writes: both see a first sight. */
	grey_records_prepare(g1, &a1, &w1);
	grey_records_prepare(g2, &a2, &w2);
	CHECK_INT(fetch(&w1, NULL), 0);
	conn = mx2;
	CHECK_INT(fetch(&w2, NULL), 0);
	conn = mx1;
	b1 = w1;
	b2 = w2;
	CHECK_INT(grey_decide_records(g1, &a1, &w1, &d1), 0);
	CHECK_INT(grey_decide_records(g2, &a2, &w2, &d2), 0);
	CHECK_INT(d1.reason, GREY_REASON_NEW);
	CHECK_INT(d2.reason, GREY_REASON_NEW);
	/* The later writes last: the earlier first sight still stands. */
	applied = false;
	CHECK_INT(store_redis_apply(mx1, "gg:", &b1, &w1, 2 * 86400, "mx1",
	                            NULL, on_applied, NULL),
	          0);
	LOOP_UNTIL(loop, applied, 2000);
	applied = false;
	CHECK_INT(store_redis_apply(mx2, "gg:", &b2, &w2, 2 * 86400, "mx2",
	                            NULL, on_applied, NULL),
	          0);
	LOOP_UNTIL(loop, applied, 2000);
	CHECK_INT(apply_err, 0);
	{
		char want[24];

		snprintf(want, sizeof(want), "%lld", (long long)a1.now);
		CHECK_STR(ask(3, first), want);
	}
	CHECK(atoi(ask(2, ttl)) > 2 * 86400 - 10);
	/* The retry, 300 s after the first sight, at mx2: passes; mx1 then
	 * sees the pass. */
	a2.now = a1.now + 300;
	d2 = turn(mx2, g2, &a2, "mx2");
	CHECK_INT(d2.action, GREY_PASS);
	CHECK_INT(d2.reason, GREY_REASON_RETRY_PASSED);
	a1.now = a1.now + 301;
	a1.path = GREY_PATH_FAST;
	a1.reply = 250;
	d1 = turn(mx1, g1, &a1, "mx1");
	CHECK_INT(d1.action, GREY_PASS);
	CHECK_INT(d1.reason, GREY_REASON_PASSED);
	CHECK(atoi(ask(2, pttl)) > (int)cfg.pass_ttl_sec - 400);
	/* One pass in the stream: mx1's delivery did not move its end. */
	CHECK_STR(ask(2, xlen), "1");
	grey_free(g1);
	grey_free(g2);
	rconn_free(mx2);
}

static bool agreed;
static struct store_redis_agreement agreement;

static void
on_agreed(const struct store_redis_agreement *a, void *ctx)
{
	agreed = true;
	agreement = *a;
}

/* A gateway's agreement, as one that agreed at since (0: a newcomer). */
static int
agree_since(const struct grey_config *cfg, const char *gateway, int64_t since)
{
	agreed = false;
	CHECK_INT(store_redis_agree(conn, "gg:", cfg, gateway, since,
	                            on_agreed, NULL),
	          0);
	LOOP_UNTIL(loop, agreed, 2000);
	CHECK(agreed);
	return agreement.err;
}

static int
agree(const struct grey_config *cfg, const char *gateway)
{
	return agree_since(cfg, gateway, 0);
}

#define agree_why agreement.why

/* The first gateway's keys stand; one that differs is told which key
 * and both values. */
static void
test_gateways_agree_on_keys(void)
{
	const char *del[] = {"DEL", "gg:config"};
	struct grey_config cfg;

	redis(2, del);
	grey_config_defaults(&cfg);
	CHECK_INT(agree(&cfg, "mx1"), 0);
	CHECK(agreement.created);
	CHECK_INT(agree(&cfg, "mx2"), 0);
	CHECK(!agreement.created);
	cfg.prefix4 = 16;
	CHECK_INT(agree(&cfg, "mx3"), -EINVAL);
	CHECK_STR(agree_why, "client_prefix4 is 16 here but 24 in the shared "
	                     "store (set by mx1): every gateway sharing it "
	                     "must have the same");
	grey_config_defaults(&cfg);
	cfg.delay_sec = 60;
	CHECK_INT(agree(&cfg, "mx3"), -EINVAL);
	CHECK(strstr(agree_why, "delay is 60 here but 300"));
}

/* Issue 29 D1: a newcomer that finds an emptied store first writes its
 * own settings; the gateways that agreed before put the site's back,
 * and the newcomer is the one that disagrees (no gateway of the site is
 * told to stop). The emptying shows in created. */
static void
test_site_settings_survive_a_newcomer(void)
{
	const char *del[] = {"DEL", "gg:config"};
	struct grey_config site, rogue;
	int64_t since, created;

	redis(2, del);
	grey_config_defaults(&site);
	grey_config_defaults(&rogue);
	rogue.delay_sec = 5;
	CHECK_INT(agree(&site, "mx1"), 0);
	since = agreement.since;
	created = agreement.created_at;
	CHECK(since > 0);
	CHECK(created > 0);
	/* Emptied; the newcomer is first. */
	redis(2, del);
	CHECK_INT(agree(&rogue, "rogue"), 0);
	CHECK(agreement.created);
	CHECK(agreement.since > since);
	CHECK(agreement.created_at != created);
	/* mx1, agreed earlier: the site's settings are back. */
	CHECK_INT(agree_since(&site, "mx1", since), 0);
	CHECK(agreement.took_over);
	CHECK(agreement.since == since);
	CHECK_STR(agreement.by, "mx1");
	/* mx2 (agreed with the site too) agrees; the newcomer does not. */
	CHECK_INT(agree_since(&site, "mx2", since), 0);
	CHECK(!agreement.took_over);
	CHECK_INT(agree(&rogue, "rogue"), -EINVAL);
	CHECK(strstr(agree_why, "delay is 5 here but 300"));
	/* A newcomer with the site's settings takes the site's since. */
	CHECK_INT(agree(&site, "mx3"), 0);
	CHECK(agreement.since == since);
	/* Settings older than a gateway's own are never replaced. */
	CHECK_INT(agree_since(&rogue, "rogue", since + 1000000), -EINVAL);
}

/* Issue 29 R1: an error reply (Redis loading, a key of another type)
 * is not a lost connection: the caller is told to ask again. */
static void
test_agreement_error_reply_is_asked_again(void)
{
	const char *wrong[] = {"SET", "gg:config", "text"};
	const char *del[] = {"DEL", "gg:config"};
	struct grey_config cfg;

	grey_config_defaults(&cfg);
	redis(3, wrong);
	CHECK_INT(agree(&cfg, "mx1"), -EAGAIN);
	CHECK(strstr(agree_why, "WRONGTYPE"));
	CHECK(rconn_up(conn));
	redis(2, del);
	CHECK_INT(agree(&cfg, "mx1"), 0);
}

static int events, gaps;
static struct store_redis_event last_event;
static char last_key[64], last_gap[128], last_comment[128], last_by[64];

static void
on_event(const struct store_redis_event *ev, void *ctx)
{
	events++;
	last_event = *ev;
	grey_client_format(&ev->key, last_key, sizeof(last_key));
	/* (the reply's strings go with it) */
	snprintf(last_comment, sizeof(last_comment), "%s", ev->comment);
	snprintf(last_by, sizeof(last_by), "%s", ev->by);
}

static void
on_gap(const char *why, void *ctx)
{
	gaps++;
	snprintf(last_gap, sizeof(last_gap), "%s", why);
}

/* Every other connection dropped (as a Redis stopped a while does): the
 * follower meets its end and connects again. */
static void
drop_other_connections(void)
{
	const char *kill_others[] = {"CLIENT", "KILL", "SKIPME", "yes",
	                             "TYPE",   "normal"};

	redis(6, kill_others);
}

/* One pass on the stream, as mx2 writes it. */
static void
pass_entry(void)
{
	const char *good[] = {"XADD",         "gg:stream", "*",
	                      "kind",         "pass",      "key",
	                      "192.0.2.0/24", "expires",   "1800000000",
	                      "by",           "mx2"};

	redis(11, good);
}

/* A follower of a store emptied first, told of the gap of its start. */
static struct store_redis_follow *
follow_empty_store(const struct rconn_config *rc)
{
	const char *flush[] = {"FLUSHALL"};
	struct store_redis_follow *f;

	redis(1, flush);
	events = gaps = 0;
	f = store_redis_follow_new(loop, rc, "gg:", NULL, on_event, on_gap,
	                           NULL);
	CHECK(f);
	LOOP_UNTIL(loop, gaps == 1, 3000);
	CHECK_INT(gaps, 1);
	CHECK_STR(last_gap, "no entry applied yet");
	return f;
}

/* Every other gateway learns each pass within a second of its write; a
 * gateway whose last entry was trimmed away, or that has none yet, is
 * told to reconcile from the keys; a bad entry is skipped. */
static void
test_follow_the_stream(void)
{
	struct rconn_config rc = {.unix_path = server.sock,
	                          .password = REDIS_TEST_PASSWORD,
	                          .timeout_ms = 500};
	struct store_redis_follow *f;
	const char *bad[] = {"XADD",           "gg:stream", "*",
	                     "kind",           "pass",      "key",
	                     "not-an-address", "expires",   "1"};
	const char *trim[] = {"XTRIM", "gg:stream", "MAXLEN", "0"};
	uint64_t sent;
	char id[48];

	f = follow_empty_store(&rc);
	redis(9, bad);
	sent = loop_now_ms(loop);
	pass_entry();
	LOOP_UNTIL(loop, events == 1, 3000);
	CHECK_INT(events, 1);
	CHECK(loop_now_ms(loop) - sent < 1000);
	CHECK_STR(last_key, "192.0.2.0/24");
	CHECK(!last_event.trap);
	CHECK_INT(last_event.expires, 1800000000);
	snprintf(id, sizeof(id), "%s", store_redis_follow_last_id(f));
	store_redis_follow_free(f);

	/* Away meanwhile: two more entries, then the stream trimmed to
	 * nothing (as MAXLEN does to a gateway away for long). */
	pass_entry();
	redis(4, trim);
	gaps = 0;
	f = store_redis_follow_new(loop, &rc, "gg:", id, on_event, on_gap,
	                           NULL);
	CHECK(f);
	LOOP_UNTIL(loop, gaps == 1, 3000);
	CHECK_INT(gaps, 1);
	CHECK_STR(last_gap,
	          "the stream is empty: trimmed to nothing, or a new Redis");
	/* What comes after, comes. */
	pass_entry();
	LOOP_UNTIL(loop, events == 2, 3000);
	CHECK_INT(events, 2);
	store_redis_follow_free(f);

	/* A last id older than the stream's first entry: trimmed past it. */
	gaps = 0;
	f = store_redis_follow_new(loop, &rc, "gg:", "1-0", on_event, on_gap,
	                           NULL);
	CHECK(f);
	LOOP_UNTIL(loop, gaps == 1 && events == 3, 3000);
	CHECK_STR(last_gap, "the stream was trimmed past the last entry "
	                    "applied");
	CHECK_INT(events, 3); /* and what it still holds is read */
	store_redis_follow_free(f);
}

/* Issue 29 D5: a follower that comes back to an emptied Redis says so,
 * not "trimmed": the store's settings are gone, or written anew. */
static void
test_follow_tells_an_emptied_redis(void)
{
	const char *flush[] = {"FLUSHALL"};
	const char *del[] = {"DEL", "gg:config"};
	struct rconn_config rc = {.unix_path = server.sock,
	                          .password = REDIS_TEST_PASSWORD,
	                          .timeout_ms = 300};
	struct store_redis_follow *f;
	struct grey_config cfg;

	grey_config_defaults(&cfg);
	redis(1, flush);
	CHECK_INT(agree(&cfg, "mx1"), 0);
	gaps = 0;
	f = store_redis_follow_new(loop, &rc, "gg:", NULL, on_event, on_gap,
	                           NULL);
	CHECK(f);
	LOOP_UNTIL(loop, gaps == 1, 3000);
	CHECK_STR(last_gap, "no entry applied yet");
	/* Emptied and agreed anew while it was away. */
	redis(2, del);
	CHECK_INT(agree(&cfg, "mx2"), 0);
	drop_other_connections();
	LOOP_UNTIL(loop, gaps == 2, 4000);
	CHECK_INT(gaps, 2);
	CHECK_STR(last_gap, "Redis was emptied and written anew since (its "
	                    "settings are new)");
	/* Emptied, nobody back yet. */
	redis(2, del);
	drop_other_connections();
	LOOP_UNTIL(loop, gaps == 3, 4000);
	CHECK_INT(gaps, 3);
	CHECK_STR(last_gap, "Redis was emptied (its settings are gone too)");
	store_redis_follow_free(f);
}

/* A follower that started before the first gateway wrote the settings,
 * reconnecting later (as after Redis was stopped a while): nothing was
 * emptied, nothing missed (issue 57: "Redis was emptied and written
 * anew since", and the sets rebuilt). */
static void
test_follow_first_settings_are_no_emptying(void)
{
	struct rconn_config rc = {.unix_path = server.sock,
	                          .password = REDIS_TEST_PASSWORD,
	                          .timeout_ms = 300};
	struct store_redis_follow *f;
	struct grey_config cfg;

	grey_config_defaults(&cfg);
	f = follow_empty_store(&rc);
	CHECK_INT(agree(&cfg, "mx1"), 0);
	pass_entry();
	LOOP_UNTIL(loop, events == 1, 3000);
	CHECK_INT(events, 1);
	drop_other_connections();
	/* (reconnected: its next entry comes) */
	pass_entry();
	LOOP_UNTIL(loop, events == 2, 4000);
	CHECK_INT(events, 2);
	CHECK_INT(gaps, 1);
	CHECK_STR(last_gap, "no entry applied yet");
	store_redis_follow_free(f);
}

/* --- run-time allow entries, for every gateway --- */

static bool allow_written;
static int allow_err;
static int allows_seen, allows_removed;
static int64_t allow_expires;
static char allow_comment[128];

static void
on_allow_written(int err, void *ctx)
{
	allow_written = true;
	allow_err = err;
}

static void
on_allow_found(const struct grey_client *net, int64_t expires,
               const char *comment, void *ctx)
{
	allows_seen++;
	allows_removed += expires == GREY_ALLOW_REMOVED;
	allow_expires = expires;
	snprintf(allow_comment, sizeof(allow_comment), "%s", comment);
}

static bool written_told, written;
static int written_err;

static void
on_written_if(int err, bool was_written, void *ctx)
{
	written_told = true;
	written_err = err;
	written = was_written;
}

/* Return: whether the entry was written. */
static bool
allow_if_absent(const struct grey_client *net, const char *comment)
{
	written_told = false;
	CHECK_INT(store_redis_allow_if_absent(conn, "gg:", net, 0, comment,
	                                      "mx3", on_written_if, NULL),
	          0);
	RUN_UNTIL(written_told, 2000);
	CHECK(written_told);
	CHECK_INT(written_err, 0);
	return written;
}

static int scanned_err = 1;
static struct store_redis_scan_counts scanned_counts;

static void
on_scanned(int err, const struct store_redis_scan_counts *n, void *ctx)
{
	scanned_err = err;
	scanned_counts = *n;
}

/* A walk started (its start's return value), waited for to its end. */
static void
walked(int started)
{
	CHECK_INT(started, 0);
	RUN_UNTIL(scanned_err != 1, 3000);
	CHECK_INT(scanned_err, 0);
}

/* An entry made at one gateway reaches the others by the stream (no end,
 * its comment kept), and a walk of the keys finds it and one with an
 * end; a bad one is skipped, counted. */
static void
test_allow_entries(void)
{
	struct rconn_config rc = {.unix_path = server.sock,
	                          .password = REDIS_TEST_PASSWORD,
	                          .timeout_ms = 500};
	const char *flush[] = {"FLUSHALL"};
	const char *bad[] = {"HSET", "gg:allow:203.0.113.0/24", "expires",
	                     "soon"};
	struct store_redis_follow *f;
	struct grey_client net;
	const int64_t later = time(NULL) + 3600;

	f = follow_empty_store(&rc);
	CHECK_INT(grey_cidr_parse("2001:db8:77::/48", &net), 0);
	allow_written = false;
	CHECK_INT(store_redis_allow(conn, "gg:", &net, 0, "a bank, by hand",
	                            "mx1", on_allow_written, NULL),
	          0);
	LOOP_UNTIL(loop, allow_written && events == 1, 3000);
	CHECK_INT(allow_err, 0);
	CHECK_INT(events, 1);
	CHECK(last_event.allow);
	CHECK(!last_event.trap);
	CHECK_STR(last_key, "2001:db8:77::/48");
	CHECK_INT(last_event.expires, 0);
	CHECK_STR(last_comment, "a bank, by hand");
	CHECK_STR(last_by, "mx1");
	store_redis_follow_free(f);
	/* one with an end: Redis ends it too */
	CHECK_INT(grey_cidr_parse("198.51.100.64/26", &net), 0);
	allow_written = false;
	CHECK_INT(store_redis_allow(conn, "gg:", &net, later, "", "mx2",
	                            on_allow_written, NULL),
	          0);
	LOOP_UNTIL(loop, allow_written, 3000);
	CHECK_INT(allow_err, 0);
	/* written only where the store lacks the network's entry */
	CHECK(!allow_if_absent(&net, "again"));
	/* removed (greygatectl disallow): a mark stays, that a gateway
	 * which was away and still holds the entry does not write back */
	allow_written = false;
	CHECK_INT(store_redis_allow(conn, "gg:", &net, GREY_ALLOW_REMOVED, "",
	                            "mx2", on_allow_written, NULL),
	          0);
	LOOP_UNTIL(loop, allow_written, 3000);
	CHECK_INT(allow_err, 0);
	CHECK(!allow_if_absent(&net, "back from a gateway that was away"));
	CHECK_INT(grey_cidr_parse("203.0.113.128/25", &net), 0);
	CHECK(allow_if_absent(&net, "absent"));
	redis(4, bad);
	allows_seen = allows_removed = 0;
	scanned_err = 1;
	walked(store_redis_scan_allows(conn, "gg:", on_allow_found, on_scanned,
	                               NULL));
	CHECK_INT(allows_seen, 3);
	CHECK_INT(allows_removed, 1); /* (a rebuild removes it too) */
	CHECK_INT(scanned_counts.bad, 1);
	redis(1, flush);
}

/* --- the gateways' report figures, for the site's report --- */

static int reports_seen;
static char report_by[3][64];
static char report_bytes[3][16];
static size_t report_len[3];
static int64_t report_updated[3];

static void
on_report_found(const char *gateway, const void *figures, size_t len,
                int64_t updated, void *ctx)
{
	int i = reports_seen++;

	if (i >= 3)
		return;
	snprintf(report_by[i], sizeof(report_by[i]), "%s", gateway);
	memcpy(report_bytes[i], figures, len < 16 ? len : 16);
	report_len[i] = len;
	report_updated[i] = updated;
}

static int
report_of(const char *gateway)
{
	for (int i = 0; i < reports_seen && i < 3; i++)
		if (!strcmp(report_by[i], gateway))
			return i;
	return -1;
}

static void
put_report(const char *gateway, const void *figures, size_t len,
           int64_t updated)
{
	applied = false;
	CHECK_INT(store_redis_put_report(conn, "gg:", gateway, figures, len,
	                                 updated, on_applied, NULL),
	          0);
	RUN_UNTIL(applied, 2000);
	CHECK(applied);
	CHECK_INT(apply_err, 0);
}

/* Each gateway's figures are kept under its name, bytes as given (NULs
 * within), the latest write winning; a walk finds every gateway's; a
 * record that is not one (updated not a number, a name with a blank) is
 * skipped, counted. */
static void
test_report_figures(void)
{
	const char *flush[] = {"FLUSHALL"};
	const char *bad[] = {"HSET", "gg:report:mx9", "figures", "x",
	                     "updated", "soon"};
	const char *blank[] = {"HSET", "gg:report:mx 8", "figures", "x",
	                       "updated", "1"};
	const char binary[] = {'G', 0, 'S', 0, 7};
	int i;

	redis(1, flush);
	put_report("mx1.test", "old", 3, 1000);
	put_report("mx1.test", binary, sizeof(binary), 2000);
	put_report("mx2.test", "two", 3, 3000);
	redis(6, bad);
	redis(6, blank);
	reports_seen = 0;
	scanned_err = 1;
	walked(store_redis_scan_reports(conn, "gg:", on_report_found,
	                                on_scanned, NULL));
	CHECK_INT(reports_seen, 2);
	CHECK_INT(scanned_counts.bad, 2);
	i = report_of("mx1.test");
	CHECK(i >= 0);
	CHECK_INT(report_len[i], sizeof(binary));
	CHECK(memcmp(report_bytes[i], binary, sizeof(binary)) == 0);
	CHECK_INT(report_updated[i], 2000);
	i = report_of("mx2.test");
	CHECK(i >= 0);
	CHECK_INT(report_len[i], 3);
	CHECK_INT(report_updated[i], 3000);
	redis(1, flush);
}

/* --- a gateway's name --- */

static int claim_err = 1;
static char claim_other[32];

static void
on_claim(int err, const char *other, void *ctx)
{
	claim_err = err;
	snprintf(claim_other, sizeof(claim_other), "%s", other ? other : "");
}

static int
claim(const char *gateway, const char *instance, unsigned ttl)
{
	claim_err = 1;
	CHECK_INT(store_redis_claim_name(conn, "gg:", gateway, instance, ttl,
	                                 on_claim, NULL),
	          0);
	RUN_UNTIL(claim_err != 1, 2000);
	return claim_err;
}

/* A name is its instance's while it claims it again; another instance
 * under it is told who holds it; a claim that ended frees the name. */
static void
test_gateway_names(void)
{
	const char *flush[] = {"FLUSHALL"};

	redis(1, flush);
	CHECK_INT(claim("mx1.test", "aaaa", 90), 0);
	CHECK_INT(claim("mx1.test", "aaaa", 90), 0);
	CHECK_INT(claim("mx2.test", "bbbb", 90), 0);
	CHECK_INT(claim("mx1.test", "cccc", 90), -EEXIST);
	CHECK_STR(claim_other, "aaaa");
	CHECK_INT(claim("mx2.test", "bbbb", 1), 0);
	usleep(1100 * 1000);
	CHECK_INT(claim("mx2.test", "cccc", 90), 0);
	redis(1, flush);
}

/* --- a client forgotten at every gateway --- */

static bool forgot;
static int forgot_err, forgot_n;

static void
on_forgot(int err, int deleted, void *ctx)
{
	forgot = true;
	forgot_err = err;
	forgot_n = deleted;
}

/* Its pass and trap go at once and every gateway is told; its triplets
 * (and no other client's) go by a walk. */
static void
test_forget(void)
{
	struct rconn_config rc = {.unix_path = server.sock,
	                          .password = REDIS_TEST_PASSWORD,
	                          .timeout_ms = 500};
	const char *pass[] = {"HSET", "gg:pass:198.51.100.0/24", "since", "1"};
	const char *trap[] = {"HSET", "gg:trap:198.51.100.7/32", "since", "1"};
	const char *mine[][4] = {
	        {"HSET", "gg:grey:198.51.100.0/24 a@x.test b@y.test", "first",
	         "1"},
	        {"HSET", "gg:grey:198.51.100.0/24  b@y.test", "first", "1"},
	        {"HSET", "gg:grey:198.51.100.0/24 c@x.test b@y.test", "first",
	         "1"}};
	const char *other[] = {"HSET", TRIPLET_203, "first", "1"};
	struct store_redis_follow *f = follow_empty_store(&rc);
	struct grey_client net, addr;

	redis(4, pass);
	redis(4, trap);
	for (size_t i = 0; i < 3; i++)
		redis(4, (const char **)mine[i]);
	redis(4, other);
	CHECK_INT(grey_cidr_parse("198.51.100.0/24", &net), 0);
	CHECK_INT(grey_cidr_parse("198.51.100.7", &addr), 0);
	forgot = false;
	CHECK_INT(store_redis_forget(conn, "gg:", &net, &addr, "mx1", on_forgot,
	                             NULL),
	          0);
	LOOP_UNTIL(loop, forgot && events == 2, 3000);
	CHECK_INT(forgot_err, 0);
	CHECK_INT(forgot_n, 2);
	CHECK_INT(events, 2);
	CHECK(last_event.forget);
	CHECK(last_event.trap);
	CHECK_STR(last_key, "198.51.100.7/32");
	store_redis_follow_free(f);

	scanned_err = 1;
	CHECK_INT(store_redis_delete_triplets(conn, "gg:", &net, on_scanned,
	                                      NULL),
	          0);
	LOOP_UNTIL(loop, scanned_err != 1, 3000);
	CHECK_INT(scanned_err, 0);
	CHECK_INT(scanned_counts.records, 3);
	/* The other client's triplet is there still: a walk finds it alone. */
	scanned_err = 1;
	CHECK_INT(store_redis_delete_triplets(conn, "gg:", &net, on_scanned,
	                                      NULL),
	          0);
	LOOP_UNTIL(loop, scanned_err != 1, 3000);
	CHECK_INT(scanned_counts.records, 0);
	{
		struct grey_client other_net;

		CHECK_INT(grey_cidr_parse("203.0.113.0/24", &other_net), 0);
		scanned_err = 1;
		CHECK_INT(store_redis_delete_triplets(conn, "gg:", &other_net,
		                                      on_scanned, NULL),
		          0);
		LOOP_UNTIL(loop, scanned_err != 1, 3000);
		CHECK_INT(scanned_counts.records, 1);
	}
}

/* --- the walk of every pass, for a gateway rebuilding its sets --- */

static size_t seen;
static bool seen_net[2600];

static int
on_scanned_client(const struct grey_client *c, const struct store_client *rec,
                  void *ctx)
{
	/* 198.51.100.0/24 and 10.N.M.0/24 written below */
	if (c->family == AF_INET && c->prefix == 24 && c->bytes[0] == 10)
		seen_net[c->bytes[1] * 256 + c->bytes[2]] = true;
	CHECK(rec->expires > rec->since);
	seen++;
	return 0;
}

static int
scan(enum store_table table)
{
	scanned_err = 1;
	seen = 0;
	memset(seen_net, 0, sizeof(seen_net));
	CHECK_INT(store_redis_scan_clients(conn, "gg:", table, on_scanned_client,
	                                   on_scanned, NULL),
	          0);
	RUN_UNTIL(scanned_err != 1, 10000);
	return scanned_err;
}

static void
test_scan_every_pass(void)
{
	const char *flush[] = {"FLUSHALL"};
	const char *bad_key[] = {"HSET", "gg:pass:not-a-network", "since",
	                         "1", "expires", "2", "refreshed", "0",
	                         "deliveries", "0", "sessions", "0"};
	const char *bad_rec[] = {"HSET", "gg:pass:203.0.113.0/24", "since",
	                         "soon"};
	const char *other[] = {"SET", "gg:trap:198.51.100.7/32", "x"};

	redis(1, flush);
	CHECK_INT(scan(STORE_PASS), 0);
	CHECK_INT(seen, 0);
	/* 2500 passes: more than one SCAN batch */
	for (int i = 0; i < 2500; i++) {
		char key[64];
		const char *hset[] = {"HSET", key, "since", "1700000000",
		                      "expires", "1800000000", "refreshed",
		                      "1700000000", "deliveries", "1",
		                      "sessions", "0"};

		snprintf(key, sizeof(key), "gg:pass:10.%d.%d.0/24", i / 256,
		         i % 256);
		redis(12, hset);
	}
	redis(12, bad_key);
	redis(4, bad_rec);
	redis(3, other);
	CHECK_INT(scan(STORE_PASS), 0);
	CHECK_INT(seen, 2500);
	CHECK_INT(scanned_counts.records, 2500);
	CHECK_INT(scanned_counts.bad, 2);
	for (int i = 0; i < 2500; i++)
		CHECK(seen_net[i]);
	/* traps apart; a trap that is not a hash is bad, not a crash */
	CHECK_INT(scan(STORE_TRAP), 0);
	CHECK_INT(seen, 0);
	CHECK_INT(scanned_counts.bad, 1);
	/* a server that stops answering: told once, as failed */
	kill(server.pid, SIGSTOP);
	CHECK_INT(scan(STORE_PASS), -EIO);
	kill(server.pid, SIGCONT);
	RUN_UNTIL(rconn_up(conn), 5000);
	CHECK(rconn_up(conn));
	redis(1, flush);
}

/* --- a greylist moved from LMDB to Redis and back --- */

static void
test_copy_both_ways(void)
{
	/* Redis expires keys by its own clock: the records are of now. */
	const int64_t now = time(NULL);
	const char *flush[] = {"FLUSHALL"};
	struct grey_config cfg;
	struct store *lmdb, *back;
	struct store_copy_counts n;
	struct grey_client net, addr, old_net;
	struct store_triplet t = {now - 60, now - 30, 2, 0}, got_t;
	struct store_triplet stale = {now - 9 * 86400, now - 9 * 86400, 1, 0};
	struct store_client pass = {now - 600, now + 86400, now - 600, 3, 4};
	struct store_client trap = {now - 60, now + 3600, 0, 0, 0}, got_c;
	struct store_client ended = {now - 900, now - 1, 0, 0, 0};
	struct grey_records w;
	struct grey_attempt a = rcpt(now);
	struct grey *bare;

	grey_config_defaults(&cfg);
	redis(1, flush);
	CHECK_INT(grey_cidr_parse("198.51.100.0/24", &net), 0);
	CHECK_INT(grey_cidr_parse("198.51.100.7/32", &addr), 0);
	CHECK_INT(grey_cidr_parse("203.0.113.0/24", &old_net), 0);
	CHECK_INT(store_open_temp(&lmdb), 0);
	CHECK_INT(store_put_triplet(lmdb, &net, "alice@example.org",
	                            "bob@example.net", &t),
	          0);
	CHECK_INT(store_put_triplet(lmdb, &old_net, "", "bob@example.net",
	                            &stale),
	          0);
	CHECK_INT(store_put_client(lmdb, STORE_PASS, &net, &pass), 0);
	CHECK_INT(store_put_client(lmdb, STORE_PASS, &old_net, &ended), 0);
	CHECK_INT(store_put_client(lmdb, STORE_TRAP, &addr, &trap), 0);
	CHECK_INT(store_flush(lmdb), 0);

	CHECK_INT(store_copy_to_redis(lmdb, loop, conn, "gg:", &cfg, "gw-a", now,
	                              &n),
	          0);
	CHECK_INT(n.triplets, 1);
	CHECK_INT(n.passes, 1);
	CHECK_INT(n.traps, 1);
	CHECK_INT(n.skipped, 1); /* the stale triplet (the ended pass is not
	                            walked at all) */
	CHECK_INT(n.failed, 0);
	/* What a gateway on Redis now decides from: the same records. */
	bare = grey_new(&cfg);
	grey_records_prepare(bare, &a, &w);
	CHECK_INT(fetch(&w, NULL), 0);
	CHECK_INT(w.triplet_found, STORE_FOUND);
	CHECK_INT(w.triplet.first_seen, now - 60);
	CHECK_INT(w.triplet.attempts, 2);
	CHECK_INT(w.pass_found, STORE_FOUND);
	CHECK_INT(w.pass.expires, now + 86400);
	CHECK_INT(w.pass.deliveries, 3);
	CHECK_INT(w.pass.sessions, 4);
	/* The same copy again (an admin's second run): the pass's
	 * deliveries and sessions are not counted twice. */
	CHECK_INT(store_copy_to_redis(lmdb, loop, conn, "gg:", &cfg, "gw-a", now,
	                              &n),
	          0);
	CHECK_INT(n.passes, 1);
	memset(&w, 0, sizeof(w));
	grey_records_prepare(bare, &a, &w);
	CHECK_INT(fetch(&w, NULL), 0);
	CHECK_INT(w.pass.deliveries, 3);
	CHECK_INT(w.pass.sessions, 4);
	grey_free(bare);

	/* and back, into an empty LMDB store */
	CHECK_INT(store_open_temp(&back), 0);
	CHECK_INT(store_copy_from_redis(loop, conn, "gg:", back, now,
	                                cfg.retry_window_sec, &n),
	          0);
	CHECK_INT(n.triplets, 1);
	CHECK_INT(n.passes, 1);
	CHECK_INT(n.traps, 1);
	CHECK_INT(n.failed, 0);
	CHECK_INT(store_get_triplet(back, &net, "alice@example.org",
	                            "bob@example.net", &got_t),
	          STORE_FOUND);
	CHECK_INT(got_t.first_seen, t.first_seen);
	CHECK_INT(got_t.last_seen, t.last_seen);
	CHECK_INT(got_t.attempts, t.attempts);
	CHECK_INT(store_get_client(back, STORE_PASS, &net, &got_c),
	          STORE_FOUND);
	CHECK_INT(got_c.since, pass.since);
	CHECK_INT(got_c.expires, pass.expires);
	CHECK_INT(got_c.deliveries, pass.deliveries);
	CHECK_INT(store_get_client(back, STORE_TRAP, &addr, &got_c),
	          STORE_FOUND);
	CHECK_INT(got_c.expires, trap.expires);
	CHECK_INT(store_get_client(back, STORE_PASS, &old_net, &got_c), 0);
	CHECK_INT(store_count(back, -1), 1);
	store_close(back);
	store_close(lmdb);
	redis(1, flush);
}

static void
test_server_stopped(void)
{
	struct grey_config cfg;
	struct grey *bare;
	struct grey_attempt a = rcpt(T0);
	struct grey_records w;

	grey_config_defaults(&cfg);
	bare = grey_new(&cfg);
	grey_records_prepare(bare, &a, &w);
	kill(server.pid, SIGSTOP);
	CHECK_INT(fetch(&w, NULL), -EIO);
	kill(server.pid, SIGCONT);
	grey_free(bare);
}

/* How many times Redis ran a command since its counters were reset
 * (INFO commandstats: "cmdstat_NAME:calls=N,..."). */
static long calls;

static void
on_stats(struct redisReply *reply, void *ctx)
{
	const char *name = ctx, *at;
	char want[64];

	done_sent = true;
	calls = -1;
	CHECK(reply && reply->type == REDIS_REPLY_STRING);
	snprintf(want, sizeof(want), "cmdstat_%s:calls=", name);
	at = strstr(reply->str, want);
	calls = at ? strtol(at + strlen(want), NULL, 10) : 0;
}

static long
calls_of(const char *name)
{
	const char *info[] = {"INFO", "commandstats"};

	done_sent = false;
	CHECK_INT(rconn_command(conn, on_stats, (void *)name, 2, info, NULL),
	          0);
	RUN_UNTIL(done_sent, 2000);
	CHECK(done_sent);
	return calls;
}

/* Issue 29 D4: a decision's write goes by the script's SHA1 (EVALSHA),
 * not the 2 KB script each time (EVAL); a Redis that lost its scripts
 * (SCRIPT FLUSH, as after a restart) still takes every write. */
static void
test_writes_by_sha(void)
{
	const char *flush[] = {"FLUSHALL"};
	const char *reset[] = {"CONFIG", "RESETSTAT"};
	const char *forget_scripts[] = {"SCRIPT", "FLUSH"};
	struct grey_config cfg;
	struct grey *g;
	int64_t now = time(NULL);

	redis(1, flush);
	redis(2, forget_scripts);
	redis(2, reset);
	grey_config_defaults(&cfg);
	g = grey_new(&cfg);
	CHECK(g);
	for (int i = 0; i < 20; i++) {
		struct grey_attempt a = rcpt(now);

		a.client.bytes[2] = (uint8_t)i;
		CHECK_INT(turn(conn, g, &a, "mx1").reason, GREY_REASON_NEW);
	}
	CHECK(calls_of("eval") <= 1);
	CHECK(calls_of("evalsha") >= 19);
	/* Redis forgets the scripts: each write still lands. */
	redis(2, forget_scripts);
	for (int i = 20; i < 25; i++) {
		struct grey_attempt a = rcpt(now);

		a.client.bytes[2] = (uint8_t)i;
		CHECK_INT(turn(conn, g, &a, "mx1").reason, GREY_REASON_NEW);
	}
	{
		struct grey_attempt a = rcpt(now + 1);
		struct grey_records w;

		a.client.bytes[2] = 24;
		grey_records_prepare(g, &a, &w);
		CHECK_INT(fetch(&w, NULL), 0);
		CHECK_INT(w.triplet_found, STORE_FOUND);
	}
	CHECK(calls_of("eval") <= 2);
	CHECK(calls_of("evalsha") >= 23);
	grey_free(g);
}

/* A delivery's write sent again under its name (the connection went
 * before the answer, issue 32: "duplicate deliveries counted twice
 * after a reconnect") adds its delivery once; another name adds
 * another. */
static void
test_write_sent_again_counts_once(void)
{
	const char *flush[] = {"FLUSHALL"};
	const char *deliveries[] = {"HGET", "gg:pass:198.51.100.0/24",
	                            "deliveries"};
	struct grey_records before = {0}, after;
	int64_t now = time(NULL);

	redis(1, flush);
	CHECK_INT(grey_cidr_parse("198.51.100.0/24", &before.pass_key), 0);
	before.trap_key = before.pass_key;
	before.pass_found = STORE_FOUND;
	before.pass = (struct store_client){.since = now - 60,
	                                   .expires = now + 3600,
	                                   .refreshed = now - 60};
	after = before;
	after.pass.deliveries = 1;
	after.pass_dirty = true;
	for (int i = 0; i < 3; i++) {
		applied = false;
		CHECK_INT(store_redis_apply(conn, "gg:", &before, &after, 86400,
		                            "mx1", i < 2 ? "abc:7" : "abc:8",
		                            on_applied, NULL),
		          0);
		LOOP_UNTIL(loop, applied, 2000);
		CHECK_INT(apply_err, 0);
		CHECK_STR(ask(3, deliveries), i < 2 ? "1" : "2");
	}
	/* Unnamed (a copy, a bench): each adds. */
	applied = false;
	CHECK_INT(store_redis_apply(conn, "gg:", &before, &after, 86400, "mx1",
	                            NULL, on_applied, NULL),
	          0);
	LOOP_UNTIL(loop, applied, 2000);
	CHECK_STR(ask(3, deliveries), "3");
}

int
main(void)
{
	struct rconn_config cfg = {.password = REDIS_TEST_PASSWORD,
	                           .timeout_ms = 300};

	loop = loop_new(timesrc_system());
	CHECK(loop);
	redis_server_start_or_skip(&server);
	cfg.unix_path = server.sock;
	conn = rconn_new(loop, &cfg, NULL, NULL);
	CHECK(conn);
	RUN_UNTIL(rconn_up(conn), 3000);
	CHECK(rconn_up(conn));
	RUN(test_keys);
	RUN(test_fetch_and_decide);
	RUN(test_bad_records_are_absent);
	RUN(test_two_gateways);
	RUN(test_writes_by_sha);
	RUN(test_write_sent_again_counts_once);
	RUN(test_gateways_agree_on_keys);
	RUN(test_site_settings_survive_a_newcomer);
	RUN(test_agreement_error_reply_is_asked_again);
	RUN(test_follow_the_stream);
	RUN(test_follow_tells_an_emptied_redis);
	RUN(test_follow_first_settings_are_no_emptying);
	RUN(test_allow_entries);
	RUN(test_forget);
	RUN(test_report_figures);
	RUN(test_gateway_names);
	RUN(test_scan_every_pass);
	RUN(test_copy_both_ways);
	RUN(test_server_stopped);
	rconn_free(conn);
	loop_free(loop);
	return 0;
}
