// SPDX-License-Identifier: GPL-2.0-or-later
/* The greylist's store interface (grey_store.h) in memory, for tests and
 * the simulator: one search tree (the C library's tsearch) of every
 * record, keyed by its table and key; fetches complete inside the call.
 * Nothing expires on its own: a decision reads a record's times as it
 * reads LMDB's, and LMDB's purge has no counterpart here. */
#include <errno.h>
#include <search.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "compat.h"
#include "grey_store.h"
#include "grey_store_queue.h"

enum table { PASS, TRAP, TRIPLET, TABLES };

struct record {
	enum table table;
	struct grey_client client;
	char sender[GREY_ADDR_MAX], rcpt[GREY_ADDR_MAX]; /* triplets */
	union {
		struct store_client client;
		struct store_triplet triplet;
	} rec;
};

struct grey_store_memory {
	struct grey_store base; /* (first: the handle is this) */
	void *root;
	size_t count[TABLES];
};

static int
cmp_record(const void *a, const void *b)
{
	const struct record *x = a, *y = b;
	int c;

	if (x->table != y->table)
		return x->table < y->table ? -1 : 1;
	if (x->client.family != y->client.family)
		return x->client.family < y->client.family ? -1 : 1;
	if (x->client.prefix != y->client.prefix)
		return x->client.prefix < y->client.prefix ? -1 : 1;
	c = memcmp(x->client.bytes, y->client.bytes, 16);
	if (c || x->table != TRIPLET)
		return c;
	c = strcmp(x->sender, y->sender);
	return c ? c : strcmp(x->rcpt, y->rcpt);
}

/* The key of a record: its table, client and (triplets) addresses. */
static void
key_of(struct record *k, enum table t, const struct grey_client *c,
       const char *sender, const char *rcpt)
{
	k->table = t;
	k->client = *c;
	k->sender[0] = k->rcpt[0] = 0;
	if (t == TRIPLET) {
		strcpy(k->sender, sender);
		strcpy(k->rcpt, rcpt);
	}
}

static struct record *
find(struct grey_store_memory *m, enum table t, const struct grey_client *c,
     const char *sender, const char *rcpt)
{
	struct record k, **found;

	key_of(&k, t, c, sender, rcpt);
	found = tfind(&k, &m->root, cmp_record);
	return found ? *found : NULL;
}

/* The record under that key, made if absent. Return: it, or NULL. */
static struct record *
find_or_add(struct grey_store_memory *m, enum table t,
            const struct grey_client *c, const char *sender,
            const char *rcpt)
{
	struct record *k = calloc(1, sizeof(*k)), **found;

	if (!k)
		return NULL;
	key_of(k, t, c, sender, rcpt);
	found = tsearch(k, &m->root, cmp_record);
	if (!found) {
		free(k);
		return NULL;
	}
	if (*found != k)
		free(k);
	else
		m->count[t]++;
	return *found;
}

static void
memory_fetch(struct grey_store *s, struct grey_records *w, int64_t now,
             grey_store_fetched_fn *done, void *ctx)
{
	struct grey_store_memory *m = (struct grey_store_memory *)s;
	struct record *r;

	(void)now;
	if (w->want_trap && (r = find(m, TRAP, &w->trap_key, "", ""))) {
		w->trap = r->rec.client;
		w->trap_found = STORE_FOUND;
	}
	if (w->want_pass && (r = find(m, PASS, &w->pass_key, "", ""))) {
		w->pass = r->rec.client;
		w->pass_found = STORE_FOUND;
	}
	if (w->want_own && (r = find(m, PASS, &w->trap_key, "", ""))) {
		w->own = r->rec.client;
		w->own_found = STORE_FOUND;
	}
	if (w->want_triplet &&
	    (r = find(m, TRIPLET, &w->triplet_key, w->sender, w->rcpt))) {
		w->triplet = r->rec.triplet;
		w->triplet_found = STORE_FOUND;
	}
	done(w, 0, ctx);
}

