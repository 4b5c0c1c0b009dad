// SPDX-License-Identifier: GPL-2.0-or-later
/* The embedded store on LMDB: triplets, passed and trapped clients. Writes
 * go into one long write transaction that store_flush commits (no fsync:
 * a commit survives kill -9) and store_sync puts on disk (one fsync), so a
 * burst of decisions costs neither per decision. Every write since the
 * last commit is also kept in a journal in memory: LMDB gives up a whole
 * transaction when one write fails (a full map, too many dirty pages), and
 * the journal redoes it in a new one, so nothing decided is lost. The map
 * grows before it is full.
 * The file carries a schema version; a file we cannot read is an error or
 * is moved aside, never a crash (store_lmdb_check.c). */
#include <errno.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store_lmdb-int.h"

static const char *const db_names[DB_COUNT] = {"meta", "triplet", "pass",
					       "trap"};

static char open_why[160];

const char *
store_open_why(void)
{
	return open_why;
}

const struct store_counters *
store_get_counters(struct store *store)
{
	MDB_envinfo info;
	MDB_stat st;

	if (mdb_env_info(store->env, &info) == 0 &&
	    mdb_env_stat(store->env, &st) == 0) {
		store->counters.map_bytes = info.me_mapsize;
		store->counters.used_bytes =
			(uint64_t)(info.me_last_pgno + 1) * st.ms_psize;
	}
	return &store->counters;
}

int
store_lmdb_errno(int rc)
{
	switch (rc) {
	case 0:
		return 0;
	case MDB_NOTFOUND:
		return -ENOENT;
	case MDB_MAP_FULL:
	case MDB_TXN_FULL:
		return -ENOSPC;
	case MDB_INVALID:
	case MDB_CORRUPTED:
	case MDB_VERSION_MISMATCH:
	case MDB_PAGE_NOTFOUND:
	case MDB_BAD_TXN:
		return -EPROTO;
	default:
		return rc > 0 ? -rc : -EIO;
	}
}

/* --- the journal of writes since the last commit --- */

struct journal_head {
	uint8_t db, del;
	uint16_t klen;
	uint32_t vlen;
};

int
store_lmdb_journal_add(struct store *store, int db, const MDB_val *key,
	    const MDB_val *val)
{
	struct journal_head h = {(uint8_t)db, val == NULL,
				 (uint16_t)key->mv_size,
				 val ? (uint32_t)val->mv_size : 0};
	size_t need = sizeof(h) + h.klen + h.vlen;

	if (store->journal_len + need > store->journal_cap) {
		size_t cap = store->journal_cap ? store->journal_cap : 65536;
		uint8_t *grown;

		while (cap < store->journal_len + need)
			cap *= 2;
		grown = realloc(store->journal, cap);
		if (!grown)
			return -ENOMEM;
		store->journal = grown;
		store->journal_cap = cap;
	}
	memcpy(store->journal + store->journal_len, &h, sizeof(h));
	memcpy(store->journal + store->journal_len + sizeof(h), key->mv_data,
	       h.klen);
	if (val)
		memcpy(store->journal + store->journal_len + sizeof(h) + h.klen,
		       val->mv_data, h.vlen);
	store->journal_len += need;
	return 0;
}

/* Redoes the journal in txn. Return: 0 or LMDB's error. */
static int
journal_replay(struct store *store, MDB_txn *txn)
{
	for (size_t at = 0; at < store->journal_len;) {
		struct journal_head h;
		MDB_val key, val;
		int rc;

		memcpy(&h, store->journal + at, sizeof(h));
		key.mv_size = h.klen;
		key.mv_data = store->journal + at + sizeof(h);
		val.mv_size = h.vlen;
		val.mv_data = store->journal + at + sizeof(h) + h.klen;
		rc = h.del ? mdb_del(txn, store->dbi[h.db], &key, NULL)
			   : mdb_put(txn, store->dbi[h.db], &key, &val, 0);
		if (rc && rc != MDB_NOTFOUND)
			return rc;
		at += sizeof(h) + h.klen + h.vlen;
	}
	return 0;
}

