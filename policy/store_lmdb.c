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

#include "policy.h"
#include "store_lmdb.h"

#define STORE_SCHEMA 1u
/* The map is address space, not memory: only used pages count. It starts
 * here and doubles when three quarters are used, up to the most. */
#define STORE_MAP_SIZE ((size_t)1 << 30)
#define STORE_MAP_MAX ((size_t)1 << 40)
/* Redo a failed transaction at most this often in a row. */
#define STORE_REDO_MAX 4
/* Keeps a triplet key within LMDB's 511-byte limit; longer addresses are
 * cut, which can only merge two absurdly long addresses into one key. */
#define STORE_KEY_ADDR_MAX 240
#define CLIENT_KEY_LEN 18

enum { DB_META, DB_TRIPLET, DB_PASS, DB_TRAP, DB_COUNT };

static const char *const db_names[DB_COUNT] = {"meta", "triplet", "pass",
					       "trap"};

struct store {
	MDB_env *env;
	MDB_dbi dbi[DB_COUNT];
	MDB_txn *txn; /* the open write transaction, or NULL */
	size_t pending;
	/* where each table's purge scan goes on next time */
	uint8_t purge_at[DB_COUNT][512];
	size_t purge_at_len[DB_COUNT];
	char temp_dir[64]; /* store_open_temp: removed at close */
	size_t clients[2][2]; /* pass/trap records by table, v4/v6 */
	/* the writes since the last commit: db, op, key, value, each */
	uint8_t *journal;
	size_t journal_len, journal_cap;
	struct store_counters counters;
	/* a copy being written by its own thread (store_copy_start) */
	struct store_copy {
		pthread_t thread;
		int fd;
		bool running;       /* started, not yet joined */
		atomic_bool over;   /* the thread has finished */
		int result;         /* 0 or -errno, once joined */
	} copy;
};

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

static int
mdb_to_errno(int rc)
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

static int
journal_add(struct store *store, int db, const MDB_val *key,
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

	store->copy.result = mdb_to_errno(rc);
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
static int
txn_get(struct store *store, MDB_txn **out)
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
			return mdb_to_errno(rc);
		}
	}
	*out = store->txn;
	return 0;
}

/* A write failed: LMDB has given up the transaction. Begin another with
 * the journal's writes redone in it (the map grown if it was full; the
 * journal committed on its own if the transaction was too big).
 * Return: 0 (the write may be tried again) or -errno. */
static int
redo(struct store *store, int rc)
{
	MDB_txn *txn;
	int r;

	mdb_txn_abort(store->txn);
	store->txn = NULL;
	store->counters.replayed++;
	if (rc == MDB_MAP_FULL && !grow_map(store))
		return mdb_to_errno(rc);
	r = txn_get(store, &txn);
	if (r == 0 && rc == MDB_TXN_FULL)
		r = store_flush(store);
	return r;
}

/* Puts (val) or deletes (val NULL) one record, journalled; with
 * MDB_NOOVERWRITE, MDB_KEYEXIST comes back (nothing written).
 * Return: 0, MDB_KEYEXIST, MDB_NOTFOUND (a delete of nothing), or
 * -errno. */
static int
write_rec(struct store *store, int db, MDB_val *key, MDB_val *val,
	  unsigned flags)
{
	for (int tries = 0;; tries++) {
		MDB_txn *txn;
		int rc = txn_get(store, &txn);

		if (rc)
			return rc;
		rc = val ? mdb_put(txn, store->dbi[db], key, val, flags)
			 : mdb_del(txn, store->dbi[db], key, NULL);
		if (rc == MDB_KEYEXIST || rc == MDB_NOTFOUND)
			return rc;
		if (rc == 0) {
			if (journal_add(store, db, key, val) < 0) {
				/* Unjournalled: commit it now instead. */
				return store_flush(store);
			}
			store->pending++;
			return 0;
		}
		if (tries == STORE_REDO_MAX || redo(store, rc) < 0) {
			store->counters.write_errors++;
			return mdb_to_errno(rc);
		}
	}
}

