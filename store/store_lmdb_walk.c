// SPDX-License-Identifier: GPL-2.0-or-later
/* The LMDB store's walks (store_lmdb.h): each client, each triplet, in
 * bounded steps from a position; a client forgotten with its triplets;
 * expired records purged, a table's scan going on where it stopped. On
 * the store's one write transaction (store_lmdb-int.h). */
#include <errno.h>
#include <lmdb.h>
#include <string.h>
#include <sys/socket.h>

#include "store_lmdb-int.h"

/* A cursor on db in the open write transaction. Return: 0 or -errno. */
static int
open_cursor(struct store *store, int db, MDB_cursor **cur)
{
	MDB_txn *txn = NULL;
	int rc = store_lmdb_txn(store, &txn);

	if (rc)
		return rc;
	rc = mdb_cursor_open(txn, store->dbi[db], cur);
	return rc ? store_lmdb_errno(rc) : 0;
}

/* Closes a walk: LMDB's error if the walk failed, else result. */
static int
cursor_done(MDB_cursor *cur, int rc, int result)
{
	mdb_cursor_close(cur);
	return rc && rc != MDB_NOTFOUND ? store_lmdb_errno(rc) : result;
}

/* Closes a walk that deleted: a failed delete gave up the transaction,
 * which is redone from the journal before anything else uses the store.
 * Return: as cursor_done. */
static int
cursor_done_writing(struct store *store, MDB_cursor *cur, int rc, int result)
{
	mdb_cursor_close(cur);
	if (!rc || rc == MDB_NOTFOUND)
		return result;
	if (store_lmdb_redo(store, rc) < 0)
		store->counters.write_errors++;
	return store_lmdb_errno(rc);
}

/* Deletes the record under the cursor, journalled. A failure gives up
 * the transaction (and the cursor with it): the walk ends there, the
 * journal is redone in a new one, and the caller may try again. */
static int
cursor_del(struct store *store, int db, MDB_cursor *cur, MDB_val *key)
{
	uint8_t copy[512];
	MDB_val k = {key->mv_size, copy};
	int rc;

	if (key->mv_size > sizeof(copy))
		return MDB_BAD_VALSIZE;
	memcpy(copy, key->mv_data, key->mv_size);
	rc = mdb_cursor_del(cur, 0);
	if (rc == 0) {
		store->pending++;
		if (store_lmdb_journal_add(store, db, &k, NULL) < 0)
			rc = MDB_TXN_FULL; /* commit instead, as below */
	}
	return rc;
}

/* After a delete the cursor stands on the next record, or past the end
 * (LMDB answers either way depending on the page). */
static int
cursor_after_del(MDB_cursor *cur, MDB_val *key, MDB_val *val)
{
	int rc = mdb_cursor_get(cur, key, val, MDB_GET_CURRENT);

	if (rc == MDB_NOTFOUND || rc == EINVAL)
		rc = mdb_cursor_get(cur, key, val, MDB_NEXT);
	return rc;
}

/* Puts the cursor on the first record of a walk from pos. */
static int
walk_start(MDB_cursor *cur, struct store_pos *pos, MDB_val *key, MDB_val *val)
{
	int rc;

	if (!pos->started) {
		pos->started = true;
		return mdb_cursor_get(cur, key, val, MDB_FIRST);
	}
	key->mv_size = pos->len;
	key->mv_data = pos->key;
	rc = mdb_cursor_get(cur, key, val, MDB_SET_RANGE);
	/* pos holds the last record given: go on after it. */
	if (rc == 0 && key->mv_size == pos->len &&
	    memcmp(key->mv_data, pos->key, pos->len) == 0)
		rc = mdb_cursor_get(cur, key, val, MDB_NEXT);
	return rc;
}

static void
walk_note(struct store_pos *pos, const MDB_val *key)
{
	if (key->mv_size <= sizeof(pos->key)) {
		memcpy(pos->key, key->mv_data, key->mv_size);
		pos->len = key->mv_size;
	}
}