/* The copy's thread: LMDB's compacting copy reads one consistent
 * transaction (the last committed) beside the writer, without its lock,
 * then the file is put on disk. */
static void *
copy_thread(void *arg)
{
	struct store *store = arg;
	int rc = mdb_env_copyfd2(store->env, store->copy.fd, MDB_CP_COMPACT);

	store->copy.result = store_lmdb_errno(rc);
	if (rc == 0 && fsync(store->copy.fd) < 0)
		store->copy.result = -errno;
	atomic_store(&store->copy.over, true);
	return NULL;
}

/* Waits for the copy's thread, if one runs. */
static void
copy_join(struct store *store)
{
	if (!store->copy.running)
		return;
	pthread_join(store->copy.thread, NULL);
	store->copy.running = false;
}

int
store_copy_start(struct store *store, int fd)
{
	int rc;

	if (store->copy.running)
		return -EBUSY;
	store->copy.fd = fd;
	store->copy.result = -EINPROGRESS;
	atomic_store(&store->copy.over, false);
	rc = pthread_create(&store->copy.thread, NULL, copy_thread, store);
	if (rc)
		return store->copy.result = -rc;
	store->copy.running = true;
	return 0;
}

bool
store_copy_over(const struct store *store)
{
	return !store->copy.running || atomic_load(&store->copy.over);
}

int
store_copy_wait(struct store *store)
{
	copy_join(store);
	return store->copy.result;
}

uint64_t
store_generation(struct store *store)
{
	MDB_envinfo info;

	return mdb_env_info(store->env, &info) ? 0 : info.me_last_txnid;
}

/* A larger map: no transaction may be open. Return: true if it grew. */
static bool
grow_map(struct store *store)
{
	MDB_envinfo info;
	size_t size;

	if (store->txn)
		return false;
	/* (no transaction may be open in the process: a copy's read one
	 * ends first) */
	copy_join(store);
	if (mdb_env_info(store->env, &info))
		return false;
	size = info.me_mapsize * 2;
	if (size > STORE_MAP_MAX || mdb_env_set_mapsize(store->env, size))
		return false;
	store->counters.map_grown++;
	return true;
}

/* The open write transaction, begun if none is (with the journal's writes
 * redone in it, after a failure). */
int
store_lmdb_txn(struct store *store, MDB_txn **out)
{
	for (int tries = 0; !store->txn; tries++) {
		int rc = mdb_txn_begin(store->env, NULL, 0, &store->txn);

		if (rc == 0)
			rc = journal_replay(store, store->txn);
		if (rc == 0)
			break;
		if (store->txn)
			mdb_txn_abort(store->txn);
		store->txn = NULL;
		if (rc != MDB_MAP_FULL || tries == STORE_REDO_MAX ||
		    !grow_map(store)) {
			store->counters.write_errors++;
			return store_lmdb_errno(rc);
		}
	}
	*out = store->txn;
	return 0;
}

/* A write failed: LMDB has given up the transaction. Begin another with
 * the journal's writes redone in it (the map grown if it was full; the
 * journal committed on its own if the transaction was too big).
 * Return: 0 (the write may be tried again) or -errno. */
int
store_lmdb_redo(struct store *store, int rc)
{
	MDB_txn *txn;
	int r;

	mdb_txn_abort(store->txn);
	store->txn = NULL;
	store->counters.replayed++;
	if (rc == MDB_MAP_FULL && !grow_map(store))
		return store_lmdb_errno(rc);
	r = store_lmdb_txn(store, &txn);
	if (r == 0 && rc == MDB_TXN_FULL)
		r = store_flush(store);
	return r;
}

/* Puts (val) or deletes (val NULL) one record, journalled; with
 * MDB_NOOVERWRITE, MDB_KEYEXIST comes back (nothing written).
 * Return: 0, MDB_KEYEXIST, MDB_NOTFOUND (a delete of nothing), or
 * -errno. */
