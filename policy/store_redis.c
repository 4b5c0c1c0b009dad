// SPDX-License-Identifier: GPL-2.0-or-later
/* The greylist's records in Redis: keys, parsing, one attempt's fetch
 * (see store_redis.h). */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_loop.h"
#include "store_redis.h"

static const char *const client_fields[] = {"since", "expires", "refreshed",
                                            "deliveries", "sessions"};
static const char *const triplet_fields[] = {"first", "last", "attempts",
                                             "awaiting"};
#define NCLIENT (sizeof(client_fields) / sizeof(*client_fields))
#define NTRIPLET (sizeof(triplet_fields) / sizeof(*triplet_fields))

int
store_redis_client_key(const char *prefix, enum store_table table,
                       const struct grey_client *client, char *out)
{
	char net[64];
	int n = snprintf(out, STORE_REDIS_KEY_MAX, "%s%s:%s", prefix,
	                 table == STORE_TRAP ? "trap" : "pass",
	                 grey_client_format(client, net, sizeof(net)));

	return n < 0 || n >= STORE_REDIS_KEY_MAX ? -ENAMETOOLONG : n;
}

int
store_redis_triplet_key(const char *prefix, const struct grey_client *client,
                        const char *sender, const char *rcpt, char *out)
{
	char net[64];
	int n = snprintf(out, STORE_REDIS_KEY_MAX, "%sgrey:%s %s %s", prefix,
	                 grey_client_format(client, net, sizeof(net)), sender,
	                 rcpt);

	return n < 0 || n >= STORE_REDIS_KEY_MAX ? -ENAMETOOLONG : n;
}

/* A field as a number: decimal digits, an optional '-', nothing else.
 * Return: 1 (a number), 0 (nil), -EBADMSG. */
static int
field(const redisReply *r, int64_t *out)
{
	int64_t v = 0;
	size_t i = 0;
	bool neg = false;

	if (r->type == REDIS_REPLY_NIL)
		return 0;
	if (r->type != REDIS_REPLY_STRING || r->len == 0 || r->len > 19)
		return -EBADMSG;
	if (r->str[0] == '-') {
		neg = true;
		i = 1;
	}
	if (i == r->len)
		return -EBADMSG;
	for (; i < r->len; i++) {
		if (r->str[i] < '0' || r->str[i] > '9')
			return -EBADMSG;
		v = v * 10 + (r->str[i] - '0');
	}
	*out = neg ? -v : v;
	return 1;
}

/* The fields of an HMGET reply: all there (STORE_FOUND), none (0), or
 * anything else (-EBADMSG). */
static int
fields(const redisReply *reply, size_t n, int64_t *v)
{
	size_t present = 0;

	if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements != n)
		return -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		int r = field(reply->element[i], &v[i]);

		if (r < 0)
			return r;
		present += (size_t)r;
	}
	if (!present)
		return 0;
	return present == n ? STORE_FOUND : -EBADMSG;
}

static bool
fits_u32(int64_t v)
{
	return v >= 0 && v <= UINT32_MAX;
}

int
store_redis_parse_client(const redisReply *reply, struct store_client *out)
{
	int64_t v[NCLIENT];
	int r = fields(reply, NCLIENT, v);

	if (r != STORE_FOUND)
		return r;
	if (v[0] < 0 || v[1] < v[0] || v[2] < 0 || !fits_u32(v[3]) ||
	    !fits_u32(v[4]))
		return -EBADMSG;
	*out = (struct store_client){.since = v[0],
	                             .expires = v[1],
	                             .refreshed = v[2],
	                             .deliveries = (uint32_t)v[3],
	                             .sessions = (uint32_t)v[4]};
	return STORE_FOUND;
}