static int
memory_apply(struct grey_store *s, const struct grey_records *before,
             const struct grey_records *w, const struct grey_decision *d)
{
	struct grey_store_memory *m = (struct grey_store_memory *)s;
	struct record *trap = NULL, *pass = NULL, *triplet = NULL;

	(void)before;
	(void)d;
	/* Every record made before any is written: a failure writes
	 * nothing (a record made before it stays, zeroed: expired). */
	if ((w->trap_dirty &&
	     !(trap = find_or_add(m, TRAP, &w->trap_key, "", ""))) ||
	    (w->pass_dirty &&
	     !(pass = find_or_add(m, PASS, &w->pass_key, "", ""))) ||
	    (w->triplet_dirty && !(triplet = find_or_add(m, TRIPLET,
	                                                 &w->triplet_key,
	                                                 w->sender, w->rcpt))))
		return -ENOMEM;
	if (trap)
		trap->rec.client = w->trap;
	if (pass)
		pass->rec.client = w->pass;
	if (triplet)
		triplet->rec.triplet = w->triplet;
	return 0;
}

/* Deletes the record under that key. Return: 1 if it was there, 0. */
static int
drop(struct grey_store_memory *m, enum table t, const struct grey_client *c,
     const char *sender, const char *rcpt)
{
	struct record *r = find(m, t, c, sender, rcpt);

	if (!r)
		return 0;
	tdelete(r, &m->root, cmp_record);
	m->count[t]--;
	free(r);
	return 1;
}

/* The triplets of one key, gathered to be deleted after the walk. */
struct gathered {
	const struct grey_client *key;
	struct record **found;
	size_t n, size;
	bool failed;
};

static void
gather_triplet(const void *node, VISIT which, void *ctx)
{
	const struct record *r = *(const struct record *const *)node;
	struct gathered *g = ctx;
	struct record **more;

	if ((which != postorder && which != leaf) || r->table != TRIPLET ||
	    r->client.family != g->key->family ||
	    r->client.prefix != g->key->prefix ||
	    memcmp(r->client.bytes, g->key->bytes, 16))
		return;
	if (g->n == g->size) {
		more = realloc(g->found, (g->size * 2 + 8) * sizeof(*more));
		if (!more) {
			g->failed = true;
			return;
		}
		g->found = more;
		g->size = g->size * 2 + 8;
	}
	g->found[g->n++] = (struct record *)r;
}

static int
memory_forget(struct grey_store *s, const struct grey_client *key,
              const struct grey_client *trap)
{
	struct grey_store_memory *m = (struct grey_store_memory *)s;
	struct gathered g = {.key = key};
	int n = 0;

	compat_twalk_r(m->root, gather_triplet, &g);
	if (g.failed) {
		free(g.found);
		return -ENOMEM;
	}
	for (size_t i = 0; i < g.n; i++) {
		tdelete(g.found[i], &m->root, cmp_record);
		m->count[TRIPLET]--;
		free(g.found[i]);
		n++;
	}
	free(g.found);
	n += drop(m, PASS, key, "", "") + drop(m, TRAP, key, "", "");
	if (trap)
		n += drop(m, TRAP, trap, "", "") + drop(m, PASS, trap, "", "");
	return n;
}

/* A walk: the rows copied at its start (a forget meanwhile frees
 * records), told as they are asked for. */
struct memory_walk {
	struct grey_store_walk base; /* (first) */
	struct grey_store_queue rows;
	enum table table;
	int64_t now;
};

static void
copy_row(const void *node, VISIT which, void *ctx)
{
	const struct record *r = *(const struct record *const *)node;
	struct memory_walk *w = ctx;

	if ((which != postorder && which != leaf) || r->table != w->table)
		return;
	if (r->table == TRIPLET)
		grey_store_queue_triplet(&w->rows, &r->client, r->sender,
		                         r->rcpt, &r->rec.triplet);
	else if (r->rec.client.expires > w->now)
		grey_store_queue_client(&w->rows, &r->client, &r->rec.client);
}

