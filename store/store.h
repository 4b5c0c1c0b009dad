/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The LMDB store: the greylist's persistent state on this host (the
 * records of policy.h, keyed as they say), and the decision on it. */
#ifndef GREYGATE_STORE_H
#define GREYGATE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "must_check.h"
#include "policy.h"

struct store;

/*
 * store_open - open (or create) the store in directory dir.
 * @dir: an existing directory; the store keeps data.mdb and lock.mdb there
 * @move_aside: if the file is damaged or of an unknown schema, rename it to
 *   data.mdb.bad-<time> and start empty instead of failing
 * @out: the store, owned by the caller (store_close)
 * The file is checked before anything relies on it: an empty file, one
 * shorter than its header says, or one with a page that points outside
 * it is damaged (store_open_why says how), never a crash.
 * Return: 0; -EPROTO for an unknown schema version or a damaged file
 * (with move_aside false); other -errno.
 */
int store_open(const char *dir, bool move_aside, struct store **out);

/* store_open_sized - store_open with a first map of map_bytes (it grows
 * as the data does; tests start it small). */
int store_open_sized(const char *dir, bool move_aside, size_t map_bytes,
		     struct store **out);

/* store_open_why - why the last store_open found the file damaged, or
 * what it set aside ("" if nothing). */
const char *store_open_why(void);

/* What the store did that its owner should know (and log). */
struct store_counters {
	uint64_t map_bytes;    /* the map's size now */
	uint64_t used_bytes;   /* the file's pages in use */
	uint64_t map_grown;    /* times the map was made larger */
	uint64_t replayed;     /* failed transactions redone: nothing lost */
	uint64_t write_errors; /* writes or commits that failed for good */
	uint64_t reads;        /* records asked for */
	uint64_t writes;       /* records written or removed */
};

/* store_get_counters - since store_open. */
const struct store_counters *store_get_counters(struct store *store);

/* store_open_temp - a throw-away store in a new folder under /tmp, for a
 * replay or a simulation; store_close removes it. Return: 0 or -errno. */
int store_open_temp(struct store **out);

/* store_close - commit what is pending (a store_open_temp one: drop it)
 * and close; NULL is fine. */
void store_close(struct store *store);

/* store_flush - commit the writes made since the last flush. Committed
 * writes survive the process being killed, not yet a crash of the machine.
 * A write or commit that fails (the map full, the transaction too big, a
 * passing error) is not lost: the store keeps every write since the last
 * commit, and redoes them in a new transaction (the map grown first if it
 * was full) at once or at the next flush.
 * Return: 0 or -errno (the writes are kept for the next try). */
MUST_CHECK int store_flush(struct store *store);

/* store_sync - flush, then wait until everything committed is on disk
 * (one fsync): it now survives a crash of the machine too.
 * Return: 0 or -errno. */
MUST_CHECK int store_sync(struct store *store);

/* store_pending - writes not yet flushed. */
size_t store_pending(const struct store *store);

/* store_copy_start - a compacted copy of the store as last committed
 * (its free pages left out), written into fd and put on disk (fsync) by a
 * thread of its own, so that the caller's loop goes on meanwhile: a
 * snapshot of a store kept on tmpfs. The store stays usable; a write that
 * needs a larger map waits for the copy first.
 * Return: 0 (started), -EBUSY (one is being written), or -errno. */
int store_copy_start(struct store *store, int fd);

/* store_copy_over - no copy is being written (the last one is over). */
bool store_copy_over(const struct store *store);

/* store_copy_wait - waits for the copy (at once when it is over).
 * Return: its result: 0, or -errno (0 if none was started). */
int store_copy_wait(struct store *store);

/* store_generation - the last committed transaction's number: unchanged,
 * nothing was written since (0 if it cannot be read). */
uint64_t store_generation(struct store *store);

/* greygated commits the store this often by default, and at once when a
 * pass or a trap waits; past this many waiting writes, always. */
#define STORE_COMMIT_DEFAULT_MS 200
#define STORE_COMMIT_PENDING 10000

/*
 * store_commit_due - greygated's rule (and the simulator's, to measure
 * it) for when the pending writes are committed.
 * @force: now (greygated stops, an admin's change)
 * @urgent: a pass or a trap is among them: at once with the default
 *          interval; with a longer one (store_commit_interval, to spare a
 *          router's flash) it waits like the rest, the kernel's sets
 *          holding it meanwhile (a crash loses at most the interval: a
 *          client passed in it meets the tarpit once more, and its retry
 *          passes it again)
 * @now_ms, @last_ms: now and the last commit, on one clock
 */
static inline bool
store_commit_due(size_t pending, bool force, bool urgent, uint64_t now_ms,
                 uint64_t last_ms, uint32_t interval_ms)
{
	if (!pending)
		return false;
	return force || pending >= STORE_COMMIT_PENDING ||
	       now_ms - last_ms >= interval_ms ||
	       (urgent && interval_ms <= STORE_COMMIT_DEFAULT_MS);
}

