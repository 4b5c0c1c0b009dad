// SPDX-License-Identifier: GPL-2.0-or-later
/* Decisions per second of one gateway against a shared Redis store, side
 * by side in one run with the same decisions against LMDB (its own store
 * on tmpfs): the policy core deciding from records fetched in one round
 * trip (three pipelined HMGETs) and writing back in another (one EVAL of
 * the merge script), with many decisions in flight as a gateway has with
 * many sessions, on greygate's own loop (common/redis_loop.c). Also the
 * commands per decision, and Redis's memory per triplet and per pass.
 *
 *   redis-bench SOCKET PASSWORD [EVENTS] [IN_FLIGHT]
 *       (defaults: 200000 events, 64 in flight)
 *
 * The events: 76% bots (a new triplet from a random address, never
 * retried), 9% real MTAs (a new triplet from one of 65,536 /24s, retried
 * 300 s to 2 h later, in virtual time from now), and 15% deliveries of
 * passed clients on the fast path. */
#include <arpa/inet.h>
#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"
#include "bench-store.h"
#include "load-samples.h"
#include "policy.h"
#include "redis_loop.h"
#include "store_redis.h"
#include "timesrc.h"

struct event {
	int64_t now;
	uint32_t ip;
	uint32_t sender;
	uint16_t rcpt;
	uint8_t fast;
};

/* The events over a month of virtual time starting now (real time: the
 * records' ends must lie ahead, or Redis expires them at once). */
static struct event *
make_events(size_t n, int64_t start)
{
	struct event *evs = calloc(n, sizeof(*evs));
	struct event *retries = calloc(n, sizeof(*retries));
	uint32_t passed[4096];
	size_t nretries = 0, next_retry = 0, npassed = 0;

	if (!evs || !retries)
		exit(1);
	for (size_t i = 0; i < n; i++) {
		int64_t now = start + (int64_t)i * 30 * 86400 / (int64_t)n;
		uint64_t r = bench_rand();
		struct event *e = &evs[i];

		if (next_retry < nretries && retries[next_retry].now <= now) {
			*e = retries[next_retry++];
			e->now = now;
			passed[npassed++ % 4096] = e->ip;
			continue;
		}
		e->now = now;
		e->sender = (uint32_t)(r >> 8) % (1u << 20);
		e->rcpt = (uint16_t)((r >> 40) % 4096);
		if (r % 100 < 15 && npassed) {
			e->ip = passed[(r >> 20) %
			               (npassed < 4096 ? npassed : 4096)];
			e->fast = 1;
		} else if (r % 100 < 91) {
			e->ip = (uint32_t)(bench_rand() >> 32);
		} else {
			e->ip = 0x0A000000u | (uint32_t)((r >> 16) % 65536)
			                              << 8;
			retries[nretries] = *e;
			retries[nretries++].now =
			        now + 300 + (int64_t)(bench_rand() % 7200);
		}
	}
	free(retries);
	return evs;
}

static struct grey_attempt
attempt_of(const struct event *e, char *sender, char *rcpt)
{
	struct grey_attempt a = {.kind = GREY_ATTEMPT_RCPT,
	                         .now = e->now,
	                         .helo = "",
	                         .sender = sender,
	                         .rcpt = rcpt};
	uint32_t ip = htonl(e->ip);

	snprintf(sender, 40, "user%u@sender%u.example", e->sender,
	         e->sender % 997);
	snprintf(rcpt, 32, "rcpt%u@example.org", e->rcpt);
	a.client.family = AF_INET;
	memcpy(a.client.bytes, &ip, 4);
	a.path = e->fast ? GREY_PATH_FAST : GREY_PATH_TARPIT;
	a.reply = e->fast ? 250 : 451;
	return a;
}

/* --- against Redis: decisions in flight on the loop --- */

struct slot {
	struct grey_records before, w;
	struct grey_attempt a;
	char sender[40], rcpt[32];
};