int
store_flush(struct store *store)
{
	MDB_txn *txn;
	int rc = 0;

	for (int tries = 0; store->txn || store->journal_len; tries++) {
		rc = txn_get(store, &txn);
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
			return mdb_to_errno(rc);
		}
	}
	store->journal_len = 0;
	store->pending = 0;
	/* Room before it is needed: three quarters used, twice the map. */
	store_get_counters(store);
	if (store->counters.used_bytes > store->counters.map_bytes / 4 * 3)
		grow_map(store);
	return mdb_to_errno(rc);
}

int
store_sync(struct store *store)
{
	int rc = store_flush(store);

	if (rc)
		return rc;
	return mdb_to_errno(mdb_env_sync(store->env, 1));
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
		return mdb_to_errno(rc);
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
	return mdb_to_errno(mdb_txn_commit(txn));
fail:
	mdb_txn_abort(txn);
	return mdb_to_errno(rc);
}

static size_t *
client_count(struct store *store, int db, uint8_t family)
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
		return mdb_to_errno(rc);
	memset(store->clients, 0, sizeof(store->clients));
	for (size_t i = 0; rc == 0 && i < 2; i++) {
		MDB_cursor *cur;
		MDB_val key, val;

		rc = mdb_cursor_open(txn, store->dbi[dbs[i]], &cur);
		if (rc)
			break;
		while ((rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) == 0)
			if (key.mv_size == CLIENT_KEY_LEN)
				(*client_count(store, dbs[i],
					       ((uint8_t *)key.mv_data)[0]))++;
		mdb_cursor_close(cur);
		if (rc == MDB_NOTFOUND)
			rc = 0;
	}
	mdb_txn_abort(txn);
	return mdb_to_errno(rc);
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
		return mdb_to_errno(rc);
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
	rc = mdb_to_errno(rc);
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

static void
client_key(const struct grey_client *client, uint8_t *key)
{
	key[0] = client->family;
	key[1] = client->prefix;
	memcpy(key + 2, client->bytes, 16);
}

static void
client_of_key(const uint8_t *key, struct grey_client *client)
{
	client->family = key[0];
	client->prefix = key[1];
	memcpy(client->bytes, key + 2, 16);
}

static size_t
triplet_key(const struct grey_client *client, const char *sender,
	    const char *rcpt, uint8_t *key)
{
	size_t ls = strnlen(sender, STORE_KEY_ADDR_MAX);
	size_t lr = strnlen(rcpt, STORE_KEY_ADDR_MAX);

	client_key(client, key);
	memcpy(key + CLIENT_KEY_LEN, sender, ls);
	key[CLIENT_KEY_LEN + ls] = 0;
	memcpy(key + CLIENT_KEY_LEN + ls + 1, rcpt, lr);
	return CLIENT_KEY_LEN + ls + 1 + lr;
}

static int
get_fixed(struct store *store, int db, MDB_val *key, void *out, size_t len)
{
	MDB_txn *txn = NULL;
	MDB_val val;
	int rc = txn_get(store, &txn);

	store->counters.reads++;
	if (rc)
		return rc;
	rc = mdb_get(txn, store->dbi[db], key, &val);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc)
		return mdb_to_errno(rc);
	if (val.mv_size != len)
		return -EPROTO;
	memcpy(out, val.mv_data, len);
	return STORE_FOUND;
}

static int
put_fixed(struct store *store, int db, MDB_val *key, const void *rec,
	  size_t len)
{
	MDB_val val = {len, (void *)rec};

	store->counters.writes++;
	return write_rec(store, db, key, &val, 0);
}

/* Meta records other than the schema stamp: any size, copied out. */
int
store_get_meta(struct store *store, const char *name, void **out,
	       size_t *len)
{
	MDB_val key = {strlen(name), (void *)name}, val;
	MDB_txn *txn = NULL;
	int rc = txn_get(store, &txn);

	store->counters.reads++;
	*out = NULL;
	*len = 0;
	if (rc)
		return rc;
	if (!strcmp(name, "schema"))
		return -EINVAL;
	rc = mdb_get(txn, store->dbi[DB_META], &key, &val);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc)
		return mdb_to_errno(rc);
	*out = malloc(val.mv_size ? val.mv_size : 1);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, val.mv_data, val.mv_size);
	*len = val.mv_size;
	return STORE_FOUND;
}