int
store_lmdb_write(struct store *store, int db, MDB_val *key, MDB_val *val,
                 unsigned flags)
{
	for (int tries = 0;; tries++) {
		MDB_txn *txn;
		int rc = store_lmdb_txn(store, &txn);

		if (rc)
			return rc;
		rc = val ? mdb_put(txn, store->dbi[db], key, val, flags)
			 : mdb_del(txn, store->dbi[db], key, NULL);
		if (rc == MDB_KEYEXIST || rc == MDB_NOTFOUND)
			return rc;
		if (rc == 0) {
			if (store_lmdb_journal_add(store, db, key, val) < 0) {
				/* Unjournalled: commit it now instead. */
				return store_flush(store);
			}
			store->pending++;
			return 0;
		}
		if (tries == STORE_REDO_MAX || store_lmdb_redo(store, rc) < 0) {
			store->counters.write_errors++;
			return store_lmdb_errno(rc);
		}
	}
}

int
store_flush(struct store *store)
{
	MDB_txn *txn;
	int rc = 0;

	for (int tries = 0; store->txn || store->journal_len; tries++) {
		rc = store_lmdb_txn(store, &txn);
		if (rc)
			return rc;
		rc = mdb_txn_commit(txn);
		store->txn = NULL; /* committed or freed, either way */
		if (rc == 0)
			break;
		/* The journal still holds it all: grow if need be and try
		 * again, now or at the next flush. */
		store->counters.replayed++;
		if (tries == STORE_REDO_MAX ||
		    (rc == MDB_MAP_FULL && !grow_map(store))) {
			store->counters.write_errors++;
			return store_lmdb_errno(rc);
		}
	}
	store->journal_len = 0;
	store->pending = 0;
	/* Room before it is needed: three quarters used, twice the map. */
	store_get_counters(store);
	if (store->counters.used_bytes > store->counters.map_bytes / 4 * 3)
		grow_map(store);
	return store_lmdb_errno(rc);
}

int
store_sync(struct store *store)
{
	int rc = store_flush(store);

	if (rc)
		return rc;
	return store_lmdb_errno(mdb_env_sync(store->env, 1));
}

size_t
store_pending(const struct store *store)
{
	return store->pending;
}

/* Opens the DBIs and checks or stamps the schema. */
static int
store_prepare(struct store *store)
{
	MDB_txn *txn = NULL;
	MDB_val key = {6, "schema"}, val;
	uint32_t schema = STORE_SCHEMA;
	int rc;

	rc = mdb_txn_begin(store->env, NULL, 0, &txn);
	if (rc)
		return store_lmdb_errno(rc);
	for (int i = 0; i < DB_COUNT; i++) {
		rc = mdb_dbi_open(txn, db_names[i], MDB_CREATE, &store->dbi[i]);
		if (rc)
			goto fail;
	}
	rc = mdb_get(txn, store->dbi[DB_META], &key, &val);
	if (rc == MDB_NOTFOUND) {
		val.mv_size = sizeof(schema);
		val.mv_data = &schema;
		rc = mdb_put(txn, store->dbi[DB_META], &key, &val, 0);
		if (rc)
			goto fail;
	} else if (rc) {
		goto fail;
	} else if (val.mv_size != sizeof(schema) ||
		   memcmp(val.mv_data, &schema, sizeof(schema)) != 0) {
		snprintf(open_why, sizeof(open_why),
			 "not a greygate store of schema %u", STORE_SCHEMA);
		mdb_txn_abort(txn);
		return -EPROTO;
	}
	return store_lmdb_errno(mdb_txn_commit(txn));
fail:
	mdb_txn_abort(txn);
	return store_lmdb_errno(rc);
}

size_t *
store_lmdb_client_count(struct store *store, int db, uint8_t family)
{
	return &store->clients[db == DB_TRAP][family == AF_INET6];
}

/* The counts of pass and trap records, from a walk (at open). */
static int
count_clients(struct store *store)
{
	static const int dbs[] = {DB_PASS, DB_TRAP};
	MDB_txn *txn;
	int rc = mdb_txn_begin(store->env, NULL, MDB_RDONLY, &txn);

	if (rc)
		return store_lmdb_errno(rc);
	memset(store->clients, 0, sizeof(store->clients));
	for (size_t i = 0; rc == 0 && i < 2; i++) {
		MDB_cursor *cur;
		MDB_val key, val;

		rc = mdb_cursor_open(txn, store->dbi[dbs[i]], &cur);
		if (rc)
			break;
		while ((rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) == 0)
			if (key.mv_size == CLIENT_KEY_LEN)
				(*store_lmdb_client_count(store, dbs[i],
					       ((uint8_t *)key.mv_data)[0]))++;
		mdb_cursor_close(cur);
		if (rc == MDB_NOTFOUND)
			rc = 0;
	}
	mdb_txn_abort(txn);
	return store_lmdb_errno(rc);
}