int
store_each_client_from(struct store *store, enum store_table table,
		       int64_t now, struct store_pos *pos, size_t max,
		       store_client_fn *fn, void *ctx)
{
	MDB_cursor *cur;
	MDB_val key, val;
	int rc = open_cursor(store, store_lmdb_client_db(table), &cur), r = 0;

	if (rc)
		return rc;
	for (rc = walk_start(cur, pos, &key, &val); rc == 0 && max;
	     rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
		struct grey_client client;
		struct store_client rec;
		const uint8_t *k = key.mv_data;

		walk_note(pos, &key);
		if (key.mv_size != CLIENT_KEY_LEN || val.mv_size != sizeof(rec))
			continue;
		memcpy(&rec, val.mv_data, sizeof(rec));
		if (rec.expires <= now)
			continue;
		max--;
		store_lmdb_client_of_key(k, &client);
		r = fn(&client, &rec, ctx);
		if (r)
			break;
	}
	pos->done = rc == MDB_NOTFOUND;
	return cursor_done(cur, rc, r);
}

int
store_each_client(struct store *store, enum store_table table, int64_t now,
		  store_client_fn *fn, void *ctx)
{
	struct store_pos pos = {0};

	return store_each_client_from(store, table, now, &pos, SIZE_MAX, fn,
				      ctx);
}

int
store_each_triplet_from(struct store *store, struct store_pos *pos,
			size_t max, store_triplet_fn *fn, void *ctx)
{
	MDB_cursor *cur;
	MDB_val key, val;
	int rc = open_cursor(store, DB_TRIPLET, &cur), r = 0;

	if (rc)
		return rc;
	for (rc = walk_start(cur, pos, &key, &val); rc == 0 && max;
	     rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
		char sender[STORE_KEY_ADDR_MAX + 1], rcpt[STORE_KEY_ADDR_MAX + 1];
		const uint8_t *k = key.mv_data;
		struct grey_client client;
		struct store_triplet rec;
		size_t ls, lr;

		walk_note(pos, &key);
		if (key.mv_size <= CLIENT_KEY_LEN || val.mv_size != sizeof(rec))
			continue;
		ls = strnlen((const char *)k + CLIENT_KEY_LEN,
			     key.mv_size - CLIENT_KEY_LEN);
		if (ls > STORE_KEY_ADDR_MAX ||
		    CLIENT_KEY_LEN + ls + 1 > key.mv_size)
			continue;
		lr = key.mv_size - CLIENT_KEY_LEN - ls - 1;
		if (lr > STORE_KEY_ADDR_MAX)
			continue;
		memcpy(sender, k + CLIENT_KEY_LEN, ls);
		sender[ls] = 0;
		memcpy(rcpt, k + CLIENT_KEY_LEN + ls + 1, lr);
		rcpt[lr] = 0;
		memcpy(&rec, val.mv_data, sizeof(rec));
		store_lmdb_client_of_key(k, &client);
		max--;
		r = fn(&client, sender, rcpt, &rec, ctx);
		if (r)
			break;
	}
	pos->done = rc == MDB_NOTFOUND;
	return cursor_done(cur, rc, r);
}

int
store_each_triplet(struct store *store, store_triplet_fn *fn, void *ctx)
{
	struct store_pos pos = {0};

	return store_each_triplet_from(store, &pos, SIZE_MAX, fn, ctx);
}