int
store_put_meta(struct store *store, const char *name, const void *val,
	       size_t len)
{
	MDB_val key = {strlen(name), (void *)name};

	if (!strcmp(name, "schema") || !name[0])
		return -EINVAL;
	return put_fixed(store, DB_META, &key, val, len);
}

int
store_get_triplet(struct store *store, const struct grey_client *client,
		  const char *sender, const char *rcpt,
		  struct store_triplet *out)
{
	uint8_t buf[512];
	MDB_val key = {triplet_key(client, sender, rcpt, buf), buf};

	return get_fixed(store, DB_TRIPLET, &key, out, sizeof(*out));
}

int
store_put_triplet(struct store *store, const struct grey_client *client,
		  const char *sender, const char *rcpt,
		  const struct store_triplet *rec)
{
	uint8_t buf[512];
	MDB_val key = {triplet_key(client, sender, rcpt, buf), buf};

	return put_fixed(store, DB_TRIPLET, &key, rec, sizeof(*rec));
}

static int
client_db(enum store_table table)
{
	return table == STORE_TRAP ? DB_TRAP : DB_PASS;
}

int
store_get_client(struct store *store, enum store_table table,
		 const struct grey_client *client, struct store_client *out)
{
	uint8_t buf[CLIENT_KEY_LEN];
	MDB_val key = {sizeof(buf), buf};

	client_key(client, buf);
	return get_fixed(store, client_db(table), &key, out, sizeof(*out));
}

int
store_put_client(struct store *store, enum store_table table,
		 const struct grey_client *client,
		 const struct store_client *rec)
{
	uint8_t buf[CLIENT_KEY_LEN];
	MDB_val key = {sizeof(buf), buf}, val = {sizeof(*rec), (void *)rec};
	int db = client_db(table);
	int rc;

	MDB_val probe = val;

	store->counters.writes++;
	client_key(client, buf);
	/* New, or an update: the counts need to know which. On
	 * MDB_KEYEXIST LMDB points probe at the record already there, so
	 * the update writes val, not probe. */
	rc = write_rec(store, db, &key, &probe, MDB_NOOVERWRITE);
	if (rc == 0)
		(*client_count(store, db, client->family))++;
	else if (rc == MDB_KEYEXIST)
		rc = write_rec(store, db, &key, &val, 0);
	return rc;
}

size_t
store_count_clients(const struct store *store, enum store_table table,
		    int family)
{
	return store->clients[table == STORE_TRAP][family == AF_INET6];
}

int
store_del_client(struct store *store, enum store_table table,
		 const struct grey_client *client)
{
	uint8_t buf[CLIENT_KEY_LEN];
	MDB_val key = {sizeof(buf), buf};
	int rc;

	store->counters.writes++;
	client_key(client, buf);
	rc = write_rec(store, client_db(table), &key, NULL, 0);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc)
		return rc;
	(*client_count(store, client_db(table), client->family))--;
	return STORE_FOUND;
}

/* A cursor on db in the open write transaction. Return: 0 or -errno. */
static int
open_cursor(struct store *store, int db, MDB_cursor **cur)
{
	MDB_txn *txn = NULL;
	int rc = txn_get(store, &txn);

	if (rc)
		return rc;
	rc = mdb_cursor_open(txn, store->dbi[db], cur);
	return rc ? mdb_to_errno(rc) : 0;
}

/* Closes a walk: LMDB's error if the walk failed, else result. */
static int
cursor_done(MDB_cursor *cur, int rc, int result)
{
	mdb_cursor_close(cur);
	return rc && rc != MDB_NOTFOUND ? mdb_to_errno(rc) : result;
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
	if (redo(store, rc) < 0)
		store->counters.write_errors++;
	return mdb_to_errno(rc);
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
		if (journal_add(store, db, &k, NULL) < 0)
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
	int rc = open_cursor(store, client_db(table), &cur), r = 0;

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
		client_of_key(k, &client);
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
		client_of_key(k, &client);
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
	client_key(client, prefix);
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
				(*client_count(store, db, family))--;
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
	int db = table < 0 ? DB_TRIPLET : client_db((enum store_table)table);
	MDB_txn *txn = NULL;
	MDB_stat st;

	if (txn_get(store, &txn) || mdb_stat(txn, store->dbi[db], &st))
		return 0;
	return st.ms_entries;
}