static struct {
	struct loop *loop;
	struct rconn *c;
	struct grey *grey;
	const struct event *evs;
	size_t n, next, done;
	uint64_t passes, failed;
} run;

static void start(struct slot *s);

static void
on_applied(int err, void *ctx)
{
	if (err)
		run.failed++;
	run.done++;
	start(ctx);
}

static void
on_fetched(struct grey_records *w, int err, void *ctx)
{
	struct slot *s = ctx;
	struct grey_decision d;

	if (err) {
		run.failed++;
		run.done++;
		start(s);
		return;
	}
	s->before = *w;
	grey_decide_records(run.grey, &s->a, w, &d);
	if (d.action == GREY_PASS && d.reason == GREY_REASON_RETRY_PASSED)
		run.passes++;
	if (store_redis_apply(run.c, "gg:", &s->before, w, 2 * 86400, "bench",
	                      NULL, on_applied, s) < 0) {
		run.failed++;
		run.done++;
		start(s);
	}
}

static void
start(struct slot *s)
{
	if (run.next >= run.n)
		return;
	s->a = attempt_of(&run.evs[run.next++], s->sender, s->rcpt);
	grey_records_prepare(run.grey, &s->a, &s->w);
	if (store_redis_fetch(run.c, "gg:", &s->w, NULL, on_fetched, s) < 0) {
		run.failed++;
		run.done++;
	}
}

static long long
integer_reply(redisContext *rc, const char *cmd, const char *arg)
{
	redisReply *r = redisCommand(rc, cmd, arg);
	long long v = -1;

	if (r && r->type == REDIS_REPLY_INTEGER)
		v = r->integer;
	freeReplyObject(r);
	return v;
}

static long long
used_memory(redisContext *rc)
{
	redisReply *r = redisCommand(rc, "INFO memory");
	long long v = -1;
	const char *p = r && r->type == REDIS_REPLY_STRING ? r->str : NULL;

	if (p && (p = strstr(p, "used_memory:")))
		v = atoll(p + 12);
	freeReplyObject(r);
	return v;
}

