// SPDX-License-Identifier: GPL-2.0-or-later
/* Following the shared store's stream of passes and traps (see
 * store_redis.h): on each connection, first where the stream stands
 * against the last id applied, and when the store's settings were
 * written (a gap is told, for a reconcile from the keys, and whether
 * Redis was emptied or the stream trimmed), then XREAD BLOCK from that
 * id, again and again. An error reply (-LOADING while Redis reads its
 * data) is asked again a moment later, from the check. */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop.h"
#include "redis_loop.h"
#include "store_redis.h"

#define BLOCK_MS 1000
#define BLOCK_TEXT "1000" /* the same, for XREAD */
#define BATCH "1000"
#define ID_MAX 48
#define AGAIN_MS 500

struct store_redis_follow {
	struct loop *loop;
	struct rconn *c;
	struct loop_timer again;
	char stream[STORE_REDIS_KEY_MAX], config[STORE_REDIS_KEY_MAX];
	char last_id[ID_MAX];
	/* at the check: nothing applied yet; the stream's first entry */
	bool fresh, empty, trimmed;
	/* the store's settings' "created" at the last check ("-": absent;
	 * "": not checked yet) */
	char created[32];
	store_redis_event_fn *fn;
	store_redis_gap_fn *gap;
	void *ctx;
};

static void read_more(struct store_redis_follow *f);

/* "1700000000000-3" as two numbers, for ordering. Return: 0 or -1. */
static int
parse_id(const char *id, uint64_t *ms, uint64_t *seq)
{
	char *end;

	*ms = strtoull(id, &end, 10);
	if (end == id || *end != '-')
		return -1;
	*seq = strtoull(end + 1, &end, 10);
	return *end ? -1 : 0;
}

/* a later than b? */
static bool
id_after(const char *a, const char *b)
{
	uint64_t am, as, bm, bs;

	if (parse_id(a, &am, &as) < 0 || parse_id(b, &bm, &bs) < 0)
		return true; /* unknown: as if trimmed */
	return am > bm || (am == bm && as > bs);
}

/* The id of the one entry an XRANGE/XREVRANGE COUNT 1 returns, or NULL
 * (an empty stream). */
static const char *
only_id(const redisReply *r)
{
	if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
	    r->element[0]->type != REDIS_REPLY_ARRAY ||
	    r->element[0]->elements < 1 ||
	    r->element[0]->element[0]->type != REDIS_REPLY_STRING)
		return NULL;
	return r->element[0]->element[0]->str;
}

int
store_redis_parse_event(const redisReply *e, struct store_redis_event *ev)
{
	const redisReply *kv;
	bool have_kind = false, have_key = false, have_exp = false;

	memset(ev, 0, sizeof(*ev));
	if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
	    e->element[0]->type != REDIS_REPLY_STRING ||
	    e->element[1]->type != REDIS_REPLY_ARRAY)
		return -EBADMSG;
	ev->id = e->element[0]->str;
	kv = e->element[1];
	ev->by = "?";
	ev->comment = "";
	for (size_t i = 0; i + 1 < kv->elements; i += 2) {
		const char *name = kv->element[i]->str;
		const redisReply *v = kv->element[i + 1];

		if (kv->element[i]->type != REDIS_REPLY_STRING ||
		    v->type != REDIS_REPLY_STRING)
			return -EINVAL;
		if (!strcmp(name, "kind")) {
			ev->forget = !strncmp(v->str, "forget", 6);
			ev->trap = !strcmp(v->str, "trap") ||
			           !strcmp(v->str, "forget-trap");
			ev->allow = !strcmp(v->str, "allow");
			have_kind = ev->trap || ev->allow ||
			            !strcmp(v->str, "pass") ||
			            !strcmp(v->str, "forget");
		} else if (!strcmp(name, "key")) {
			have_key = grey_cidr_parse(v->str, &ev->key) == 0;
		} else if (!strcmp(name, "expires")) {
			char *end;

			ev->expires = strtoll(v->str, &end, 10);
			have_exp = end != v->str && !*end && ev->expires >= 0;
		} else if (!strcmp(name, "comment")) {
			ev->comment = v->str;
		} else if (!strcmp(name, "by")) {
			ev->by = v->str;
		}
	}
	/* (only an allow entry or a forget may have no end) */
	if (!have_kind || !have_key || !have_exp ||
	    (!ev->allow && !ev->forget && !ev->expires))
		return -EINVAL;
	return 0;
}

/* One entry, applied. Return: 0, or -1 (skipped). */
static int
entry(struct store_redis_follow *f, const redisReply *e)
{
	struct store_redis_event ev;
	int r = store_redis_parse_event(e, &ev);

	/* Where to go on from, even past an entry that does not parse. */
	if (r != -EBADMSG)
		snprintf(f->last_id, sizeof(f->last_id), "%s", ev.id);
	if (r < 0)
		return -1;
	f->fn(&ev, f->ctx);
	return 0;
}

static void check(struct store_redis_follow *f);

/* An error reply: the check again, a moment later. */
static bool
refused(struct store_redis_follow *f, const redisReply *r)
{
	if (r->type != REDIS_REPLY_ERROR)
		return false;
	loop_timer_arm(f->loop, &f->again, loop_now_ms(f->loop) + AGAIN_MS);
	return true;
}

static void
on_again(struct loop *loop, struct loop_timer *t, void *ctx)
{
	struct store_redis_follow *f = ctx;

	if (rconn_up(f->c))
		check(f);
}

/* XREAD's answer: nil (nothing new in BLOCK_MS), or [[stream,
 * [entry, ...]]]. */
