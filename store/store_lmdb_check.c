// SPDX-License-Identifier: GPL-2.0-or-later
/* The LMDB store's file checks (see store_lmdb.h): a damaged file is found
 * before anything relies on it, so it is an error or is moved aside,
 * never a crash of greygated (LMDB reads its map directly, and a page
 * number past the end of the file is a SIGBUS). */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "store_lmdb.h"

/* LMDB's two header (meta) pages come first; a page is at least 512
 * bytes. */
#define HEADER_BYTES_MIN (2 * 512)

static int
data_size(const char *dir, off_t *size)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	if (stat(path, &st) < 0)
		return -errno;
	*size = st.st_size;
	return 0;
}

int
lmdb_check_before_open(const char *dir, char *why)
{
	off_t size;

	if (data_size(dir, &size) < 0)
		return 0; /* none yet: a new store */
	if (size == 0) {
		snprintf(why, 128, "data.mdb is empty");
		return -EPROTO;
	}
	if (size < HEADER_BYTES_MIN) {
		snprintf(why, 128,
		         "data.mdb is %lld bytes: shorter than its "
		         "header",
		         (long long)size);
		return -EPROTO;
	}
	return 0;
}

static sigjmp_buf fault_jump;

static void
on_fault(int sig)
{
	siglongjmp(fault_jump, sig);
}

/* Every record of dbi, in order: LMDB checks each page it steps on. */
static int
walk_table(MDB_txn *txn, MDB_dbi dbi, MDB_cursor *volatile *cur)
{
	MDB_val key, val;
	int rc = mdb_cursor_open(txn, dbi, (MDB_cursor **)cur);

	if (rc)
		return rc;
	while ((rc = mdb_cursor_get(*cur, &key, &val, MDB_NEXT)) == 0)
		;
	mdb_cursor_close(*cur);
	*cur = NULL;
	return rc == MDB_NOTFOUND ? 0 : rc;
}

/* The free list (table 0): each record a count of page numbers, then the
 * numbers, each within the file. */
static int
walk_free_list(MDB_txn *txn, size_t last_pgno, MDB_cursor *volatile *cur)
{
	MDB_val key, val;
	int rc = mdb_cursor_open(txn, 0, (MDB_cursor **)cur);

	if (rc)
		return rc;
	while ((rc = mdb_cursor_get(*cur, &key, &val, MDB_NEXT)) == 0) {
		size_t n, pg;

		if (val.mv_size < sizeof(size_t))
			return MDB_CORRUPTED;
		memcpy(&n, val.mv_data, sizeof(n));
		if (val.mv_size != (n + 1) * sizeof(size_t))
			return MDB_CORRUPTED;
		for (size_t i = 1; i <= n; i++) {
			memcpy(&pg, (const char *)val.mv_data + i * sizeof(pg),
			       sizeof(pg));
			if (pg < 2 || pg > last_pgno)
				return MDB_CORRUPTED;
		}
	}
	mdb_cursor_close(*cur);
	*cur = NULL;
	return rc == MDB_NOTFOUND ? 0 : rc;
}

/* The main table holds the names of the others: walk it, then each. Both
 * cursors are the caller's, to close after a fault too. */
static int
walk_all(MDB_txn *txn, size_t last_pgno, MDB_cursor *volatile *cur,
         MDB_cursor *volatile *names)
{
	MDB_dbi main_dbi;
	MDB_val key, val;
	int rc = mdb_dbi_open(txn, NULL, 0, &main_dbi);

	if (rc == 0)
		rc = walk_free_list(txn, last_pgno, cur);
	if (rc == 0)
		rc = walk_table(txn, main_dbi, cur);
	if (rc)
		return rc;
	rc = mdb_cursor_open(txn, main_dbi, (MDB_cursor **)names);
	if (rc)
		return rc;
	while (rc == 0 &&
	       (rc = mdb_cursor_get(*names, &key, &val, MDB_NEXT)) == 0) {
		char name[64];
		MDB_dbi dbi;

		if (key.mv_size == 0 || key.mv_size >= sizeof(name)) {
			rc = MDB_CORRUPTED;
			break;
		}
		memcpy(name, key.mv_data, key.mv_size);
		name[key.mv_size] = 0;
		rc = mdb_dbi_open(txn, name, 0, &dbi);
		if (rc == 0)
			rc = walk_table(txn, dbi, cur);
	}
	mdb_cursor_close(*names);
	*names = NULL;
	return rc == MDB_NOTFOUND ? 0 : rc;
}

int
lmdb_check_opened(MDB_env *env, const char *dir, char *why)
{
	struct sigaction fault = {.sa_handler = on_fault}, old_bus, old_segv;
	MDB_txn *volatile txn = NULL;
	MDB_cursor *volatile cur = NULL, *volatile names = NULL;
	volatile int result = 0;
	MDB_envinfo info;
	MDB_stat st;
	off_t size;
	int rc;

	if (mdb_env_info(env, &info) || mdb_env_stat(env, &st) ||
	    data_size(dir, &size) < 0) {
		snprintf(why, 128, "its header cannot be read");
		return -EPROTO;
	}
	if ((off_t)((info.me_last_pgno + 1) * st.ms_psize) > size) {
		snprintf(why, 128,
		         "data.mdb is %lld bytes, its header says %zu: "
		         "cut short",
		         (long long)size,
		         (info.me_last_pgno + 1) * st.ms_psize);
		return -EPROTO;
	}
	sigemptyset(&fault.sa_mask);
	sigaction(SIGBUS, &fault, &old_bus);
	sigaction(SIGSEGV, &fault, &old_segv);
	if (sigsetjmp(fault_jump, 1)) {
		snprintf(why, 128, "a page points outside the file");
		result = -EPROTO;
	} else {
		rc = mdb_txn_begin(env, NULL, MDB_RDONLY, (MDB_txn **)&txn);
		if (rc == 0)
			rc = walk_all(txn, info.me_last_pgno, &cur, &names);
		if (rc) {
			snprintf(why, 128, "%s", mdb_strerror(rc));
			result = -EPROTO;
		}
	}
	sigaction(SIGBUS, &old_bus, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	if (cur)
		mdb_cursor_close(cur);
	if (names)
		mdb_cursor_close(names);
	if (txn)
		mdb_txn_abort(txn);
	return result;
}
