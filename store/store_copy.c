// SPDX-License-Identifier: GPL-2.0-or-later
/* Moving a greylist between the LMDB store and a shared Redis (see
 * store_copy.h): LMDB's records walked a batch at a time and each written
 * as one decision's writes would be (merged with what Redis holds, passes
 * and traps on the stream for the running gateways); Redis's records
 * walked with SCAN and put in LMDB. Only live records go. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop.h"
#include "redis_loop.h"
#include "store_copy.h"
#include "store_redis.h"

#define BATCH 1000

/* A copied pass's write name: "copy-" and 16 hex digits. */
#define COPY_NAME_SIZE 22

struct to_redis {
	const struct grey_config *cfg;
	int64_t now;
	struct grey_records *recs; /* this batch's, BATCH at most */
	char (*names)[COPY_NAME_SIZE]; /* ... a pass's write name each */
	size_t n;
	unsigned waiting;
	int err;
	struct store_copy_counts *counts;
};

static struct grey_records *
next_record(struct to_redis *t, const struct grey_client *client)
{
	struct grey_records *w = &t->recs[t->n++];

	memset(w, 0, sizeof(*w));
	w->trap_key = *client;
	w->pass_key = *client;
	w->triplet_key = *client;
	return w;
}

static int
take_triplet(const struct grey_client *client, const char *sender,
             const char *rcpt, const struct store_triplet *rec, void *ctx)
{
	struct to_redis *t = ctx;
	struct grey_records *w;

	if (rec->last_seen + (int64_t)t->cfg->retry_window_sec <= t->now) {
		t->counts->skipped++;
		return 0;
	}
	w = next_record(t, client);
	snprintf(w->sender, sizeof(w->sender), "%s", sender);
	snprintf(w->rcpt, sizeof(w->rcpt), "%s", rcpt);
	w->triplet = *rec;
	w->triplet_dirty = true;
	t->counts->triplets++;
	return 0;
}

/* A pass's copy is named by what it copies (its key, since, deliveries
 * and sessions): the same copy run twice adds its deliveries and
 * sessions once (Redis remembers a write's name a day), while a pass
 * that counted on meanwhile is another write. */
static void
copy_name(const struct grey_client *client, const struct store_client *rec,
          char out[COPY_NAME_SIZE])
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	uint64_t fields[4] = {(uint64_t)client->family << 8 | client->prefix,
	                      (uint64_t)rec->since, rec->deliveries,
	                      rec->sessions};
	const uint8_t *b = (const uint8_t *)fields;

	for (size_t i = 0; i < 16; i++)
		h = (h ^ client->bytes[i]) * 1099511628211ull;
	for (size_t i = 0; i < sizeof(fields); i++)
		h = (h ^ b[i]) * 1099511628211ull;
	snprintf(out, COPY_NAME_SIZE, "copy-%016llx", (unsigned long long)h);
}

static int
take_client(struct to_redis *t, enum store_table table,
            const struct grey_client *client, const struct store_client *rec)
{
	struct grey_records *w = next_record(t, client);

	if (table == STORE_PASS) {
		w->pass = *rec;
		w->pass_dirty = true;
		copy_name(client, rec, t->names[t->n - 1]);
		t->counts->passes++;
	} else {
		w->trap = *rec;
		w->trap_dirty = true;
		t->counts->traps++;
	}
	return 0;
}

static int
take_pass(const struct grey_client *client, const struct store_client *rec,
          void *ctx)
{
	return take_client(ctx, STORE_PASS, client, rec);
}

static int
take_trap(const struct grey_client *client, const struct store_client *rec,
          void *ctx)
{
	return take_client(ctx, STORE_TRAP, client, rec);
}

static void
on_written(int err, void *ctx)
{
	struct to_redis *t = ctx;

	if (err < 0) {
		t->counts->failed++;
		t->err = err;
	}
	t->waiting--;
}

/* This batch to Redis, waited for. */
static int
send_batch(struct to_redis *t, struct loop *loop, struct rconn *c,
           const char *prefix, const char *gateway)
{
	static const struct grey_records none;

	for (size_t i = 0; i < t->n; i++) {
		int r = store_redis_apply(c, prefix, &none, &t->recs[i],
		                          t->cfg->retry_window_sec, gateway,
		                          t->recs[i].pass_dirty ? t->names[i]
		                                                : NULL,
		                          on_written, t);

		if (r < 0) {
			t->counts->failed++;
			t->err = r;
			break;
		}
		t->waiting++;
	}
	t->n = 0;
	while (t->waiting)
		loop_run_once(loop, 100);
	return t->err;
}

