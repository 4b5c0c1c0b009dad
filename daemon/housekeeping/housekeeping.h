/* SPDX-License-Identifier: GPL-2.0-or-later */
/* greygated's housekeeping as a service (housekeeping.c): once a second,
 * run-time allow entries past their end dropped, the store's expired
 * records purged, its commits and sync; the report's figures, counting
 * on across restarts; and the store's snapshots on flash
 * (store_snapshot.h), with the last sync and snapshot at stop. */
#ifndef GREYGATE_HOUSEKEEPING_H
#define GREYGATE_HOUSEKEEPING_H

#include <stdint.h>

#include "allow_lists.h"
#include "store_snapshot.h"
#include "decide.h"
#include "loop.h"
#include "metrics.h"
#include "store_snapshot.h"

struct housekeeping;
struct grey_store;

/* What it keeps, all borrowed: the LMDB file it purges and syncs (the
 * report's figures are saved there), the decider (its greylist's
 * counters, the commit), the figures carried over restarts. */
struct housekeeping_links {
	struct loop *loop;
	struct store *store;
	struct decider *decider;
	struct metrics_figures *figures;
};

/* Its part of the settings (config_housekeeping_part). */
struct housekeeping_settings {
	uint32_t triplet_ttl_sec; /* [greylist] retry_window: a triplet
				     unseen this long is purged */
	char store_dir[256];      /* [gateway] store_dir */
	struct store_snapshot_config snapshot; /* store_snapshot_dir, _interval */
};

/* housekeeping_open - its state, with the report's figures saved before
 * a restart taken back (the decider's greylist open), and the store's
 * snapshots begun when s asks for them (s copied: housekeeping_reconfigure
 * brings a reload's; store_restored: the store is the snapshot
 * store_snapshot_restore put back). Return: NULL (ENOMEM). */

struct housekeeping *housekeeping_open(const struct housekeeping_links *l,
                                       const struct housekeeping_settings *s,
                                       bool store_restored);

/* housekeeping_start - its timer armed; records (the greylist's store,
 * where a shared store gets this gateway's share of the report) and
 * allow (whose entries past their end go) borrowed until _stop. */
void housekeeping_start(struct housekeeping *hk, struct grey_store *records,
                        struct allow_lists *allow);

/* housekeeping_stop - its timer disarmed; records and allow no longer
 * used (NULL is fine). */
void housekeeping_stop(struct housekeeping *hk);

/* housekeeping_close - the figures saved, the store's last sync (what it
 * could not save said in the log: lost with this stop), the last
 * snapshot, and freed (NULL is fine). The store stays open. */
void housekeeping_close(struct housekeeping *hk);

/* housekeeping_snapshots - what the snapshots did; NULL when cfg asks
 * for none. */
const struct store_snapshot_counters *
housekeeping_snapshots(const struct housekeeping *hk);

/* housekeeping_reconfigure - a reload's settings (copied): the purge's
 * window, the store's snapshot interval. */
void housekeeping_reconfigure(struct housekeeping *hk,
                              const struct housekeeping_settings *s);

/* housekeeping_stats_since - when the report's counting began. */
int64_t housekeeping_stats_since(const struct housekeeping *hk);

/* housekeeping_stats_reset - the report counts from zero, from now on. */
void housekeeping_stats_reset(struct housekeeping *hk);

#endif
