/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The greylist's store, whichever it is: one table of operations over
 * the records a decision reads and writes (grey_records), with three
 * backends: the embedded LMDB file (grey_store_lmdb), a Redis shared by
 * several gateways (greygated's, daemon/shared/shared.c) and memory (tests and
 * the simulator). A fetch completes through a callback: LMDB and memory
 * at once, inside the call; Redis when its reply comes. Whoever decides
 * (the decider) never asks which backend it has.
 *
 * This is the first part of the interface (issue 30): the decision's
 * fetch and write. Forget, scan, allow, report and follow come next;
 * until then they are asked of the backends themselves. */
#ifndef GREYGATE_GREY_STORE_H
#define GREYGATE_GREY_STORE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "must_check.h"
#include "policy.h"
#include "store.h"

struct grey_store;
struct grey_store_walk;

/* The records a walk goes over. */
enum grey_store_table {
	GREY_STORE_PASSES = 0,
	GREY_STORE_TRAPS = 1,
	GREY_STORE_TRIPLETS = 2
};

/* What a walk tells, a row at a time: a pass's or a trap's record (live
 * ones only: expires after the walk's now) or a triplet's (every one,
 * however old: its age is the reader's to judge). Return values are
 * ignored. */
struct grey_store_rows {
	store_client_fn *client;
	store_triplet_fn *triplet;
	void *ctx;
};

/* grey_store_walk_more's answers besides 0 (the walk is over). */
#define GREY_STORE_WALK_MORE 1  /* ask again: more rows are there */
#define GREY_STORE_WALK_LATER 2 /* none yet: wake is told when some come */

/* Rows a walk holds for a slow reader, at most (a backend whose rows
 * come at their own pace): past it the walk is cut (-EOVERFLOW). */
#define GREY_STORE_WALK_WAITING_MAX (64u << 20)

/* Who follows the store (greygated's nft sets): told what it holds (a
 * rebuild: at the start, and for a store shared by other gateways again
 * whenever it cannot tell what was missed) and what changes in it from
 * elsewhere. */
/* A run-time allow entry's end that means "removed" (greygatectl
 * disallow): one second past the epoch, which no entry made by greygatectl
 * allow can have (its end is always now or later). */
#define GREY_ALLOW_REMOVED 1

struct grey_store_listener {
	/* now - the listener's clock (epoch seconds): what ended by then
	 * is not told. */
	int64_t (*now)(void *ctx);
	/* hold - a pass (trap false) or a trap of key until expires.
	 * Return: 1 if held, 0 if not (ended, or refused: counted). */
	int (*hold)(void *ctx, bool trap, const struct grey_client *key,
	            int64_t expires);
	/* forgot - a pass (or trap) forgotten elsewhere. */
	void (*forgot)(void *ctx, bool trap, const struct grey_client *key);
	/* allowed - a run-time allow entry made elsewhere (apply false
	 * during a rebuild: applied at its end); expires
	 * GREY_ALLOW_REMOVED: removed elsewhere (greygatectl disallow).
	 * Return: 1 (new, or removed here), 0 (held already, absent, or
	 * ended), -1 (refused: not what greygatectl takes). */
	int (*allowed)(void *ctx, const struct grey_client *net,
	               int64_t expires, const char *comment, bool apply);
	/* commit - what was held goes to the kernel now (after each change
	 * from elsewhere, every few hundred rows of a rebuild). */
	void (*commit)(void *ctx);
	/* rebuilt - a rebuild is over: err 0, or -errno (cut short: it
	 * starts again when the store answers), what it held. */
	void (*rebuilt)(void *ctx, int err, uint64_t passes, uint64_t traps,
	                uint64_t allows);
	void *ctx;
};

/* What a store says of itself, for status and metrics. A store of this
 * gateway's alone (LMDB, memory) says nothing here (remote false: its
 * figures are its own, store_get_counters); one reached over the
 * network, shared with other gateways, says how it is doing. */