static int
memory_walk(struct grey_store *s, enum grey_store_table table, int64_t now,
            struct grey_store_walk **out)
{
	struct grey_store_memory *m = (struct grey_store_memory *)s;
	struct memory_walk *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->base.ops = s->ops;
	grey_store_queue_init(&w->rows, SIZE_MAX);
	w->table = table == GREY_STORE_PASSES  ? PASS
	           : table == GREY_STORE_TRAPS ? TRAP
	                                       : TRIPLET;
	w->now = now;
	compat_twalk_r(m->root, copy_row, w);
	if (w->rows.cut) {
		grey_store_queue_deinit(&w->rows);
		free(w);
		return -ENOMEM;
	}
	*out = &w->base;
	return 0;
}

static int
memory_walk_more(struct grey_store_walk *base, size_t max,
                 const struct grey_store_rows *rows, grey_store_wake_fn *wake,
                 void *wake_ctx)
{
	struct memory_walk *w = (struct memory_walk *)base;

	(void)wake;
	(void)wake_ctx;
	grey_store_queue_tell(&w->rows, max, rows);
	return grey_store_queue_empty(&w->rows) ? 0 : GREY_STORE_WALK_MORE;
}

static void
memory_walk_end(struct grey_store_walk *base)
{
	struct memory_walk *w = (struct memory_walk *)base;

	grey_store_queue_deinit(&w->rows);
	free(w);
}

/* A rebuild of the listener from the tree, in one walk. */
struct rebuild {
	const struct grey_store_listener *l;
	int64_t now;
	uint64_t held[2], rows;
};

static void
hold_row(const void *node, VISIT which, void *ctx)
{
	const struct record *r = *(const struct record *const *)node;
	struct rebuild *rb = ctx;
	bool trap = r->table == TRAP;

	if ((which != postorder && which != leaf) || r->table == TRIPLET ||
	    r->rec.client.expires <= rb->now)
		return;
	if (rb->l->hold(rb->l->ctx, trap, &r->client, r->rec.client.expires) >
	    0)
		rb->held[trap]++;
	if (++rb->rows % GREY_STORE_REBUILD_COMMIT_EVERY == 0)
		rb->l->commit(rb->l->ctx);
}

static int
memory_follow(struct grey_store *s, const struct grey_store_listener *l)
{
	struct grey_store_memory *m = (struct grey_store_memory *)s;
	struct rebuild rb = {.l = l, .now = l->now(l->ctx)};

	compat_twalk_r(m->root, hold_row, &rb);
	l->commit(l->ctx);
	l->rebuilt(l->ctx, 0, rb.held[0], rb.held[1], 0);
	return 0;
}

static void
memory_free(struct grey_store *s)
{
	struct grey_store_memory *m = (struct grey_store_memory *)s;

	tdestroy(m->root, free);
	free(m);
}

static const struct grey_store_ops memory_ops = {
	.name = "memory",
	.where = "memory",
	.fetch = memory_fetch,
	.apply = memory_apply,
	.forget = memory_forget,
	.walk = memory_walk,
	.walk_more = memory_walk_more,
	.walk_end = memory_walk_end,
	.follow = memory_follow,
	.free = memory_free,
};

struct grey_store *
grey_store_memory_new(void)
{
	struct grey_store_memory *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->base.ops = &memory_ops;
	m->base.completes_inline = true;
	return &m->base;
}

void
grey_store_memory_count(const struct grey_store *s, size_t *passes,
                        size_t *traps, size_t *triplets)
{
	const struct grey_store_memory *m =
		(const struct grey_store_memory *)s;

	*passes = m->count[PASS];
	*traps = m->count[TRAP];
	*triplets = m->count[TRIPLET];
}