int
store_copy_to_redis(struct store *from, struct loop *loop, struct rconn *c,
                    const char *prefix, const struct grey_config *cfg,
                    const char *gateway, int64_t now,
                    struct store_copy_counts *counts)
{
	struct to_redis t = {cfg, now, NULL, NULL, 0, 0, 0, counts};
	struct store_pos pos;
	int r = 0;

	memset(counts, 0, sizeof(*counts));
	t.recs = calloc(BATCH, sizeof(*t.recs));
	t.names = calloc(BATCH, sizeof(*t.names));
	if (!t.recs || !t.names) {
		free(t.recs);
		free(t.names);
		return -ENOMEM;
	}
	for (int kind = 0; kind < 3 && r == 0; kind++) {
		memset(&pos, 0, sizeof(pos));
		while (!pos.done && r == 0) {
			r = kind == 0
			            ? store_each_triplet_from(from, &pos, BATCH,
			                                      take_triplet, &t)
			            : store_each_client_from(
			                      from,
			                      kind == 1 ? STORE_PASS
			                                : STORE_TRAP,
			                      now, &pos, BATCH,
			                      kind == 1 ? take_pass : take_trap,
			                      &t);
			if (r == 0)
				r = send_batch(&t, loop, c, prefix, gateway);
		}
	}
	free(t.recs);
	free(t.names);
	return r;
}

/* --- and back --- */

struct from_redis {
	struct store *to;
	int64_t now;
	uint32_t triplet_ttl_sec;
	bool walked;
	int err;
	struct store_copy_counts *counts;
};

static void
put_result(struct from_redis *f, int r)
{
	if (r < 0) {
		f->counts->failed++;
		f->err = r;
	}
}

static int
put_client(struct from_redis *f, enum store_table table,
           const struct grey_client *client, const struct store_client *rec)
{
	if (rec->expires <= f->now) {
		f->counts->skipped++;
		return 0;
	}
	put_result(f, store_put_client(f->to, table, client, rec));
	if (table == STORE_PASS)
		f->counts->passes++;
	else
		f->counts->traps++;
	return 0;
}

static int
put_pass(const struct grey_client *client, const struct store_client *rec,
         void *ctx)
{
	return put_client(ctx, STORE_PASS, client, rec);
}

static int
put_trap(const struct grey_client *client, const struct store_client *rec,
         void *ctx)
{
	return put_client(ctx, STORE_TRAP, client, rec);
}

static int
put_triplet(const struct grey_client *client, const char *sender,
            const char *rcpt, const struct store_triplet *rec, void *ctx)
{
	struct from_redis *f = ctx;

	if (rec->last_seen + (int64_t)f->triplet_ttl_sec <= f->now) {
		f->counts->skipped++;
		return 0;
	}
	put_result(f, store_put_triplet(f->to, client, sender, rcpt, rec));
	f->counts->triplets++;
	return 0;
}

static void
on_walked(int err, const struct store_redis_scan_counts *n, void *ctx)
{
	struct from_redis *f = ctx;

	f->counts->bad += n->bad;
	if (err < 0)
		f->err = err;
	f->walked = true;
}

int
store_copy_from_redis(struct loop *loop, struct rconn *c, const char *prefix,
                      struct store *to, int64_t now, uint32_t triplet_ttl_sec,
                      struct store_copy_counts *counts)
{
	struct from_redis f = {to, now, triplet_ttl_sec, false, 0, counts};
	int r;

	memset(counts, 0, sizeof(*counts));
	for (int kind = 0; kind < 3 && f.err == 0; kind++) {
		f.walked = false;
		r = kind == 0 ? store_redis_scan_triplets(
		                        c, prefix, put_triplet, on_walked, &f)
		              : store_redis_scan_clients(
		                        c, prefix,
		                        kind == 1 ? STORE_PASS : STORE_TRAP,
		                        kind == 1 ? put_pass : put_trap,
		                        on_walked, &f);
		if (r < 0)
			return r;
		while (!f.walked)
			loop_run_once(loop, 100);
		/* (LMDB's writes pile up in one transaction: commit them) */
		r = store_flush(to);
		if (r < 0)
			return r;
	}
	return f.err;
}
