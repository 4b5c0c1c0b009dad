// SPDX-License-Identifier: GPL-2.0-or-later
/* Every pass or trap in the shared store, for a gateway that must rebuild
 * its sets from the keys (its start, or a stream that cannot tell what
 * it missed): SCAN over PREFIXpass:* or PREFIXtrap:*, a batch at a time,
 * and each batch's records read with pipelined HMGETs on the same
 * connection. The loop never waits: each answer drives the next step. */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_loop.h"
#include "store_redis.h"

#define SCAN_BATCH "1000"

struct scan {
	struct rconn *c;
	size_t key_skip; /* strlen("PREFIXpass:"): where the CIDR starts */
	char match[STORE_REDIS_KEY_MAX];
	store_client_fn *fn;
	store_redis_scanned_fn *done;
	void *ctx;
	struct store_redis_scan_counts counts;
	unsigned waiting; /* answers still to come */
	bool scanned;     /* SCAN's cursor came back to 0 */
	bool failed;
};

struct record {
	struct scan *s;
	struct grey_client key;
};

/* The walk ends once every answer is in: told once, then freed. */
static void
answered(struct scan *s)
{
	if (--s->waiting || (!s->scanned && !s->failed))
		return;
	s->done(s->failed ? -EIO : 0, &s->counts, s->ctx);
	free(s);
}

static void
on_record(struct redisReply *reply, void *ctx)
{
	struct record *rec = ctx;
	struct scan *s = rec->s;
	struct store_client client;
	int r;

	if (!reply) {
		s->failed = true;
	} else if (!s->failed) {
		r = store_redis_parse_client(reply, &client);
		if (r == STORE_FOUND) {
			s->counts.records++;
			s->fn(&rec->key, &client, s->ctx);
		} else if (r < 0) {
			s->counts.bad++;
		}
	}
	free(rec);
	answered(s);
}

static void scan_from(struct scan *s, const char *cursor);

/* One key of a batch: its record asked for. */
static void
ask_record(struct scan *s, const redisReply *key)
{
	static const char *const names[] = {"since", "expires", "refreshed",
	                                    "deliveries", "sessions"};
	const char *argv[7] = {"HMGET", key->str};
	struct record *rec;

	if (key->type != REDIS_REPLY_STRING || key->len <= s->key_skip) {
		s->counts.bad++;
		return;
	}
	rec = malloc(sizeof(*rec));
	if (!rec) {
		s->failed = true;
		return;
	}
	rec->s = s;
	if (grey_cidr_parse(key->str + s->key_skip, &rec->key) < 0) {
		s->counts.bad++; /* someone else's key under our prefix */
		free(rec);
		return;
	}
	for (size_t i = 0; i < 5; i++)
		argv[2 + i] = names[i];
	if (rconn_command(s->c, on_record, rec, 7, argv, NULL) < 0) {
		s->failed = true;
		free(rec);
		return;
	}
	s->waiting++;
}

/* SCAN's answer: [cursor, [key, ...]]. */
static void
on_batch(struct redisReply *reply, void *ctx)
{
	struct scan *s = ctx;
	const redisReply *keys;

	if (!reply || reply->type != REDIS_REPLY_ARRAY ||
	    reply->elements != 2 ||
	    reply->element[0]->type != REDIS_REPLY_STRING ||
	    reply->element[1]->type != REDIS_REPLY_ARRAY) {
		s->failed = true;
		answered(s);
		return;
	}
	keys = reply->element[1];
	s->waiting++; /* (this answer's own share, until it is done) */
	for (size_t i = 0; i < keys->elements && !s->failed; i++)
		ask_record(s, keys->element[i]);
	if (!s->failed && strcmp(reply->element[0]->str, "0") != 0)
		scan_from(s, reply->element[0]->str);
	else
		s->scanned = true;
	answered(s); /* the batch's share */
	answered(s); /* the SCAN's own */
}

static void
scan_from(struct scan *s, const char *cursor)
{
	const char *argv[] = {"SCAN",   cursor,  "MATCH",
	                      s->match, "COUNT", SCAN_BATCH};

	if (rconn_command(s->c, on_batch, s, 6, argv, NULL) < 0) {
		s->failed = true;
		return;
	}
	s->waiting++;
}

int
store_redis_scan_clients(struct rconn *c, const char *prefix,
                         enum store_table table, store_client_fn *fn,
                         store_redis_scanned_fn *done, void *ctx)
{
	struct scan *s = calloc(1, sizeof(*s));
	int n;

	if (!s)
		return -ENOMEM;
	n = snprintf(s->match, sizeof(s->match), "%s%s:*", prefix,
	             table == STORE_TRAP ? "trap" : "pass");
	if (n < 0 || (size_t)n >= sizeof(s->match)) {
		free(s);
		return -ENAMETOOLONG;
	}
	s->key_skip = (size_t)n - 1;
	s->c = c;
	s->fn = fn;
	s->done = done;
	s->ctx = ctx;
	s->waiting = 1; /* held until the first SCAN is sent */
	scan_from(s, "0");
	if (s->failed) {
		free(s);
		return -ENOTCONN;
	}
	s->waiting--;
	return 0;
}