int
main(int argc, char **argv)
{
	size_t n = argc > 3 ? strtoul(argv[3], NULL, 10) : 200000;
	size_t in_flight = argc > 4 ? strtoul(argv[4], NULL, 10) : 64;
	struct rconn_config cfg = {.timeout_ms = 5000};
	struct grey_config gc;
	struct timespec t0;
	struct slot *slots;
	struct event *evs;
	redisContext *rc;
	char dir[64] = "/dev/shm/gg-redis-bench-XXXXXX", rm[96];
	struct store *store;
	double redis_s, lmdb_s;
	uint64_t commands, lmdb_passes = 0;
	long long mem0, mem1, triplets, passes;

	if (argc < 3) {
		fprintf(stderr, "usage: redis-bench SOCKET|ADDRESS:PORT PASSWORD "
		                "[EVENTS] [IN_FLIGHT]\n");
		return 2;
	}
	/* A unix socket's path, or an IPv4 address and port. */
	if (argv[1][0] == '/') {
		cfg.unix_path = argv[1];
	} else {
		char *colon = strrchr(argv[1], ':');

		if (!colon)
			return 2;
		*colon = 0;
		cfg.host = argv[1];
		cfg.port = (uint16_t)atoi(colon + 1);
	}
	cfg.password = argv[2];
	evs = make_events(n, (int64_t)time(NULL));
	grey_config_defaults(&gc);

	/* Redis: empty first, then the events. */
	rc = cfg.unix_path ? redisConnectUnix(cfg.unix_path)
	                   : redisConnect(cfg.host, cfg.port);
	if (!rc || rc->err) {
		fprintf(stderr, "redis-bench: cannot connect to %s\n", argv[1]);
		return 1;
	}
	freeReplyObject(redisCommand(rc, "AUTH %s", argv[2]));
	freeReplyObject(redisCommand(rc, "FLUSHALL"));
	mem0 = used_memory(rc);
	run.loop = loop_new(timesrc_system());
	run.c = rconn_new(run.loop, &cfg, NULL, NULL);
	run.grey = grey_new(&gc);
	run.evs = evs;
	run.n = n;
	while (!rconn_up(run.c))
		loop_run_once(run.loop, 100);
	slots = calloc(in_flight, sizeof(*slots));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < in_flight; i++)
		start(&slots[i]);
	while (run.done < n)
		loop_run_once(run.loop, 100);
	redis_s = bench_seconds_since(&t0);
	commands = rconn_get_counters(run.c)->commands;
	mem1 = used_memory(rc);
	triplets = 0;
	passes = 0;
	{
		redisReply *r = redisCommand(rc, "DBSIZE");

		if (r && r->type == REDIS_REPLY_INTEGER)
			triplets = r->integer;
		freeReplyObject(r);
	}
	{
		/* Sizes of one record of each kind. */
		redisReply *k = redisCommand(rc, "SCAN 0 MATCH gg:pass:* COUNT "
		                                 "100000");

		if (k && k->type == REDIS_REPLY_ARRAY && k->elements == 2 &&
		    k->element[1]->elements > 0)
			passes = integer_reply(rc, "MEMORY USAGE %s",
			                       k->element[1]->element[0]->str);
		freeReplyObject(k);
	}
	{
		redisReply *k = redisCommand(rc, "SCAN 0 MATCH gg:grey:* COUNT "
		                                 "1000");
		long long one = -1;

		if (k && k->type == REDIS_REPLY_ARRAY && k->elements == 2 &&
		    k->element[1]->elements > 0)
			one = integer_reply(rc, "MEMORY USAGE %s",
			                    k->element[1]->element[0]->str);
		freeReplyObject(k);
		printf("redis: %lld keys, %lld bytes used (%.0f per key); "
		       "MEMORY USAGE of one triplet %lld, of one pass %lld "
		       "bytes\n",
		       triplets, mem1 - mem0,
		       triplets ? (double)(mem1 - mem0) / (double)triplets
		                : 0.0,
		       one, passes);
	}

	/* LMDB on tmpfs: the same decisions, one at a time, as greygated. */
	if (!mkdtemp(dir) || store_open(dir, false, &store) < 0) {
		fprintf(stderr, "redis-bench: no LMDB store in %s\n", dir);
		return 1;
	}
	grey_free(run.grey);
	run.grey = grey_new(&gc);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < n; i++) {
		char sender[40], rcpt[32];
		struct grey_attempt a = attempt_of(&evs[i], sender, rcpt);
		struct grey_decision d;

		store_decide(store, run.grey, &a, &d);
		if (d.action == GREY_PASS &&
		    d.reason == GREY_REASON_RETRY_PASSED)
			lmdb_passes++;
		if (store_pending(store) >= 10000)
			bench_store_flush(store);
	}
	bench_store_flush(store);
	lmdb_s = bench_seconds_since(&t0);
	printf("                      seconds  decisions/s   passes  "
	       "commands/decision  failed\n");
	printf("redis (%3zu in flight) %7.2f  %11.0f  %7llu  %17.2f  %6llu\n",
	       in_flight, redis_s, (double)n / redis_s,
	       (unsigned long long)run.passes, (double)commands / (double)n,
	       (unsigned long long)run.failed);
	printf("lmdb (tmpfs)          %7.2f  %11.0f  %7llu  %17s  %6s\n",
	       lmdb_s, (double)n / lmdb_s, (unsigned long long)lmdb_passes, "-",
	       "-");
	printf("round trips per decision with Redis: 2 (the fetch, pipelined; "
	       "the write), 1 when nothing changes\n");
	grey_free(run.grey);
	store_close(store);
	snprintf(rm, sizeof(rm), "rm -rf %s", dir);
	if (system(rm) != 0)
		return 1;
	rconn_free(run.c);
	loop_free(run.loop);
	redisFree(rc);
	free(slots);
	free(evs);
	return 0;
}
