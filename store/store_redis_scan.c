// SPDX-License-Identifier: GPL-2.0-or-later
/* Every pass or trap in the shared store, for a gateway that must rebuild
 * its sets from the keys (its start, or a stream that cannot tell what
 * it missed), and every triplet, for a copy of the store: SCAN over
 * PREFIXpass:*, PREFIXtrap:* or PREFIXgrey:* (and the run-time allow
 * entries, and the gateways' report figures), a batch at a time, and
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

struct record;
struct scan;

/* What a walk reads, by the kind of its keys. */
struct scan_kind {
	const char *name;          /* the keys "PREFIXname:..." */
	const char *const *fields; /* the fields of each, one HMGET */
	size_t nfields;
	/* the key after "PREFIXname:" into rec. Return: 0 or -1 */
	int (*key)(const char *rest, size_t len, struct record *rec);
	/* the HMGET's answer told to the walk's fn. Return: 0 (told), 1
	 * (gone meanwhile), -1 (unreadable) */
	int (*tell)(const redisReply *reply, struct record *rec);
};

struct scan {
	struct rconn *c;
	const struct scan_kind *kind;
	size_t key_skip; /* strlen("PREFIXpass:"): where the CIDR starts */
	char match[STORE_REDIS_KEY_MAX];
	store_client_fn *fn;              /* clients, or */
	store_triplet_fn *triplet_fn;     /* triplets, or */
	store_redis_allow_fn *allow_fn;   /* run-time allow entries, or */
	store_redis_report_fn *report_fn; /* gateways' report figures */
	bool deleting;                    /* the keys found deleted */
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
	char *name;                                      /* reports */
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

static int
cidr_key(const char *rest, size_t len, struct record *rec)
{
	(void)len;
	return grey_cidr_parse(rest, &rec->key);
}

/* "CIDR SENDER RCPT", or "spf SENDER RCPT" pooled (the sender may be
 * empty; neither has blanks). */
static int
triplet_key(const char *text, size_t len, struct record *rec)
{
	const char *sp1 = strchr(text, ' '), *sp2;
	char cidr[64];

	(void)len;
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
	return grey_triplet_client_parse(cidr, &rec->key);
}

/* A gateway's name: printable, no NUL within. */
static int
name_key(const char *rest, size_t len, struct record *rec)
{
	if (!len || len > STORE_REDIS_GATEWAY_MAX || strlen(rest) != len)
		return -1;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)rest[i] < 0x21 || rest[i] == 0x7f)
			return -1;
	rec->name = strdup(rest);
	return rec->name ? 0 : -1;
}

static int
tell_client(const redisReply *reply, struct record *rec)
{
	struct store_client client;
	int r = store_redis_parse_client(reply, &client);

	if (r != STORE_FOUND)
		return r < 0 ? -1 : 1;
	rec->s->fn(&rec->key, &client, rec->s->ctx);
	return 0;
}

static int
tell_triplet(const redisReply *reply, struct record *rec)
{
	struct store_triplet t;
	int r = store_redis_parse_triplet(reply, &t);

	if (r != STORE_FOUND)
		return r < 0 ? -1 : 1;
	rec->s->triplet_fn(&rec->key, rec->sender, rec->rcpt, &t,
	                   rec->s->ctx);
	return 0;
}

/* A number field: decimal, at least 0. Return: 0 or -1. */
static int
decimal(const redisReply *f, int64_t *out)
{
	char *end;
	long long v;

	if (f->type != REDIS_REPLY_STRING)
		return -1;
	v = strtoll(f->str, &end, 10);
	if (end == f->str || *end || v < 0)
		return -1;
	*out = v;
	return 0;
}

/* An HMGET of two fields into a and b. Return: 0, 1 (both nil: the key
 * went meanwhile), or -1 (not such an answer). */
static int
two_fields(const redisReply *reply, const redisReply **a,
           const redisReply **b)
{
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2)
		return -1;
	*a = reply->element[0];
	*b = reply->element[1];
	return (*a)->type == REDIS_REPLY_NIL && (*b)->type == REDIS_REPLY_NIL;
}

/* An allow entry's HMGET expires comment. */
static int
tell_allow(const redisReply *reply, struct record *rec)
{
	const redisReply *exp, *comment;
	int64_t expires;
	int r = two_fields(reply, &exp, &comment);

	if (r)
		return r;
	if (decimal(exp, &expires) < 0 ||
	    (comment->type != REDIS_REPLY_STRING &&
	     comment->type != REDIS_REPLY_NIL))
		return -1;
	rec->s->allow_fn(&rec->key, expires,
	                 comment->type == REDIS_REPLY_STRING ? comment->str
	                                                     : "",
	                 rec->s->ctx);
	return 0;
}

/* A gateway's report figures: HMGET figures updated. */
static int
tell_report(const redisReply *reply, struct record *rec)
{
	const redisReply *figures, *when;
	int64_t updated;
	int r = two_fields(reply, &figures, &when);

	if (r)
		return r;
	if (figures->type != REDIS_REPLY_STRING || decimal(when, &updated) < 0)
		return -1;
	rec->s->report_fn(rec->name, figures->str, figures->len, updated,
	                  rec->s->ctx);
	return 0;
}