static void
on_read(struct redisReply *r, void *ctx)
{
	struct store_redis_follow *f = ctx;

	if (!r || refused(f, r))
		return; /* (lost: on_state starts again) */
	if (r->type == REDIS_REPLY_ARRAY && r->elements >= 1 &&
	    r->element[0]->type == REDIS_REPLY_ARRAY &&
	    r->element[0]->elements == 2 &&
	    r->element[0]->element[1]->type == REDIS_REPLY_ARRAY) {
		const redisReply *entries = r->element[0]->element[1];

		for (size_t i = 0; i < entries->elements; i++)
			entry(f, entries->element[i]);
	}
	read_more(f);
}

static void
read_more(struct store_redis_follow *f)
{
	const char *argv[] = {"XREAD",    "COUNT",   BATCH,     "BLOCK",
	                      BLOCK_TEXT, "STREAMS", f->stream, f->last_id};

	rconn_command(f->c, on_read, f, 8, argv, NULL);
}

/* Where the stream begins (XRANGE - + COUNT 1) against the last id. */
static void
on_first(struct redisReply *r, void *ctx)
{
	struct store_redis_follow *f = ctx;
	const char *first;

	if (!r || r->type == REDIS_REPLY_ERROR)
		return; /* (on_created tells) */
	first = only_id(r);
	f->empty = !first;
	f->trimmed = first && id_after(first, f->last_id);
}

/* Where the stream ends (XREVRANGE + - COUNT 1): a first start goes on
 * from there, after a reconcile. */
static void
on_last(struct redisReply *r, void *ctx)
{
	struct store_redis_follow *f = ctx;
	const char *last;

	if (!r || r->type == REDIS_REPLY_ERROR)
		return; /* (on_created tells) */
	last = only_id(r);
	snprintf(f->last_id, sizeof(f->last_id), "%s", last ? last : "0-0");
}

/* When the settings were written (asked after the stream, on the same
 * connection: answered after it): the gap, told as what it is. */
static void
on_created(struct redisReply *r, void *ctx)
{
	struct store_redis_follow *f = ctx;
	const char *now;
	bool first_start = !f->created[0], emptied;

	if (!r || refused(f, r))
		return;
	now = r->type == REDIS_REPLY_STRING ? r->str : "-";
	/* (settings first written since it last looked: the site's first,
	 * not an emptying; issue 57: a follower that started before the
	 * first gateway agreed said "emptied" at its first reconnection,
	 * after Redis was merely stopped) */
	emptied = !first_start && strcmp(f->created, "-") != 0 &&
	          strcmp(now, f->created) != 0;
	snprintf(f->created, sizeof(f->created), "%s", now);
	if (f->fresh)
		f->gap("no entry applied yet", f->ctx);
	else if (emptied && !strcmp(now, "-"))
		f->gap("Redis was emptied (its settings are gone too)",
		       f->ctx);
	else if (emptied)
		f->gap("Redis was emptied and written anew since (its "
		       "settings are new)",
		       f->ctx);
	else if (f->empty)
		f->gap("the stream is empty: trimmed to nothing, or a new "
		       "Redis",
		       f->ctx);
	else if (f->trimmed)
		f->gap("the stream was trimmed past the last entry applied",
		       f->ctx);
	read_more(f);
}

static void
check(struct store_redis_follow *f)
{
	const char *created[] = {"HGET", f->config, "created"};

	loop_timer_cancel(f->loop, &f->again);
	f->empty = f->trimmed = false;
	f->fresh = !f->last_id[0];
	if (f->fresh) {
		const char *argv[] = {"XREVRANGE", f->stream, "+",
		                      "-",         "COUNT",   "1"};

		rconn_command(f->c, on_last, f, 6, argv, NULL);
	} else {
		const char *argv[] = {"XRANGE", f->stream, "-",
		                      "+",      "COUNT",   "1"};

		rconn_command(f->c, on_first, f, 6, argv, NULL);
	}
	rconn_command(f->c, on_created, f, 3, created, NULL);
}

static void
on_state(struct rconn *c, bool up, const char *why, void *ctx)
{
	struct store_redis_follow *f = ctx;

	if (up)
		check(f);
	else
		loop_timer_cancel(f->loop, &f->again);
}

struct store_redis_follow *
store_redis_follow_new(struct loop *loop, const struct rconn_config *cfg,
                       const char *prefix, const char *last_id,
                       store_redis_event_fn *fn, store_redis_gap_fn *gap,
                       void *ctx)
{
	struct store_redis_follow *f = calloc(1, sizeof(*f));
	struct rconn_config mine = *cfg;

	if (!f)
		return NULL;
	if (snprintf(f->stream, sizeof(f->stream), "%sstream", prefix) >=
	            (int)sizeof(f->stream) ||
	    snprintf(f->config, sizeof(f->config), "%sconfig", prefix) >=
	            (int)sizeof(f->config) ||
	    (last_id && strlen(last_id) >= sizeof(f->last_id))) {
		free(f);
		errno = ENAMETOOLONG;
		return NULL;
	}
	snprintf(f->last_id, sizeof(f->last_id), "%s", last_id ? last_id : "");
	f->fn = fn;
	f->gap = gap;
	f->ctx = ctx;
	f->loop = loop;
	loop_timer_init(&f->again, on_again, f);
	/* A read blocks up to BLOCK_MS: its deadline is beyond that. */
	mine.timeout_ms = cfg->timeout_ms + BLOCK_MS;
	f->c = rconn_new(loop, &mine, on_state, f);
	if (!f->c) {
		free(f);
		return NULL;
	}
	return f;
}

void
store_redis_follow_free(struct store_redis_follow *f)
{
	if (!f)
		return;
	loop_timer_cancel(f->loop, &f->again);
	rconn_free(f->c);
	free(f);
}

const char *
store_redis_follow_last_id(const struct store_redis_follow *f)
{
	return f->last_id;
}