struct grey_store_status {
	bool remote;            /* the figures below apply */
	const char *where;      /* the store's URL */
	bool up;                /* connected, authenticated and agreed */
	bool disagreed;         /* the store holds other settings: this
	                           gateway yields (last_error says which) */
	bool following;         /* the stream is read */
	const char *last_error; /* "" if none */
	int64_t down_since;     /* 0 while up */
	uint64_t decisions, from_nothing, busy;
	uint64_t from_known;   /* of from_nothing: a pass known here found */
	uint64_t passes_known; /* every gateway's passes, known here */
	uint64_t restored; /* passes known here written back into the store */
	uint64_t name_clash; /* 1: another gateway uses this one's name */
	uint64_t writes, writes_failed, waiting, waiting_dropped;
	uint64_t records_bad;
	uint64_t events, own_events, reconciles, reconciled;
	uint64_t allows_sent, allows_failed, allows_taken;
	int64_t lag_ms; /* the last event's age when applied */
};

/* One other gateway's report figures (grey_stats_encode's record, len
 * bytes, not yet trusted), written at updated. */
typedef void grey_store_report_fn(const char *gateway, const void *figures,
                                  size_t len, int64_t updated, void *ctx);
/* A walk of the reports is over: err 0 or -errno, records unreadable. */
typedef void grey_store_reports_done_fn(int err, size_t unreadable,
                                        void *ctx);

/* Rows of a rebuild between two commits, at most. */
#define GREY_STORE_REBUILD_COMMIT_EVERY 512

/* Who is woken when rows come to a walk that had none. */
typedef void grey_store_wake_fn(void *wake_ctx);

/* Told once a fetch is over. r 0: w holds what the store knows (a
 * backend that cannot ask its store, Redis away, answers from what it
 * knows itself and says 0: a decision from that is the one to make);
 * r < 0: no decision can be made (-ECANCELED: the store closes; -EBUSY:
 * too many under way; -EIO and the like: the store failed). */
typedef void grey_store_fetched_fn(struct grey_records *w, int r, void *ctx);

