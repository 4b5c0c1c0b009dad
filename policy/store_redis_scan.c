// SPDX-License-Identifier: GPL-2.0-or-later
/* Every pass or trap in the shared store, for a gateway that must rebuild
 * its sets from the keys (its start, or a stream that cannot tell what
 * it missed), and every triplet, for a copy of the store: SCAN over
 * PREFIXpass:*, PREFIXtrap:* or PREFIXgrey:*, a batch at a time, and
 * each batch's records read with pipelined HMGETs on the same
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
	store_client_fn *fn;            /* clients, or */
	store_triplet_fn *triplet_fn;   /* triplets, or */
	store_redis_allow_fn *allow_fn; /* run-time allow entries, or */
	bool deleting;                  /* the keys found deleted */
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
	char sender[GREY_ADDR_MAX], rcpt[GREY_ADDR_MAX]; /* triplets */
};

/* n answers in: the walk ends once every one is, told once, then
 * freed. */
static void
answered_n(struct scan *s, unsigned n)
{
	s->waiting -= n;
	if (s->waiting || (!s->scanned && !s->failed))
		return;
	s->done(s->failed ? -EIO : 0, &s->counts, s->ctx);
	free(s);
}

static void
answered(struct scan *s)
{
	answered_n(s, 1);
}

/* An allow entry's HMGET expires comment. Return: 0 (told), 1 (gone
 * meanwhile), or -1 (unreadable). */