/* store_get_triplet - Return: STORE_FOUND, 0 if absent, or -errno. */
int store_get_triplet(struct store *store, const struct grey_client *client,
		      const char *sender, const char *rcpt,
		      struct store_triplet *out);
MUST_CHECK int store_put_triplet(struct store *store, const struct grey_client *client,
		      const char *sender, const char *rcpt,
		      const struct store_triplet *rec);

/* store_get_client - a pass or trap record. Return: STORE_FOUND, 0, -errno */
int store_get_client(struct store *store, enum store_table table,
		     const struct grey_client *client, struct store_client *out);
MUST_CHECK int store_put_client(struct store *store, enum store_table table,
		     const struct grey_client *client,
		     const struct store_client *rec);
/* store_del_client - Return: STORE_FOUND if it was there, 0, or -errno. */
MUST_CHECK int store_del_client(struct store *store, enum store_table table,
		     const struct grey_client *client);

/* Where a walk stopped, for the next to go on from (zeroed: the start). */
struct store_pos {
	uint8_t key[512];
	size_t len;
	bool started, done;
};

/* Called for each live client; return non-zero to stop. */
typedef int store_client_fn(const struct grey_client *client,
			    const struct store_client *rec, void *ctx);
/* store_each_client - walk a table's records with expires > now.
 * Return: 0, the callback's non-zero value, or -errno. */
int store_each_client(struct store *store, enum store_table table,
		      int64_t now, store_client_fn *fn, void *ctx);
/* store_each_client_from - the same, at most max records from pos on
 * (pos->done once the end is reached). Return: as store_each_client. */
int store_each_client_from(struct store *store, enum store_table table,
			   int64_t now, struct store_pos *pos, size_t max,
			   store_client_fn *fn, void *ctx);

/* Called for each triplet; return non-zero to stop. */
typedef int store_triplet_fn(const struct grey_client *client,
			     const char *sender, const char *rcpt,
			     const struct store_triplet *rec, void *ctx);
/* store_each_triplet - walk every triplet record, expired or not, in key
 * order (grouped by client). Return: 0, the callback's value, or -errno. */
int store_each_triplet(struct store *store, store_triplet_fn *fn, void *ctx);
/* store_each_triplet_from - the same, at most max records from pos on. */
int store_each_triplet_from(struct store *store, struct store_pos *pos,
			    size_t max, store_triplet_fn *fn, void *ctx);

/* store_forget_client - delete the client key's pass, trap and every
 * triplet of it. Return: records deleted, or -errno. */
MUST_CHECK int store_forget_client(struct store *store,
			const struct grey_client *client);

/* What store_purge deleted, by table (added to). */
struct store_purged {
	uint64_t triplets; /* unseen for triplet_ttl_sec */
	uint64_t passes;   /* past their end */
	uint64_t traps;    /* past their end */
};

/*
 * store_purge - delete at most max expired records: triplets older than
 * triplet_ttl_sec since last seen, clients whose expires <= now.
 * @purged: what was deleted, added to its counts (NULL: not told)
 * Return: number deleted (0 when nothing is left to purge), or -errno.
 */
MUST_CHECK int store_purge(struct store *store, int64_t now, uint32_t triplet_ttl_sec,
		size_t max, struct store_purged *purged);

/* store_get_meta - a named record of any size other than the schema
 * stamp ("schema" is refused), copied to *out (malloc'd; the caller
 * frees). Return: STORE_FOUND, 0 if absent, or -errno. */
int store_get_meta(struct store *store, const char *name, void **out,
		   size_t *len);
/* store_put_meta - write a named record (committed with the next flush).
 * Return: 0 or -errno. */
MUST_CHECK int store_put_meta(struct store *store, const char *name, const void *val,
		   size_t len);

/* store_count - records in a table (triplets: table -1). */
size_t store_count(struct store *store, int table);

/* store_count_clients - pass or trap records of one family (AF_INET or
 * AF_INET6), live or expired but not yet purged: kept as a count, never
 * a walk. */
size_t store_count_clients(const struct store *store, enum store_table table,
			   int family);

/* --- the decision on this store --- */

/*
 * store_decide - read the attempt's records from store, decide (as
 * grey_decide_records) and write what changed.
 * Return: 0, or -errno (out zeroed when the read failed).
 */
int store_decide(struct store *store, struct grey *grey,
		 const struct grey_attempt *a, struct grey_decision *out);

/* store_save_stats - write the greylist's counters and latest delays,
 * with since, as one meta record (committed with the next flush).
 * Return: 0 or -errno. */
int store_save_stats(struct store *store, const struct grey *grey,
		     int64_t since);

/* store_load_stats - add the counters and delays a store_save_stats left
 * to the greylist's, and set *since.
 * Return: STORE_FOUND, 0 (none saved), -EPROTO (unreadable), -errno. */
int store_load_stats(struct store *store, struct grey *grey, int64_t *since);

#endif