struct grey_store_ops {
	const char *name;  /* "lmdb", "redis", "memory": for logs */
	const char *where; /* "the store", "the shared store": for logs */
	/* fetch - the records w names (grey_records_prepare) into w's
	 * found fields, at the decider's clock now; done is told exactly
	 * once, inside the call or later (w must live until then). */
	void (*fetch)(struct grey_store *s, struct grey_records *w, int64_t now,
	              grey_store_fetched_fn *done, void *ctx);
	/* apply - what a decision changed: before is w as fetched, after
	 * as grey_decide_records left it (its dirty records to be
	 * written), d the decision. Return: 0 (written, or queued to be),
	 * or -errno (nothing written). */
	int (*apply)(struct grey_store *s, const struct grey_records *before,
	             const struct grey_records *after,
	             const struct grey_decision *d);
	/* forget - a client key's pass and triplets, and (trap not NULL)
	 * that address's trap and own pass (a trusted client's). Return: the records deleted, at once;
	 * GREY_STORE_UNDER_WAY (a backend that answers later: it logs
	 * what it deleted when done, and tells every gateway that shares
	 * it); -ENOTCONN (the store does not answer: nothing done); or
	 * -errno. */
	int (*forget)(struct grey_store *s, const struct grey_client *key,
	              const struct grey_client *trap);
	/* share_allow - a run-time allow entry made here (net, until
	 * expires, 0: for ever, with comment), or removed here (expires
	 * GREY_ALLOW_REMOVED), for every gateway that shares the store
	 * (kept and sent later while it is away). A store of this
	 * gateway's alone has nobody to tell. */
	void (*share_allow)(struct grey_store *s, const struct grey_client *net,
	                    int64_t expires, const char *comment);
	/* walk - a walk over table's records, at now; its rows are asked
	 * for with walk_more. A store that does not answer may walk what
	 * this gateway knows instead (its known_here says so). Return: 0
	 * with *out, -ENOTCONN (the store does not answer and nothing is
	 * known here), -errno. */
	int (*walk)(struct grey_store *s, enum grey_store_table table,
	            int64_t now, struct grey_store_walk **out);
	/* walk_more - up to max rows told to rows now. Return: 0 (the walk
	 * is over), GREY_STORE_WALK_MORE, GREY_STORE_WALK_LATER (wake,
	 * wake_ctx told once when rows come or the walk ends), -EOVERFLOW
	 * (over, cut: more rows came than a slow reader may leave waiting),
	 * or -errno (over: failed). */
	int (*walk_more)(struct grey_store_walk *w, size_t max,
	                 const struct grey_store_rows *rows,
	                 grey_store_wake_fn *wake, void *wake_ctx);
	/* walk_end - the walk is not wanted any more (over or not). */
	void (*walk_end)(struct grey_store_walk *w);
	/* follow - l (copied; its ctx must outlive the store) is told
	 * what the store holds, at once or as it comes, and (a store
	 * shared by other gateways) what they change from now on.
	 * Return: 0, or -errno (the store could not be read). */
	int (*follow)(struct grey_store *s,
	              const struct grey_store_listener *l);
	/* share_report - this gateway's report figures (grey's, counting
	 * since), for a store shared with other gateways to hold beside
	 * theirs; written when changed, or when an earlier write did not
	 * go through. NULL: a store of one gateway (its figures are the
	 * site's). */
	void (*share_report)(struct grey_store *s, const struct grey *grey,
	                     int64_t since, bool changed);
	/* reports - every gateway's figures the store holds (this one's
	 * as written: the caller counts its own as they are now), then
	 * done, once. Return: 0 (under way), -EOPNOTSUPP (a store of one
	 * gateway), -ENOTCONN, -errno. */
	int (*reports)(struct grey_store *s, grey_store_report_fn *fn,
	               grey_store_reports_done_fn *done, void *ctx);
	/* status - how the store is doing (NULL: nothing to say). */
	void (*status)(const struct grey_store *s,
	               struct grey_store_status *out);
	/* count - the live pass (or trap) records of one family, kept as
	 * a count: -EOPNOTSUPP where no count is kept here (a shared
	 * store's: every gateway writes them). NULL: likewise. */
	int64_t (*count)(const struct grey_store *s, enum grey_store_table t,
	                 int family);
	/* free - the backend's own state (not the store it wraps). */
	void (*free)(struct grey_store *s);
};

/* Every backend's handle starts with this. */
struct grey_store {
	const struct grey_store_ops *ops;
	bool completes_inline; /* fetch always tells done before returning:
				  the decider needs no record of its own */
	bool settings_agreed;  /* the greylist's settings are agreed with
				  other gateways sharing it: a reload here
				  alone cannot change them */
};

/* What grey_store_forget returns when the count comes later. */
#define GREY_STORE_UNDER_WAY 0x10000000

/* grey_store_fetch - see grey_store_ops.fetch. */
static inline void
grey_store_fetch(struct grey_store *s, struct grey_records *w, int64_t now,
                 grey_store_fetched_fn *done, void *ctx)
{
	s->ops->fetch(s, w, now, done, ctx);
}

/* grey_store_apply - see grey_store_ops.apply. */
MUST_CHECK static inline int
grey_store_apply(struct grey_store *s, const struct grey_records *before,
                 const struct grey_records *after,
                 const struct grey_decision *d)
{
	return s->ops->apply(s, before, after, d);
}

/* grey_store_forget - see grey_store_ops.forget. */
MUST_CHECK static inline int
grey_store_forget(struct grey_store *s, const struct grey_client *key,
                  const struct grey_client *trap)
{
	return s->ops->forget(s, key, trap);
}

/* grey_store_share_allow - see grey_store_ops.share_allow. */
static inline void
grey_store_share_allow(struct grey_store *s, const struct grey_client *net,
                       int64_t expires, const char *comment)
{
	if (s->ops->share_allow)
		s->ops->share_allow(s, net, expires, comment);
}

/* Every backend's walk starts with this. */
struct grey_store_walk {
	const struct grey_store_ops *ops;
	/* NULL, or why the rows are not the store's own but what this
	 * gateway knows of them (a shared store away): its counts are not
	 * known (0), and the reader is to say so */
	const char *known_here;
};