int
store_forget_client(struct store *store, const struct grey_client *client)
{
	uint8_t prefix[CLIENT_KEY_LEN];
	MDB_cursor *cur;
	MDB_val key = {sizeof(prefix), prefix}, val;
	int rc, deleted = 0;

	for (int t = STORE_PASS; t <= STORE_TRAP; t++) {
		rc = store_del_client(store, (enum store_table)t, client);
		if (rc < 0)
			return rc;
		deleted += rc == STORE_FOUND;
	}
	store_lmdb_client_key(client, prefix);
	rc = open_cursor(store, DB_TRIPLET, &cur);
	if (rc)
		return rc;
	/* Triplet keys start with the client key: one range to delete. */
	rc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE);
	while (rc == 0 && key.mv_size > CLIENT_KEY_LEN &&
	       memcmp(key.mv_data, prefix, CLIENT_KEY_LEN) == 0) {
		rc = cursor_del(store, DB_TRIPLET, cur, &key);
		if (rc)
			break;
		deleted++;
		rc = cursor_after_del(cur, &key, &val);
	}
	return cursor_done_writing(store, cur, rc, deleted);
}

static bool
record_expired(int db, const MDB_val *val, int64_t now,
	       uint32_t triplet_ttl_sec)
{
	if (db == DB_TRIPLET) {
		struct store_triplet t;

		if (val->mv_size != sizeof(t))
			return true;
		memcpy(&t, val->mv_data, sizeof(t));
		return t.last_seen + (int64_t)triplet_ttl_sec <= now;
	} else {
		struct store_client c;

		if (val->mv_size != sizeof(c))
			return true;
		memcpy(&c, val->mv_data, sizeof(c));
		return c.expires <= now;
	}
}

/* Examines at most budget records of one table from where the last scan
 * stopped; deletes the expired ones. */
static int
purge_table(struct store *store, int db, int64_t now, uint32_t ttl,
	    size_t budget, int *deleted)
{
	MDB_cursor *cur;
	MDB_val key = {store->purge_at_len[db], store->purge_at[db]}, val;
	int rc = open_cursor(store, db, &cur);

	if (rc)
		return rc;
	rc = key.mv_size ? mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE)
			 : mdb_cursor_get(cur, &key, &val, MDB_FIRST);
	while (rc == 0 && budget-- > 0) {
		if (record_expired(db, &val, now, ttl)) {
			/* Read before the delete frees the key's page. */
			bool client = db != DB_TRIPLET &&
				      key.mv_size == CLIENT_KEY_LEN;
			uint8_t family = client ? *(uint8_t *)key.mv_data : 0;

			rc = cursor_del(store, db, cur, &key);
			if (rc)
				break;
			if (client)
				(*store_lmdb_client_count(store, db, family))--;
			(*deleted)++;
			rc = cursor_after_del(cur, &key, &val);
			continue;
		}
		rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT);
	}
	if (rc == 0 && key.mv_size <= sizeof(store->purge_at[db])) {
		memcpy(store->purge_at[db], key.mv_data, key.mv_size);
		store->purge_at_len[db] = key.mv_size;
	} else {
		store->purge_at_len[db] = 0; /* reached the end: wrap */
	}
	return cursor_done_writing(store, cur, rc, 0);
}

int
store_purge(struct store *store, int64_t now, uint32_t triplet_ttl_sec,
	    size_t max, struct store_purged *purged)
{
	static const int dbs[] = {DB_TRIPLET, DB_PASS, DB_TRAP};
	int deleted = 0;

	for (size_t i = 0; i < sizeof(dbs) / sizeof(dbs[0]); i++) {
		int before = deleted;
		int rc = purge_table(store, dbs[i], now, triplet_ttl_sec, max,
				     &deleted);

		if (rc)
			return rc;
		if (purged)
			*(dbs[i] == DB_TRIPLET ? &purged->triplets
			  : dbs[i] == DB_PASS  ? &purged->passes
					       : &purged->traps) +=
				(uint64_t)(deleted - before);
	}
	return deleted;
}

size_t
store_count(struct store *store, int table)
{
	int db = table < 0 ? DB_TRIPLET : store_lmdb_client_db((enum store_table)table);
	MDB_txn *txn = NULL;
	MDB_stat st;

	if (store_lmdb_txn(store, &txn) || mdb_stat(txn, store->dbi[db], &st))
		return 0;
	return st.ms_entries;
}