static int
allow_entry(const redisReply *reply, const struct record *rec, struct scan *s)
{
	const redisReply *exp, *comment;
	char *end;
	long long expires;

	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2)
		return -1;
	exp = reply->element[0];
	comment = reply->element[1];
	if (exp->type == REDIS_REPLY_NIL && comment->type == REDIS_REPLY_NIL)
		return 1;
	if (exp->type != REDIS_REPLY_STRING ||
	    (comment->type != REDIS_REPLY_STRING &&
	     comment->type != REDIS_REPLY_NIL))
		return -1;
	expires = strtoll(exp->str, &end, 10);
	if (end == exp->str || *end || expires < 0)
		return -1;
	s->counts.records++;
	s->allow_fn(&rec->key, expires,
	            comment->type == REDIS_REPLY_STRING ? comment->str : "",
	            s->ctx);
	return 0;
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
	} else if (!s->failed && s->allow_fn) {
		if (allow_entry(reply, rec, s) < 0)
			s->counts.bad++;
	} else if (!s->failed && s->triplet_fn) {
		struct store_triplet t;

		r = store_redis_parse_triplet(reply, &t);
		if (r == STORE_FOUND) {
			s->counts.records++;
			s->triplet_fn(&rec->key, rec->sender, rec->rcpt, &t,
			              s->ctx);
		} else if (r < 0) {
			s->counts.bad++;
		}
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
/* "CIDR SENDER RCPT" (the sender may be empty; neither has blanks).
 * Return: 0 or -1. */
static int
triplet_of_key(const char *text, struct record *rec)
{
	const char *sp1 = strchr(text, ' '), *sp2;
	char cidr[64];

	if (!sp1 || (size_t)(sp1 - text) >= sizeof(cidr))
		return -1;
	sp2 = strchr(sp1 + 1, ' ');
	if (!sp2 || strchr(sp2 + 1, ' ') ||
	    (size_t)(sp2 - sp1 - 1) >= sizeof(rec->sender) ||
	    strlen(sp2 + 1) >= sizeof(rec->rcpt) || !sp2[1])
		return -1;
	memcpy(cidr, text, (size_t)(sp1 - text));
	cidr[sp1 - text] = 0;
	memcpy(rec->sender, sp1 + 1, (size_t)(sp2 - sp1 - 1));
	rec->sender[sp2 - sp1 - 1] = 0;
	strcpy(rec->rcpt, sp2 + 1);
	return grey_cidr_parse(cidr, &rec->key);
}

static void
ask_record(struct scan *s, const redisReply *key)
{
	static const char *const names[] = {"since", "expires", "refreshed",
	                                    "deliveries", "sessions"};
	static const char *const triplet_names[] = {"first", "last", "attempts",
	                                            "awaiting"};
	const char *argv[7] = {"HMGET", key->str};
	static const char *const allow_names[] = {"expires", "comment"};
	size_t nnames = s->allow_fn ? 2 : s->triplet_fn ? 4 : 5;
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
	if ((s->triplet_fn ? triplet_of_key(key->str + s->key_skip, rec)
	                   : grey_cidr_parse(key->str + s->key_skip,
	                                     &rec->key)) < 0) {
		s->counts.bad++; /* someone else's key under our prefix */
		free(rec);
		return;
	}
	for (size_t i = 0; i < nnames; i++)
		argv[2 + i] = s->allow_fn     ? allow_names[i]
		              : s->triplet_fn ? triplet_names[i]
		                              : names[i];
	if (rconn_command(s->c, on_record, rec, (int)(2 + nnames), argv, NULL) <
	    0) {
		s->failed = true;
		free(rec);
		return;
	}
	s->waiting++;
}

static void
on_deleted(struct redisReply *reply, void *ctx)
{
	struct scan *s = ctx;

	if (!reply || reply->type != REDIS_REPLY_INTEGER)
		s->failed = true;
	else
		s->counts.records += (uint64_t)reply->integer;
	answered(s);
}

/* A batch's keys, in one DEL. */
static void
delete_keys(struct scan *s, const redisReply *keys)
{
	const char **argv;
	size_t n = 0;

	if (!keys->elements)
		return;
	argv = calloc(keys->elements + 1, sizeof(*argv));
	if (!argv) {
		s->failed = true;
		return;
	}
	argv[n++] = "DEL";
	for (size_t i = 0; i < keys->elements; i++)
		if (keys->element[i]->type == REDIS_REPLY_STRING)
			argv[n++] = keys->element[i]->str;
	if (n > 1 &&
	    rconn_command(s->c, on_deleted, s, (int)n, argv, NULL) == 0)
		s->waiting++;
	else if (n > 1)
		s->failed = true;
	free(argv);
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
	if (s->deleting)
		delete_keys(s, keys);
	for (size_t i = 0; i < keys->elements && !s->failed && !s->deleting;
	     i++)
		ask_record(s, keys->element[i]);
	if (!s->failed && strcmp(reply->element[0]->str, "0") != 0)
		scan_from(s, reply->element[0]->str);
	else
		s->scanned = true;
	answered_n(s, 2); /* the batch's share, and the SCAN's own */
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

/* The keys "PREFIXkind:" then within (a pattern: "*" for all); kind:
 * "pass", "trap", "grey" or "allow". */
static int
scan_start(struct rconn *c, const char *prefix, const char *kind,
           const char *within, store_client_fn *fn,
           store_triplet_fn *triplet_fn, store_redis_allow_fn *allow_fn,
           bool deleting, store_redis_scanned_fn *done, void *ctx)
{
	struct scan *s = calloc(1, sizeof(*s));
	int n;

	if (!s)
		return -ENOMEM;
	s->triplet_fn = triplet_fn;
	s->allow_fn = allow_fn;
	s->deleting = deleting;
	n = snprintf(s->match, sizeof(s->match), "%s%s:%s", prefix, kind,
	             within);
	if (n < 0 || (size_t)n >= sizeof(s->match)) {
		free(s);
		return -ENAMETOOLONG;
	}
	s->key_skip = strlen(prefix) + strlen(kind) + 1;
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

int
store_redis_scan_clients(struct rconn *c, const char *prefix,
                         enum store_table table, store_client_fn *fn,
                         store_redis_scanned_fn *done, void *ctx)
{
	return scan_start(c, prefix, table == STORE_TRAP ? "trap" : "pass", "*",
	                  fn, NULL, NULL, false, done, ctx);
}

int
store_redis_scan_triplets(struct rconn *c, const char *prefix,
                          store_triplet_fn *fn, store_redis_scanned_fn *done,
                          void *ctx)
{
	return scan_start(c, prefix, "grey", "*", NULL, fn, NULL, false, done,
	                  ctx);
}

int
store_redis_scan_allows(struct rconn *c, const char *prefix,
                        store_redis_allow_fn *fn, store_redis_scanned_fn *done,
                        void *ctx)
{
	return scan_start(c, prefix, "allow", "*", NULL, NULL, fn, false, done,
	                  ctx);
}

int
store_redis_delete_triplets(struct rconn *c, const char *prefix,
                            const struct grey_client *key,
                            store_redis_scanned_fn *done, void *ctx)
{
	char within[80], cidr[64];

	/* ("CIDR *": a CIDR holds no glob character) */
	snprintf(within, sizeof(within), "%s *",
	         grey_client_format(key, cidr, sizeof(cidr)));
	return scan_start(c, prefix, "grey", within, NULL, NULL, NULL, true,
	                  done, ctx);
}
