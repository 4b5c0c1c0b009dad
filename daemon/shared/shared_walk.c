// SPDX-License-Identifier: GPL-2.0-or-later
/* The store interface's walk (grey_store.h) over a shared store: a SCAN
 * of Redis's keys brings rows at its own pace; they wait in a queue for
 * their reader, who is woken when some come. A reader gone before the
 * scan ends leaves it to free the walk. */
#include <errno.h>
#include <stdlib.h>

#include "grey_store_queue.h"
#include "shared-int.h"

struct redis_walk {
	struct grey_store_walk base; /* (first) */
	struct grey_store_queue rows;
	int64_t now;
	bool scanning, gone;
	int err; /* the scan's, once over */
	grey_store_wake_fn *wake;
	void *wake_ctx;
};

static void
wake_reader(struct redis_walk *w)
{
	grey_store_wake_fn *wake = w->wake;

	w->wake = NULL;
	if (wake)
		wake(w->wake_ctx);
}

static void
free_walk(struct redis_walk *w)
{
	grey_store_queue_deinit(&w->rows);
	free(w);
}

static int
on_client(const struct grey_client *c, const struct store_client *rec,
          void *ctx)
{
	struct redis_walk *w = ctx;

	if (w->gone || rec->expires <= w->now)
		return 0;
	grey_store_queue_client(&w->rows, c, rec);
	wake_reader(w);
	return 0;
}

static int
on_triplet(const struct grey_client *c, const char *sender, const char *rcpt,
           const struct store_triplet *rec, void *ctx)
{
	struct redis_walk *w = ctx;

	if (w->gone)
		return 0;
	grey_store_queue_triplet(&w->rows, c, sender, rcpt, rec);
	wake_reader(w);
	return 0;
}

static void
on_scanned(int err, const struct store_redis_scan_counts *n, void *ctx)
{
	struct redis_walk *w = ctx;

	(void)n;
	w->scanning = false;
	w->err = err;
	if (w->gone) {
		free_walk(w);
		return;
	}
	wake_reader(w);
}

/* Redis away: the passes this gateway knows are what it decides from
 * (shared_passes.h), so they are what it lists, said as such. */
static int
walk_known_passes(struct shared *sh, struct redis_walk *w)
{
	struct shared_pass *known;
	size_t n;

	if (shared_passes_list(sh->passes, w->now, &known, &n) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct store_client rec = {
		        .since = known[i].since,
		        .expires = known[i].expires,
		};

		grey_store_queue_client(&w->rows, &known[i].key, &rec);
	}
	free(known);
	w->base.known_here =
	        "Redis is away: the passes this gateway knows, which it "
	        "decides from meanwhile; deliveries and sessions are not "
	        "known here";
	return 0;
}

int
shared_walk(struct grey_store *s, enum grey_store_table table, int64_t now,
            struct grey_store_walk **out)
{
	struct shared *sh = shared_of(s);
	struct redis_walk *w;
	int r;

	if (!sh->agreed && table != GREY_STORE_PASSES)
		return -ENOTCONN;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->base.ops = s->ops;
	grey_store_queue_init(&w->rows, GREY_STORE_WALK_WAITING_MAX);
	w->now = now;
	if (!sh->agreed) {
		r = walk_known_passes(sh, w);
		if (r < 0) {
			free_walk(w);
			return r;
		}
		*out = &w->base;
		return 0;
	}
	r = table == GREY_STORE_TRIPLETS
	            ? store_redis_scan_triplets(sh->c, SHARED_PREFIX,
	                                        on_triplet, on_scanned, w)
	            : store_redis_scan_clients(sh->c, SHARED_PREFIX,
	                                       table == GREY_STORE_PASSES
	                                               ? STORE_PASS
	                                               : STORE_TRAP,
	                                       on_client, on_scanned, w);
	if (r < 0) {
		free_walk(w);
		return r;
	}
	w->scanning = true;
	*out = &w->base;
	return 0;
}

int
shared_walk_more(struct grey_store_walk *base, size_t max,
                 const struct grey_store_rows *rows, grey_store_wake_fn *wake,
                 void *wake_ctx)
{
	struct redis_walk *w = (struct redis_walk *)base;

	grey_store_queue_tell(&w->rows, max, rows);
	if (!grey_store_queue_empty(&w->rows))
		return GREY_STORE_WALK_MORE;
	if (w->scanning) {
		w->wake = wake;
		w->wake_ctx = wake_ctx;
		return GREY_STORE_WALK_LATER;
	}
	if (w->err < 0)
		return w->err;
	return w->rows.cut ? -EOVERFLOW : 0;
}

void
shared_walk_end(struct grey_store_walk *base)
{
	struct redis_walk *w = (struct redis_walk *)base;

	w->gone = true;
	w->wake = NULL;
	if (!w->scanning)
		free_walk(w);
}
