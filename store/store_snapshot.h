/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The store's folders (store_snapshot.c): store_dir's check, and, on an
 * appliance, store_dir kept on tmpfs (RAM: no flash worn by the store's
 * commits) with a snapshot of it in store_snapshot_dir on flash, taken
 * every store_snapshot_interval and at stop, and copied back at start
 * when store_dir holds no store (a reboot emptied the tmpfs). A power
 * cut loses at most one interval of decisions: the clients passed in it
 * meet the tarpit once more and pass again. */
#ifndef GREYGATE_STORE_SNAPSHOT_H
#define GREYGATE_STORE_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

#include "loop.h"
#include "policy.h"
#include "store.h"

struct store_snapshot;

/* Its part of the config ([gateway] store_snapshot_dir and
 * store_snapshot_interval). */
struct store_snapshot_config {
	char dir[256];        /* "": none; else store_dir (tmpfs) copied
				 there */
	uint32_t interval_ms; /* ... this often, and at stop */
};

/* store_folder_check - dir (made if missing, 0700) is a folder of this
 * process's user, writable by nobody else, not a link. Return: 0, or
 * -errno with err (512 bytes) set. */
int store_folder_check(const char *dir, char *err);

/* store_snapshot_restore - before the store opens (and before the
 * privacy key is read: it is in store_dir too): with store_snapshot_dir
 * set and no data.mdb in store_dir, every file of the snapshot copied
 * into store_dir, said in the log. Also says when store_dir is on tmpfs
 * without a snapshot (lost at every reboot). Return: 1 (restored), 0
 * (nothing to restore, or store_dir's own store is there: newer), or
 * -errno with err (512 bytes) set: greygated does not start. */
int store_snapshot_restore(const char *store_dir,
                           const struct store_snapshot_config *cfg,
                           char *err);

/* store_snapshot_start - snapshots every cfg->interval_ms (copied:
 * store_snapshot_reconfigure changes it at a reload) of the open store, each written
 * by the store's own thread while the loop goes on, when something was
 * written since the last (restored: the store is the snapshot's, as
 * store_snapshot_restore left it, so a greygated that stops again at
 * once, respawned in a loop, writes nothing). All borrowed.
 * Return: NULL when cfg sets no dir, or on ENOMEM (errno says which: 0
 * for none). */
struct store_snapshot *store_snapshot_start(struct loop *loop,
                                            const char *store_dir,
                                            const struct store_snapshot_config *cfg,
                                            struct store *store,
                                            bool restored);

/* store_snapshot_reconfigure - a reload's interval: the next snapshot
 * that long from now (or from the end of the one underway); the folder
 * stays (it needs a restart). NULL is fine: none kept. */
void store_snapshot_reconfigure(struct store_snapshot *snap,
                                const struct store_snapshot_config *cfg);

/* store_snapshot_close - at stop, after the store's last sync: the
 * snapshot underway waited for, the last one taken now, freed (NULL is
 * fine). Return: 0, or -errno (said in the log: the snapshot before
 * stays). */
int store_snapshot_close(struct store_snapshot *snap);

/* What the snapshots did, since the start (status and metrics). */
struct store_snapshot_counters {
	uint64_t taken;    /* written whole and renamed into place */
	uint64_t failed;   /* the one before stays */
	uint64_t skipped;  /* nothing written since the one before */
	uint64_t bytes;    /* the last one's store, compacted */
	int64_t last_taken; /* epoch seconds, 0: none yet */
};

/* store_snapshot_counters - NULL-safe: NULL gives NULL. */
const struct store_snapshot_counters *
store_snapshot_get_counters(const struct store_snapshot *snap);

#endif
