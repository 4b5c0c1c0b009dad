// SPDX-License-Identifier: GPL-2.0-or-later
/* greygated's housekeeping, once a second: run-time allow entries past
 * their end dropped, the store's expired records purged, its commits and
 * (every few seconds) its sync to disk, what it did said once; and the
 * report's figures, counting on across restarts (saved with the store,
 * restored at start, shared with the other gateways of a shared store);
 * the store's snapshots (store_snapshot.c keeps their timer). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "housekeeping.h"
#include "grey_store.h"
#include "log.h"
#include "metrics.h"

#define HOUSEKEEPING_MS 1000
#define PURGE_BATCH 2000
#define PURGED_SAID_SEC 3600 /* what the purge took, said this often */
/* Everything is synced every few seconds (passes at once: decide.c). */
#define STORE_SYNC_TICKS 5

struct housekeeping {
	struct housekeeping_links links;
	struct housekeeping_settings cfg; /* its own (_reconfigure) */
	struct grey_store *records; /* between _start and _stop */
	struct allow_lists *allow;  /* the same */
	struct loop_timer timer;
	unsigned ticks;
	/* The report's figures count from stats_since, across restarts:
	 * they are saved to the store when they changed, every
	 * STORE_SYNC_TICKS, and at the end. */
	int64_t stats_since;
	struct grey_counters stats_saved;
	bool stats_unsaid; /* saved, not yet said committed (debug) */
	struct store_counters store_seen; /* its events logged so far */
	/* what the purge deleted since it last said so (at most once an
	 * hour, the first time at once) */
	struct store_purged purged;
	int64_t purged_said; /* 0: never yet */
	struct store_snapshot *snapshot; /* NULL: none asked for */
};

/* The report's figures from before the restart, if any were saved. */
static void
restore_stats(struct housekeeping *hk)
{
	int r = store_load_stats(hk->links.store, decider_grey(hk->links.decider),
	                        &hk->stats_since);

	if (r == STORE_FOUND) {
		char when[FMT_UTC_MAX];

		fmt_utc(hk->stats_since, when);
		hk->stats_saved =
		        *grey_get_counters(decider_grey(hk->links.decider));
		log_info("report: counting on since %s (%" PRIu64
		         " attempts so far)",
		         when, hk->stats_saved.attempts);
		return;
	}
	hk->stats_since = metrics_figures_started(hk->links.figures);
	if (r < 0)
		log_warnx("report: the saved figures cannot be read (%s): "
			  "counting starts again",
			  strerror(-r));
}

/* Saves the report's figures if they changed since the last save (on a
 * shared store, also this gateway's share of the site's report). */
/* Return: whether the figures were written (they had changed). */
static bool
save_stats(struct housekeeping *hk)
{
	const struct grey_counters *k =
	        grey_get_counters(decider_grey(hk->links.decider));
	bool changed = memcmp(k, &hk->stats_saved, sizeof(*k)) != 0;

	if (hk->records) /* (at the end: gone, with its connection) */
		grey_store_share_report(hk->records,
		                        decider_grey(hk->links.decider),
		                        hk->stats_since, changed);
	if (!changed)
		return false;
	if (store_save_stats(hk->links.store, decider_grey(hk->links.decider),
	                     hk->stats_since) <
	    0) {
		log_warnx("report: cannot save its figures to the store");
		return false;
	}
	hk->stats_saved = *k;
	return true;
}

void
housekeeping_stats_reset(struct housekeeping *hk)
{
	struct grey *grey = decider_grey(hk->links.decider);

	/* (a housekeeping always has its decider: decider_grey is NULL only
	 * for none, a path GCC's LTO warns of on arm64) */
	if (!grey)
		return;
	metrics_figures_report_reset(hk->links.figures,
	                             grey_get_counters(grey));
	grey_stats_reset(grey);
	hk->stats_since = loop_wall_sec(hk->links.loop);
	if (store_save_stats(hk->links.store, grey, hk->stats_since) < 0)
		log_warnx("report: cannot save its figures to the store");
	hk->stats_saved = *grey_get_counters(grey);
	if (hk->records) /* (between _start and _stop) */
		grey_store_share_report(hk->records, grey, hk->stats_since,
		                        true);
	decider_commit(hk->links.decider);
	log_info("report: counting starts again");
}

/* What the store did since the last look, said once. */
static void
log_store_events(struct housekeeping *hk)
{
	const struct store_counters *now = store_get_counters(hk->links.store);
	struct store_counters *seen = &hk->store_seen;

	if (now->map_grown != seen->map_grown)
		log_info("store: map grown to %llu MiB (%llu MiB used)",
			 (unsigned long long)(now->map_bytes >> 20),
			 (unsigned long long)(now->used_bytes >> 20));
	/* (redone and saved: nothing lost; redone and failing still: the
	 * next line says so) */
	if (now->replayed != seen->replayed &&
	    now->write_errors == seen->write_errors)
		log_warnx("store: %llu failed transaction(s) redone from the "
			  "journal: nothing was lost",
			  (unsigned long long)(now->replayed - seen->replayed));
	if (now->write_errors != seen->write_errors)
		log_warnx("store: %llu write(s) or commit(s) failed; what they "
			  "held is kept and tried again (is the disk full?)",
			  (unsigned long long)(now->write_errors -
					       seen->write_errors));
	*seen = *now;
}