static const char *const allow_fields[] = {"expires", "comment"};
static const char *const report_fields[] = {"figures", "updated"};

#define KIND(name, fields, key, tell)                                     \
	{name, fields, sizeof(fields) / sizeof(*fields), key, tell}
static const struct scan_kind kind_pass =
        KIND("pass", store_redis_client_fields, cidr_key, tell_client);
static const struct scan_kind kind_trap =
        KIND("trap", store_redis_client_fields, cidr_key, tell_client);
static const struct scan_kind kind_grey =
        KIND("grey", store_redis_triplet_fields, triplet_key, tell_triplet);
static const struct scan_kind kind_allow =
        KIND("allow", allow_fields, cidr_key, tell_allow);
static const struct scan_kind kind_report =
        KIND("report", report_fields, name_key, tell_report);

static void
free_record(struct record *rec)
{
	free(rec->name);
	free(rec);
}

static void
on_record(struct redisReply *reply, void *ctx)
{
	struct record *rec = ctx;
	struct scan *s = rec->s;

	if (!reply) {
		s->failed = true;
	} else if (!s->failed) {
		int r = s->kind->tell(reply, rec);

		if (r == 0)
			s->counts.records++;
		else if (r < 0)
			s->counts.bad++;
	}
	free_record(rec);
	answered(s);
}

static void scan_from(struct scan *s, const char *cursor);

/* One key of a batch: its record asked for. */
static void
ask_record(struct scan *s, const redisReply *key)
{
	const char *argv[2 + 8] = {"HMGET", key->str};
	struct record *rec;

	if (key->type != REDIS_REPLY_STRING || key->len <= s->key_skip) {
		s->counts.bad++;
		return;
	}
	rec = calloc(1, sizeof(*rec));
	if (!rec) {
		s->failed = true;
		return;
	}
	rec->s = s;
	if (s->kind->key(key->str + s->key_skip, key->len - s->key_skip,
	                 rec) < 0) {
		s->counts.bad++; /* someone else's key under our prefix */
		free_record(rec);
		return;
	}
	for (size_t i = 0; i < s->kind->nfields; i++)
		argv[2 + i] = s->kind->fields[i];
	if (rconn_command(s->c, on_record, rec, (int)(2 + s->kind->nfields),
	                  argv, NULL) < 0) {
		s->failed = true;
		free_record(rec);
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

/* The keys "PREFIXkind:" then within (a pattern: "*" for all), each
 * told to the one fn set in proto. */
static int
scan_start(const struct scan *proto, struct rconn *c, const char *prefix,
           const struct scan_kind *kind, const char *within,
           store_redis_scanned_fn *done, void *ctx)
{
	struct scan *s = malloc(sizeof(*s));
	int n;

	if (!s)
		return -ENOMEM;
	*s = *proto;
	n = snprintf(s->match, sizeof(s->match), "%s%s:%s", prefix,
	             kind->name, within);
	if (n < 0 || (size_t)n >= sizeof(s->match)) {
		free(s);
		return -ENAMETOOLONG;
	}
	s->kind = kind;
	s->key_skip = strlen(prefix) + strlen(kind->name) + 1;
	s->c = c;
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
	struct scan proto = {.fn = fn};

	return scan_start(&proto, c, prefix,
	                  table == STORE_TRAP ? &kind_trap : &kind_pass, "*",
	                  done, ctx);
}

int
store_redis_scan_triplets(struct rconn *c, const char *prefix,
                          store_triplet_fn *fn, store_redis_scanned_fn *done,
                          void *ctx)
{
	struct scan proto = {.triplet_fn = fn};

	return scan_start(&proto, c, prefix, &kind_grey, "*", done, ctx);
}

int
store_redis_scan_allows(struct rconn *c, const char *prefix,
                        store_redis_allow_fn *fn, store_redis_scanned_fn *done,
                        void *ctx)
{
	struct scan proto = {.allow_fn = fn};

	return scan_start(&proto, c, prefix, &kind_allow, "*", done, ctx);
}

int
store_redis_scan_reports(struct rconn *c, const char *prefix,
                         store_redis_report_fn *fn,
                         store_redis_scanned_fn *done, void *ctx)
{
	struct scan proto = {.report_fn = fn};

	return scan_start(&proto, c, prefix, &kind_report, "*", done, ctx);
}

int
store_redis_delete_triplets(struct rconn *c, const char *prefix,
                            const struct grey_client *key,
                            store_redis_scanned_fn *done, void *ctx)
{
	struct scan proto = {.deleting = true};
	char within[80], cidr[64];

	/* ("CIDR *": a CIDR holds no glob character) */
	snprintf(within, sizeof(within), "%s *",
	         grey_client_format(key, cidr, sizeof(cidr)));
	return scan_start(&proto, c, prefix, &kind_grey, within, done, ctx);
}
