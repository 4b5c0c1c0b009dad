// SPDX-License-Identifier: GPL-2.0-or-later
/* The greylist's store interface (grey_store.h) over the embedded LMDB
 * file: a fetch reads at once and tells its caller inside the call; a
 * write joins the store's open transaction, committed by its owner's
 * cadence (store_flush, store_sync). */
#include <errno.h>
#include <stdlib.h>

#include "grey_store.h"

struct grey_store_lmdb {
	struct grey_store base; /* (first: the handle is this) */
	struct store *store;
};

int
grey_store_lmdb_read(struct store *store, struct grey_records *w)
{
	int r = 0;

	if (w->want_trap) {
		r = store_get_client(store, STORE_TRAP, &w->trap_key,
		                     &w->trap);
		w->trap_found = r;
	}
	if (r >= 0 && w->want_pass) {
		r = store_get_client(store, STORE_PASS, &w->pass_key,
		                     &w->pass);
		w->pass_found = r;
	}
	if (r >= 0 && w->want_own) {
		r = store_get_client(store, STORE_PASS, &w->trap_key,
		                     &w->own);
		w->own_found = r;
	}
	if (r >= 0 && w->want_triplet) {
		r = store_get_triplet(store, &w->triplet_key, w->sender, w->rcpt,
		                      &w->triplet);
		w->triplet_found = r;
	}
	return r < 0 ? r : 0;
}

int
grey_store_lmdb_write(struct store *store, const struct grey_records *w)
{
	int r = 0;

	if (w->trap_dirty)
		r = store_put_client(store, STORE_TRAP, &w->trap_key,
		                     &w->trap);
	if (r >= 0 && w->pass_dirty)
		r = store_put_client(store, STORE_PASS, &w->pass_key,
		                     &w->pass);
	if (r >= 0 && w->triplet_dirty)
		r = store_put_triplet(store, &w->triplet_key, w->sender, w->rcpt,
		                      &w->triplet);
	return r < 0 ? r : 0;
}

static void
lmdb_fetch(struct grey_store *s, struct grey_records *w, int64_t now,
           grey_store_fetched_fn *done, void *ctx)
{
	struct grey_store_lmdb *l = (struct grey_store_lmdb *)s;

	(void)now; /* (expired records are the decision's to judge) */
	done(w, grey_store_lmdb_read(l->store, w), ctx);
}

static int
lmdb_apply(struct grey_store *s, const struct grey_records *before,
           const struct grey_records *after, const struct grey_decision *d)
{
	struct grey_store_lmdb *l = (struct grey_store_lmdb *)s;

	(void)before;
	(void)d;
	return grey_store_lmdb_write(l->store, after);
}

static int
lmdb_forget(struct grey_store *s, const struct grey_client *key,
            const struct grey_client *trap)
{
	struct store *store = ((struct grey_store_lmdb *)s)->store;
	int r = store_forget_client(store, key), t;

	if (r < 0 || !trap)
		return r;
	t = store_del_client(store, STORE_TRAP, trap);
	if (t < 0)
		return t;
	r += t == STORE_FOUND;
	/* (the address's own pass: a trusted client's, issue 56) */
	t = store_del_client(store, STORE_PASS, trap);
	return t < 0 ? t : r + (t == STORE_FOUND);
}

/* A walk: the store's own cursor position between batches. */
struct lmdb_walk {
	struct grey_store_walk base; /* (first) */
	struct store *store;
	enum grey_store_table table;
	int64_t now;
	struct store_pos pos;
};

static int
lmdb_walk(struct grey_store *s, enum grey_store_table table, int64_t now,
          struct grey_store_walk **out)
{
	struct lmdb_walk *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->base.ops = s->ops;
	w->store = ((struct grey_store_lmdb *)s)->store;
	w->table = table;
	w->now = now;
	*out = &w->base;
	return 0;
}

static int
lmdb_walk_more(struct grey_store_walk *base, size_t max,
               const struct grey_store_rows *rows, grey_store_wake_fn *wake,
               void *wake_ctx)
{
	struct lmdb_walk *w = (struct lmdb_walk *)base;
	int r;

	(void)wake;
	(void)wake_ctx;
	if (w->table == GREY_STORE_TRIPLETS)
		r = rows->triplet ? store_each_triplet_from(w->store, &w->pos,
		                                            max, rows->triplet,
		                                            rows->ctx)
		                  : 0;
	else
		r = rows->client ? store_each_client_from(
		                           w->store,
		                           w->table == GREY_STORE_PASSES
		                                   ? STORE_PASS
		                                   : STORE_TRAP,
		                           w->now, &w->pos, max, rows->client,
		                           rows->ctx)
		                 : 0;
	if (r < 0)
		return r;
	return w->pos.done || r ? 0 : GREY_STORE_WALK_MORE;
}

static void
lmdb_walk_end(struct grey_store_walk *w)
{
	free(w);
}

/* A rebuild of the listener from what the file holds. */
struct rebuild {
	const struct grey_store_listener *l;
	bool trap;
	uint64_t held[2], rows;
};

static int
hold_one(const struct grey_client *c, const struct store_client *rec,
         void *ctx)
{
	struct rebuild *rb = ctx;

	if (rb->l->hold(rb->l->ctx, rb->trap, c, rec->expires) > 0)
		rb->held[rb->trap]++;
	if (++rb->rows % GREY_STORE_REBUILD_COMMIT_EVERY == 0)
		rb->l->commit(rb->l->ctx);
	return 0;
}

/* Nobody else writes the file: what it holds is told once, at once. */
static int
lmdb_follow(struct grey_store *s, const struct grey_store_listener *l)
{
	struct store *store = ((struct grey_store_lmdb *)s)->store;
	struct rebuild rb = {.l = l};
	int64_t now = l->now(l->ctx);
	int r = store_each_client(store, STORE_PASS, now, hold_one, &rb);

	rb.trap = true;
	if (r == 0)
		r = store_each_client(store, STORE_TRAP, now, hold_one, &rb);
	if (r < 0)
		return r;
	l->commit(l->ctx);
	l->rebuilt(l->ctx, 0, rb.held[0], rb.held[1], 0);
	return 0;
}

static int64_t
lmdb_count(const struct grey_store *s, enum grey_store_table t, int family)
{
	const struct grey_store_lmdb *l = (const struct grey_store_lmdb *)s;

	if (t == GREY_STORE_TRIPLETS)
		return (int64_t)store_count(l->store, -1);
	return (int64_t)store_count_clients(
	        l->store, t == GREY_STORE_PASSES ? STORE_PASS : STORE_TRAP,
	        family);
}

static void
lmdb_free(struct grey_store *s)
{
	free(s);
}

static const struct grey_store_ops lmdb_ops = {
	.name = "lmdb",
	.where = "the store",
	.fetch = lmdb_fetch,
	.apply = lmdb_apply,
	.forget = lmdb_forget,
	.walk = lmdb_walk,
	.walk_more = lmdb_walk_more,
	.walk_end = lmdb_walk_end,
	.follow = lmdb_follow,
	.count = lmdb_count,
	.free = lmdb_free,
};

struct grey_store *
grey_store_lmdb_new(struct store *store)
{
	struct grey_store_lmdb *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->base.ops = &lmdb_ops;
	l->base.completes_inline = true;
	l->store = store;
	return &l->base;
}
