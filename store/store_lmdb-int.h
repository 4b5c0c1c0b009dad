/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inside the LMDB store: struct store and what its parts share
 * (store_lmdb.c the file, its transaction and records; store_lmdb_walk.c
 * the walks, forget and purge). No other module includes it:
 * store_lmdb.h is the API. */
#ifndef GREYGATE_STORE_LMDB_INT_H
#define GREYGATE_STORE_LMDB_INT_H

#include <lmdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "store.h"
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

/* store_lmdb_errno - an LMDB return code as -errno (0 for 0). */
int store_lmdb_errno(int rc);

/* store_lmdb_journal_add - a write (val NULL: a delete) kept in the
 * journal, to be redone if the transaction is lost. Return: 0 or
 * -ENOMEM. */
int store_lmdb_journal_add(struct store *store, int db, const MDB_val *key,
                           const MDB_val *val);

/* store_lmdb_txn - the open write transaction, begun if none is (the
 * journal's writes redone in it). Return: 0 or -errno. */
int store_lmdb_txn(struct store *store, MDB_txn **out);

/* store_lmdb_redo - a write failed with rc: another transaction with
 * the journal redone. Return: 0 (try the write again) or -errno. */
int store_lmdb_redo(struct store *store, int rc);

/* store_lmdb_write - puts (val) or deletes (val NULL) one record,
 * journalled; with MDB_NOOVERWRITE, MDB_KEYEXIST comes back (nothing
 * written). Return: 0, MDB_KEYEXIST, MDB_NOTFOUND (a delete of nothing),
 * or -errno. */
int store_lmdb_write(struct store *store, int db, MDB_val *key, MDB_val *val,
                     unsigned flags);

/* store_lmdb_client_count - the count of db's records of family. */
size_t *store_lmdb_client_count(struct store *store, int db, uint8_t family);

/* store_lmdb_client_key - a client's key (CLIENT_KEY_LEN bytes). */
void store_lmdb_client_key(const struct grey_client *client, uint8_t *key);

/* store_lmdb_client_of_key - the client of a key. */
void store_lmdb_client_of_key(const uint8_t *key, struct grey_client *client);

/* store_lmdb_client_db - the table of passes or of traps. */
int store_lmdb_client_db(enum store_table table);

#endif