int
store_redis_parse_triplet(const redisReply *reply, struct store_triplet *out)
{
	int64_t v[NTRIPLET];
	int r = fields(reply, NTRIPLET, v);

	if (r != STORE_FOUND)
		return r;
	if (v[0] < 0 || v[1] < v[0] || !fits_u32(v[2]) || v[2] == 0 ||
	    !fits_u32(v[3]))
		return -EBADMSG;
	*out = (struct store_triplet){.first_seen = v[0],
	                              .last_seen = v[1],
	                              .attempts = (uint32_t)v[2],
	                              .awaiting = (uint32_t)v[3]};
	return STORE_FOUND;
}

/* --- one attempt's fetch --- */

enum which { TRAP, PASS, TRIPLET };

struct fetch {
	struct grey_records *w;
	struct store_redis_counters *counters;
	store_redis_fetched_fn *done;
	void *ctx;
	unsigned waiting; /* replies still to come */
	bool failed;
	struct part {
		struct fetch *f;
		enum which which;
	} parts[3];
};

static void
found(struct fetch *f, enum which which, const redisReply *reply)
{
	struct grey_records *w = f->w;
	int r = which == TRIPLET
	                ? store_redis_parse_triplet(reply, &w->triplet)
	                : store_redis_parse_client(
	                          reply, which == TRAP ? &w->trap : &w->pass);

	/* Unreadable: as if absent (the decision then writes a good one
	 * over it). */
	if (r < 0) {
		r = 0;
		if (f->counters)
			f->counters->records_bad++;
	}
	if (which == TRAP)
		w->trap_found = r;
	else if (which == PASS)
		w->pass_found = r;
	else
		w->triplet_found = r;
}

static void
on_part(struct redisReply *reply, void *ctx)
{
	struct part *p = ctx;
	struct fetch *f = p->f;

	if (!reply)
		f->failed = true;
	else
		found(f, p->which, reply);
	if (--f->waiting)
		return;
	f->done(f->w, f->failed ? -EIO : 0, f->ctx);
	free(f);
}

int
store_redis_fetch(struct rconn *c, const char *prefix, struct grey_records *w,
                  struct store_redis_counters *counters,
                  store_redis_fetched_fn *done, void *ctx)
{
	struct fetch *f = calloc(1, sizeof(*f));
	bool want[3] = {w->want_trap, w->want_pass, w->want_triplet};
	unsigned sent = 0;
	int err = 0;

	if (!f)
		return -ENOMEM;
	*f = (struct fetch){
	        .w = w, .counters = counters, .done = done, .ctx = ctx};
	w->trap_found = w->pass_found = w->triplet_found = 0;
	for (int i = 0; i < 3; i++)
		if (want[i])
			f->waiting++;
	if (counters)
		counters->fetches++;
	for (int i = 0; i < 3 && !err; i++) {
		const char *argv[2 + NCLIENT];
		char key[STORE_REDIS_KEY_MAX];
		const char *const *names =
		        i == TRIPLET ? triplet_fields : client_fields;
		size_t n = i == TRIPLET ? NTRIPLET : NCLIENT;

		if (!want[i])
			continue;
		err = i == TRIPLET
		              ? store_redis_triplet_key(prefix, &w->pass_key,
		                                        w->sender, w->rcpt, key)
		              : store_redis_client_key(
		                        prefix,
		                        i == TRAP ? STORE_TRAP : STORE_PASS,
		                        i == TRAP ? &w->trap_key : &w->pass_key,
		                        key);
		if (err < 0)
			break;
		argv[0] = "HMGET";
		argv[1] = key;
		for (size_t k = 0; k < n; k++)
			argv[2 + k] = names[k];
		f->parts[i] = (struct part){f, (enum which)i};
		err = rconn_command(c, on_part, &f->parts[i], (int)(2 + n),
		                    argv, NULL);
		if (err == 0)
			sent++;
	}
	if (!f->waiting) {
		/* Nothing wanted: nothing to wait for. */
		free(f);
		done(w, 0, ctx);
		return 0;
	}
	if (err < 0) {
		if (!sent) {
			free(f);
			return err;
		}
		/* Those sent answer (and free f); the rest never will. */
		f->failed = true;
		f->waiting = sent;
	}
	return 0;
}
