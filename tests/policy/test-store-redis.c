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

#include "check.h"
#include "loop.h"
#include "policy.h"
#include "redis_loop.h"
#include "redis_server.h"
#include "store_redis.h"
#include "timesrc.h"

#define T0 1700000000LL

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
	bare = grey_new(&cfg, NULL);
	CHECK(bare);
	/* Nothing there: a first sight. */
	grey_records_prepare(bare, &a, &w);
	sent = rconn_get_counters(conn)->commands;
	CHECK_INT(fetch(&w, &k), 0);
	CHECK_INT(rconn_get_counters(conn)->commands - sent, 3);
	CHECK(!w.trap_found && !w.pass_found && !w.triplet_found);
	CHECK_INT(grey_decide_records(bare, &a, &w, &d), 0);
	CHECK_INT(d.reason, GREY_REASON_NEW);

	/* The triplet another gateway recorded 300 s ago: this retry
	 * passes. */
	{
		const char *argv[] = {"HSET",
		                      "gg:grey:198.51.100.0/24 "
		                      "alice@example.org "
		                      "bob@example.net",
		                      "first",
		                      "1700000000",
		                      "last",
		                      "1700000000",
		                      "attempts",
		                      "1",
		                      "awaiting",
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
	bare = grey_new(&cfg, NULL);
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

static void
test_server_stopped(void)
{
	struct grey_config cfg;
	struct grey *bare;
	struct grey_attempt a = rcpt(T0);
	struct grey_records w;

	grey_config_defaults(&cfg);
	bare = grey_new(&cfg, NULL);
	grey_records_prepare(bare, &a, &w);
	kill(server.pid, SIGSTOP);
	CHECK_INT(fetch(&w, NULL), -EIO);
	kill(server.pid, SIGCONT);
	grey_free(bare);
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
	RUN(test_server_stopped);
	rconn_free(conn);
	loop_free(loop);
	return 0;
}