/* grey_store_walk_start - see grey_store_ops.walk. */
static inline int
grey_store_walk_start(struct grey_store *s, enum grey_store_table table,
                      int64_t now, struct grey_store_walk **out)
{
	return s->ops->walk(s, table, now, out);
}

/* grey_store_walk_more - see grey_store_ops.walk_more. */
static inline int
grey_store_walk_more(struct grey_store_walk *w, size_t max,
                     const struct grey_store_rows *rows,
                     grey_store_wake_fn *wake, void *wake_ctx)
{
	return w->ops->walk_more(w, max, rows, wake, wake_ctx);
}

/* grey_store_walk_end - NULL is fine. */
static inline void
grey_store_walk_end(struct grey_store_walk *w)
{
	if (w)
		w->ops->walk_end(w);
}

/* grey_store_follow - see grey_store_ops.follow. */
MUST_CHECK static inline int
grey_store_follow(struct grey_store *s, const struct grey_store_listener *l)
{
	return s->ops->follow(s, l);
}

/* grey_store_where - "the store", "the shared store". */
static inline const char *
grey_store_where(const struct grey_store *s)
{
	return s->ops->where;
}

/* grey_store_share_report - see grey_store_ops.share_report. */
static inline void
grey_store_share_report(struct grey_store *s, const struct grey *grey,
                        int64_t since, bool changed)
{
	if (s->ops->share_report)
		s->ops->share_report(s, grey, since, changed);
}

/* grey_store_reports - see grey_store_ops.reports. */
static inline int
grey_store_reports(struct grey_store *s, grey_store_report_fn *fn,
                   grey_store_reports_done_fn *done, void *ctx)
{
	return s->ops->reports ? s->ops->reports(s, fn, done, ctx)
	                       : -EOPNOTSUPP;
}

/* grey_store_get_status - see grey_store_ops.status (zeroed first). */
static inline void
grey_store_get_status(const struct grey_store *s,
                      struct grey_store_status *out)
{
	memset(out, 0, sizeof(*out));
	if (s->ops->status)
		s->ops->status(s, out);
}

/* grey_store_count - see grey_store_ops.count. */
static inline int64_t
grey_store_count(const struct grey_store *s, enum grey_store_table t,
                 int family)
{
	return s->ops->count ? s->ops->count(s, t, family) : -EOPNOTSUPP;
}

/* grey_store_free - NULL is fine. */
static inline void
grey_store_free(struct grey_store *s)
{
	if (s)
		s->ops->free(s);
}

/* grey_store_name - "lmdb", "redis", "memory". */
static inline const char *
grey_store_name(const struct grey_store *s)
{
	return s->ops->name;
}

/*
 * grey_store_lmdb_new - the interface over an open LMDB store.
 * @store: borrowed; must outlive the handle (its commits stay the
 *   owner's: store_flush, store_sync)
 * Return: the handle (grey_store_free), or NULL (ENOMEM).
 */
struct grey_store *grey_store_lmdb_new(struct store *store);

/* grey_store_lmdb_read - the records w names, from store, at once
 * (what the LMDB backend's fetch and grey_decide do).
 * Return: 0 or -errno. */
int grey_store_lmdb_read(struct store *store, struct grey_records *w);

/* grey_store_lmdb_write - w's dirty records into store (committed with
 * its next flush). Return: 0 or -errno. */
MUST_CHECK int grey_store_lmdb_write(struct store *store,
                                     const struct grey_records *w);

/* grey_store_memory_new - an empty store in memory: nothing survives
 * grey_store_free; records never expire on their own (a decision reads
 * their times as LMDB's do). Return: the handle, or NULL (ENOMEM). */
struct grey_store *grey_store_memory_new(void);

/* grey_store_memory_count - records held: passes, traps, triplets. */
void grey_store_memory_count(const struct grey_store *s, size_t *passes,
                             size_t *traps, size_t *triplets);

#endif