static int
store_try_open(const char *dir, size_t map_bytes, struct store **out)
{
	struct store *store = calloc(1, sizeof(*store));
	int rc;

	if (!store)
		return -ENOMEM;
	rc = lmdb_check_before_open(dir, open_why);
	if (rc) {
		free(store);
		return rc;
	}
	rc = mdb_env_create(&store->env);
	if (rc) {
		free(store);
		return store_lmdb_errno(rc);
	}
	mdb_env_set_maxdbs(store->env, DB_COUNT);
	mdb_env_set_mapsize(store->env, map_bytes);
	/* NOSYNC: a commit writes to the file (so it survives the process
	 * being killed) but does not wait for the disk; store_sync does. A
	 * crash of the machine can lose what came after the last sync; with
	 * no WRITEMAP the file's integrity is kept (measured: twice the
	 * decisions per second of a synced commit, bench/RESULTS.md). */
	rc = mdb_env_open(store->env, dir, MDB_NOSYNC, 0600);
	if (rc)
		goto fail;
	rc = lmdb_check_opened(store->env, dir, open_why);
	if (rc == 0)
		rc = store_prepare(store);
	if (rc == 0)
		rc = count_clients(store);
	if (rc)
		goto fail_errno;
	*out = store;
	return 0;
fail:
	if (rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH ||
	    rc == MDB_CORRUPTED)
		snprintf(open_why, sizeof(open_why), "%s", mdb_strerror(rc));
	rc = store_lmdb_errno(rc);
fail_errno:
	mdb_env_close(store->env);
	free(store);
	return rc;
}

int
store_open_sized(const char *dir, bool move_aside, size_t map_bytes,
		 struct store **out)
{
	char path[4096], aside[4200];
	int rc;

	open_why[0] = 0;
	rc = store_try_open(dir, map_bytes, out);
	if (rc != -EPROTO || !move_aside)
		return rc;
	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	snprintf(aside, sizeof(aside), "%s/data.mdb.bad-%lld", dir,
		 (long long)time(NULL));
	if (rename(path, aside) < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/lock.mdb", dir);
	unlink(path);
	/* What was found is said with what was done about it. */
	snprintf(open_why + strlen(open_why),
		 sizeof(open_why) - strlen(open_why), "%s%s set aside",
		 open_why[0] ? ": " : "", strrchr(aside, '/') + 1);
	return store_try_open(dir, map_bytes, out);
}

int
store_open(const char *dir, bool move_aside, struct store **out)
{
	return store_open_sized(dir, move_aside, STORE_MAP_SIZE, out);
}

int
store_open_temp(struct store **out)
{
	char dir[] = "/tmp/greygate-store-XXXXXX";
	int r;

	if (!mkdtemp(dir))
		return -errno;
	r = store_open(dir, false, out);
	if (r < 0) {
		rmdir(dir);
		return r;
	}
	snprintf((*out)->temp_dir, sizeof((*out)->temp_dir), "%s", dir);
	return 0;
}

void
store_close(struct store *store)
{
	char path[96];

	if (!store)
		return;
	copy_join(store);
	if (!store->temp_dir[0]) {
		if (store_sync(store) < 0) {
			/* lost with the close: a caller that must say so
			 * synced first (gateway_close) */
		}
	} else if (store->txn)
		mdb_txn_abort(store->txn); /* thrown away with the file */
	store->txn = NULL;
	mdb_env_close(store->env);
	free(store->journal);
	if (store->temp_dir[0]) {
		snprintf(path, sizeof(path), "%s/data.mdb", store->temp_dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/lock.mdb", store->temp_dir);
		unlink(path);
		rmdir(store->temp_dir);
	}
	free(store);
}