/* What the purge took, in one line: the first time at once, then at most
 * once an hour, so that an admin sees the store kept bounded (and the
 * retry window at work) without a line a second. */
static void
say_purged(struct housekeeping *hk, int64_t now)
{
	struct store_purged *p = &hk->purged;
	const char *since = hk->purged_said ? "in the last hour" : "";

	if (!p->triplets && !p->passes && !p->traps)
		return;
	if (hk->purged_said && now - hk->purged_said < PURGED_SAID_SEC)
		return;
	log_info("store: purged %s%s%" PRIu64
	         " triplet(s) unseen for the retry "
	         "window (%us), %" PRIu64 " pass(es) and %" PRIu64
	         " trap(s) past their end; %zu triplet(s), %zu pass(es) and "
	         "%zu trap(s) kept",
	         since, since[0] ? ": " : "", p->triplets,
	         hk->cfg.triplet_ttl_sec, p->passes, p->traps,
	         store_count(hk->links.store, -1),
	         store_count(hk->links.store, STORE_PASS),
	         store_count(hk->links.store, STORE_TRAP));
	memset(p, 0, sizeof(*p));
	hk->purged_said = now;
}

static void
on_housekeeping(struct loop *loop, struct loop_timer *t, void *ctx)
{
	struct housekeeping *hk = ctx;
	int64_t now = loop_wall_sec(hk->links.loop);
	int r;

	if (allow_lists_expire(hk->allow, now))
		allow_lists_reload(hk->allow);
	r = store_purge(hk->links.store, now,
	                hk->cfg.triplet_ttl_sec, PURGE_BATCH,
	                &hk->purged);
	if (r < 0)
		log_warnx("store: purging expired records: %s", strerror(-r));
	say_purged(hk, now);
	/* (committed by the decider's rule: with a store_commit_interval
	 * longer than the default, what waits is not synced yet) */
	if (++hk->ticks % STORE_SYNC_TICKS == 0) {
		hk->stats_unsaid |= save_stats(hk);
		decider_commit_turn(hk->links.decider);
		if (!store_pending(hk->links.store) &&
		    store_sync(hk->links.store) < 0)
			log_warnx("store: sync to disk failed");
	} else {
		decider_commit_turn(hk->links.decider);
	}
	/* Once committed (a commit may wait for the decider's interval):
	 * a test waits for it before a kill -9. */
	if (hk->stats_unsaid && !store_pending(hk->links.store)) {
		hk->stats_unsaid = false;
		log_debug("report: its figures saved (%" PRIu64 " attempts)",
			  hk->stats_saved.attempts);
	}
	log_store_events(hk);
	loop_timer_arm(loop, t, loop_now_ms(loop) + HOUSEKEEPING_MS);
}

struct housekeeping *
housekeeping_open(const struct housekeeping_links *l,
                  const struct housekeeping_settings *s, bool store_restored)
{
	struct housekeeping *hk = calloc(1, sizeof(*hk));

	if (!hk)
		return NULL;
	hk->links = *l;
	hk->cfg = *s;
	errno = 0;
	hk->snapshot = store_snapshot_start(l->loop, s->store_dir,
	                                    &s->snapshot, l->store,
	                                    store_restored);
	if (!hk->snapshot && errno) {
		free(hk);
		return NULL;
	}
	loop_timer_init(&hk->timer, on_housekeeping, hk);
	hk->store_seen = *store_get_counters(l->store);
	restore_stats(hk);
	return hk;
}

void
housekeeping_start(struct housekeeping *hk, struct grey_store *records,
                   struct allow_lists *allow)
{
	hk->records = records;
	hk->allow = allow;
	loop_timer_arm(hk->links.loop, &hk->timer,
	               loop_now_ms(hk->links.loop) + HOUSEKEEPING_MS);
}

void
housekeeping_stop(struct housekeeping *hk)
{
	if (!hk)
		return;
	loop_timer_cancel(hk->links.loop, &hk->timer);
	hk->records = NULL;
	hk->allow = NULL;
}

void
housekeeping_close(struct housekeeping *hk)
{
	size_t waiting;
	int r;

	if (!hk)
		return;
	save_stats(hk);
	waiting = store_pending(hk->links.store);
	r = store_sync(hk->links.store);
	/* Said, never dropped unsaid (store_close would try again in
	 * silence). */
	if (r < 0)
		log_warnx("store: %zu write(s) could not be saved at stop "
		          "(%s): they are lost with this stop; the clients "
		          "passed among them are greylisted once more after "
		          "the restart (is the disk full?)",
		          waiting, strerror(-r));
	/* (a failure is said there: the snapshot before stays) */
	store_snapshot_close(hk->snapshot);
	free(hk);
}

const struct store_snapshot_counters *
housekeeping_snapshots(const struct housekeeping *hk)
{
	return hk ? store_snapshot_get_counters(hk->snapshot) : NULL;
}

void
housekeeping_reconfigure(struct housekeeping *hk,
                         const struct housekeeping_settings *s)
{
	hk->cfg = *s;
	store_snapshot_reconfigure(hk->snapshot, &s->snapshot);
}

int64_t
housekeeping_stats_since(const struct housekeeping *hk)
{
	return hk->stats_since;
}
