// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the LMDB store: records survive a reopen and a kill -9 in the
 * middle of writes; purge removes only what expired, in bounded batches;
 * an unknown schema or a corrupt file is a clear error or is moved aside. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "policy.h"
#include "store.h"

#define T0 1700000000LL

static char dir[64];

static void
mkdir_tmp(void)
{
	snprintf(dir, sizeof(dir), "/tmp/gg-store-XXXXXX");
	CHECK(mkdtemp(dir));
}

static void
rm_tmp(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
}

static struct grey_client
client_n(uint32_t n)
{
	struct grey_client c = {.family = AF_INET, .prefix = 32};

	c.bytes[0] = 198;
	c.bytes[1] = (uint8_t)(n >> 16);
	c.bytes[2] = (uint8_t)(n >> 8);
	c.bytes[3] = (uint8_t)n;
	return c;
}

static void
test_reopen_keeps_records(void)
{
	struct store *s;
	struct store_client rec = {T0, T0 + 100, T0, 3, 0}, got;
	struct store_triplet t = {T0, T0 + 5, 2, 0}, gt;
	struct grey_client c = client_n(7);

	mkdir_tmp();
	CHECK_INT(store_open(dir, false, &s), 0);
	CHECK_INT(store_put_client(s, STORE_PASS, &c, &rec), 0);
	CHECK_INT(store_put_triplet(s, &c, "a@a.test", "b@b.test", &t), 0);
	CHECK_INT(store_pending(s), 2);
	store_close(s);

	CHECK_INT(store_open(dir, false, &s), 0);
	CHECK_INT(store_get_client(s, STORE_PASS, &c, &got), STORE_FOUND);
	CHECK_INT(got.expires, T0 + 100);
	CHECK_INT(got.deliveries, 3);
	CHECK_INT(store_get_client(s, STORE_TRAP, &c, &got), 0);
	CHECK_INT(store_get_triplet(s, &c, "a@a.test", "b@b.test", &gt),
		  STORE_FOUND);
	CHECK_INT(gt.attempts, 2);
	CHECK_INT(store_get_triplet(s, &c, "a@a.test", "x@b.test", &gt), 0);
	CHECK_INT(store_del_client(s, STORE_PASS, &c), STORE_FOUND);
	CHECK_INT(store_del_client(s, STORE_PASS, &c), 0);
	store_close(s);
	rm_tmp();
}

static int
count_live(const struct grey_client *c, const struct store_client *rec,
	   void *ctx)
{
	(*(int *)ctx)++;
	return 0;
}

static void
test_purge_in_bounded_batches(void)
{
	struct store *s;
	int live = 0, total = 0, r;
	struct store_purged purged = {0};

	mkdir_tmp();
	CHECK_INT(store_open(dir, false, &s), 0);
	for (uint32_t i = 0; i < 1000; i++) {
		struct grey_client c = client_n(i);
		/* Even ones expire at T0 + 10, odd ones at T0 + 1000. */
		struct store_client rec = {T0, T0 + (i % 2 ? 1000 : 10), T0, 0, 0};
		struct store_triplet t = {T0, T0 + (i % 2 ? 500 : 0), 1, 0};

		CHECK_INT(store_put_client(s, STORE_PASS, &c, &rec), 0);
		CHECK_INT(store_put_triplet(s, &c, "a@a.test", "b@b.test", &t),
			  0);
	}
	CHECK_INT(store_flush(s), 0);
	CHECK_INT(store_each_client(s, STORE_PASS, T0 + 20, count_live, &live),
		  0);
	CHECK_INT(live, 500);
	/* Triplets live for 100 s after last seen here. */
	r = store_purge(s, T0 + 20, 100, 100, &purged);
	CHECK(r > 0 && r <= 200);
	total = r;
	/* 100 examined per table a call: 1000 records take ten calls. */
	for (int i = 0; i < 12; i++) {
		r = store_purge(s, T0 + 200, 100, 100, &purged);
		CHECK(r >= 0);
		total += r;
	}
	CHECK_INT(total, 1000);
	/* told by table, for greygated's hourly line */
	CHECK_INT(purged.passes, 500);
	CHECK_INT(purged.triplets, 500);
	CHECK_INT(purged.traps, 0);
	CHECK_INT(store_count(s, STORE_PASS), 500);
	CHECK_INT(store_count(s, -1), 500);
	store_close(s);
	rm_tmp();
}

struct walk {
	int n;
	char seen[4][96];
};

static int
note_triplet(const struct grey_client *c, const char *sender,
	     const char *rcpt, const struct store_triplet *rec, void *ctx)
{
	struct walk *w = ctx;

	CHECK(w->n < 4);
	snprintf(w->seen[w->n++], sizeof(w->seen[0]), "%u %s %s %u",
		 (unsigned)c->bytes[3], sender, rcpt, rec->attempts);
	return 0;
}

/* greygatectl list grey walks the triplets; forget drops a client's pass,
 * trap and triplets, and nothing of its neighbours. */
static void
test_walk_triplets_and_forget_client(void)
{
	struct store *s;
	struct store_triplet t = {T0, T0, 1, 0};
	struct store_client rec = {T0, T0 + 100, T0, 0, 0};
	struct grey_client a = client_n(1), b = client_n(2);
	struct walk w = {0};

	mkdir_tmp();
	CHECK_INT(store_open(dir, false, &s), 0);
	CHECK_INT(store_put_triplet(s, &a, "x@a.test", "y@b.test", &t), 0);
	CHECK_INT(store_put_triplet(s, &a, "", "z@b.test", &t), 0);
	t.attempts = 3;
	CHECK_INT(store_put_triplet(s, &b, "x@a.test", "y@b.test", &t), 0);
	CHECK_INT(store_put_client(s, STORE_PASS, &a, &rec), 0);
	CHECK_INT(store_put_client(s, STORE_TRAP, &b, &rec), 0);
	CHECK_INT(store_each_triplet(s, note_triplet, &w), 0);
	CHECK_INT(w.n, 3);
	CHECK_STR(w.seen[0], "1  z@b.test 1");
	CHECK_STR(w.seen[1], "1 x@a.test y@b.test 1");
	CHECK_STR(w.seen[2], "2 x@a.test y@b.test 3");

	CHECK_INT(store_forget_client(s, &a), 3);
	CHECK_INT(store_forget_client(s, &a), 0);
	w.n = 0;
	CHECK_INT(store_each_triplet(s, note_triplet, &w), 0);
	CHECK_INT(w.n, 1);
	CHECK_STR(w.seen[0], "2 x@a.test y@b.test 3");
	CHECK_INT(store_count(s, STORE_TRAP), 1);
	CHECK_INT(store_count(s, STORE_PASS), 0);
	store_close(s);
	rm_tmp();
}

static void
test_unknown_schema_and_corrupt_file(void)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	uint32_t v99 = 99;
	MDB_val key = {6, "schema"}, val = {4, &v99};
	struct store *s;
	char path[128];
	struct dirent *de;
	DIR *d;
	int fd, aside = 0;

	mkdir_tmp();
	CHECK_INT(store_open(dir, false, &s), 0);
	store_close(s);
	CHECK_INT(mdb_env_create(&env), 0);
	mdb_env_set_maxdbs(env, 8);
	CHECK_INT(mdb_env_open(env, dir, 0, 0600), 0);
	CHECK_INT(mdb_txn_begin(env, NULL, 0, &txn), 0);
	CHECK_INT(mdb_dbi_open(txn, "meta", 0, &dbi), 0);
	CHECK_INT(mdb_put(txn, dbi, &key, &val, 0), 0);
	CHECK_INT(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
	CHECK_INT(store_open(dir, false, &s), -EPROTO);

	/* A file of garbage. */
	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0);
	for (int i = 0; i < 64; i++)
		CHECK_INT(write(fd, "garbage!garbage!", 16), 16);
	close(fd);
	CHECK_INT(store_open(dir, false, &s), -EPROTO);
	/* Moved aside: opens empty, the bad file is kept. */
	CHECK_INT(store_open(dir, true, &s), 0);
	CHECK_INT(store_count(s, STORE_PASS), 0);
	store_close(s);
	d = opendir(dir);
	while ((de = readdir(d)))
		aside += strncmp(de->d_name, "data.mdb.bad-", 13) == 0;
	closedir(d);
	CHECK_INT(aside, 1);
	rm_tmp();
}

/* A child writes and flushes record after record, telling the parent each
 * number it committed; the parent kills it with SIGKILL mid-stream. Every
 * record the child reported committed must be there after a reopen. */
static void
test_kill_9_mid_writes(void)
{
	int p[2], status;
	uint32_t n, last = 0;
	pid_t pid;
	struct store *s;

	mkdir_tmp();
	CHECK_INT(pipe(p), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		if (store_open(dir, false, &s) < 0)
			_exit(1);
		for (n = 1;; n++) {
			struct grey_client c = client_n(n);
			struct store_client rec = {T0, T0 + n, T0, n, 0};

			if (store_put_client(s, STORE_PASS, &c, &rec) < 0)
				_exit(1);
			/* Commit every 7th, so kills land between commits
			 * and inside uncommitted batches. */
			if (n % 7 == 0) {
				if (store_flush(s) < 0)
					_exit(1);
				if (write(p[1], &n, sizeof(n)) != sizeof(n))
					_exit(1);
			}
		}
	}
	close(p[1]);
	while (last < 7 * 300 && read(p[0], &n, sizeof(n)) == sizeof(n))
		last = n;
	CHECK_INT(kill(pid, SIGKILL), 0);
	CHECK_INT(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status));
	/* Drain what it reported before it died. */
	while (read(p[0], &n, sizeof(n)) == sizeof(n))
		last = n;
	close(p[0]);

	CHECK_INT(store_open(dir, false, &s), 0);
	for (n = 1; n <= last; n++) {
		struct grey_client c = client_n(n);
		struct store_client got;

		CHECK_INT(store_get_client(s, STORE_PASS, &c, &got),
			  STORE_FOUND);
		CHECK_INT(got.deliveries, n);
	}
	CHECK(store_count(s, STORE_PASS) >= last);
	store_close(s);
	rm_tmp();
}

/* A map far too small for what is written, and no flush: LMDB gives up
 * the transaction at each full map; the journal redoes it in a larger
 * one. Every record is there after the flush and a reopen. */
static void
test_tiny_map_loses_nothing(void)
{
	const struct store_counters *k;
	struct store *s;
	char sender[64];

	mkdir_tmp();
	CHECK_INT(store_open_sized(dir, false, 128 << 10, &s), 0);
	for (uint32_t n = 0; n < 20000; n++) {
		struct grey_client c = client_n(n / 10);
		struct store_triplet t = {T0 + n, T0 + n, 1, 0};

		snprintf(sender, sizeof(sender), "sender-%u@example.org", n);
		CHECK_INT(store_put_triplet(s, &c, sender, "rcpt@example.org",
					    &t),
			  0);
		if (n % 100 == 0) {
			struct store_client pass = {T0, T0 + n, T0, n, 0};

			CHECK_INT(store_put_client(s, STORE_PASS, &c, &pass), 0);
		}
	}
	k = store_get_counters(s);
	CHECK(k->map_grown > 0);
	CHECK(k->replayed > 0);
	CHECK_INT(k->write_errors, 0);
	CHECK_INT(store_flush(s), 0);
	store_close(s);
	CHECK_INT(store_open(dir, false, &s), 0);
	CHECK_INT(store_count(s, -1), 20000);
	CHECK_INT(store_count_clients(s, STORE_PASS, AF_INET), 200);
	for (uint32_t n = 0; n < 20000; n += 997) {
		struct grey_client c = client_n(n / 10);
		struct store_triplet got;

		snprintf(sender, sizeof(sender), "sender-%u@example.org", n);
		CHECK_INT(store_get_triplet(s, &c, sender, "rcpt@example.org",
					    &got),
			  STORE_FOUND);
		CHECK_INT(got.first_seen, T0 + n);
	}
	store_close(s);
	rm_tmp();
}

static int
count_walk(const struct grey_client *c, const char *sender, const char *rcpt,
	   const struct store_triplet *t, void *ctx)
{
	(*(size_t *)ctx)++;
	return 0;
}

static int
count_client(const struct grey_client *c, const struct store_client *rec,
	     void *ctx)
{
	(*(size_t *)ctx)++;
	return 0;
}

/* Opens the store in a child and uses all of it: 0 if it was refused or
 * worked, else how the child ended (a crash: a signal's number + 128). */
static int
open_and_use(bool move_aside)
{
	int status;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		struct store *s;
		size_t n = 0;
		int r = store_open(dir, move_aside, &s);

		if (r == -EPROTO)
			_exit(0);
		if (r < 0)
			_exit(10);
		store_each_triplet(s, count_walk, &n);
		store_each_client(s, STORE_PASS, 0, count_client, &n);
		store_each_client(s, STORE_TRAP, 0, count_client, &n);
		while (store_purge(s, T0 + 10 * 86400, 3600, 1000, NULL) > 0)
			;
		for (uint32_t i = 0; i < 50; i++) {
			struct grey_client c = client_n(i);
			struct store_triplet t = {T0, T0, 1, 0};

			/* (a write refused is a refusal too) */
			if (store_put_triplet(s, &c, "new@example.org", "x@y",
					      &t) < 0)
				_exit(0);
		}
		if (store_flush(s) < 0)
			_exit(0);
		store_close(s);
		_exit(0);
	}
	CHECK_INT(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status)
				 : 128 + WTERMSIG(status);
}

static void
copy_file(const char *from, const char *to, off_t len)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out;
	ssize_t n;
	off_t done = 0;

	CHECK(in >= 0);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(out >= 0);
	while (done < len && (n = read(in, buf, sizeof(buf))) > 0) {
		if (n > len - done)
			n = (ssize_t)(len - done);
		CHECK_INT(write(out, buf, (size_t)n), n);
		done += n;
	}
	close(in);
	close(out);
}

/* The damage greygate met: a file cut at 8 KiB and at 24 KiB, an empty
 * one, and 30 corruptions of 8 random bytes. Each is refused (or set
 * aside with move_aside), never a crash of the process that opens and
 * uses it. */
static void
test_damaged_files_never_crash(void)
{
	char data[128], pristine[128];
	struct store *s;
	struct stat st;
	off_t size;

	mkdir_tmp();
	CHECK_INT(store_open(dir, false, &s), 0);
	for (uint32_t n = 0; n < 5000; n++) {
		struct grey_client c = client_n(n);
		struct store_triplet t = {T0, T0, 1, 0};
		struct store_client pass = {T0, T0 + 100, T0, 1, 0};

		CHECK_INT(store_put_triplet(s, &c, "someone@example.org",
					    "rcpt@example.org", &t),
			  0);
		if (n % 10 == 0)
			CHECK_INT(store_put_client(s, STORE_PASS, &c, &pass),
				  0);
	}
	store_close(s);
	snprintf(data, sizeof(data), "%s/data.mdb", dir);
	snprintf(pristine, sizeof(pristine), "%s/pristine", dir);
	CHECK_INT(stat(data, &st), 0);
	size = st.st_size;
	CHECK(size > 24 * 1024);
	copy_file(data, pristine, size);

	for (off_t cut = 0; cut <= 24 * 1024; cut += 8 * 1024) {
		copy_file(pristine, data, cut);
		CHECK_INT(store_open(dir, false, &s), -EPROTO);
		CHECK(strstr(store_open_why(), cut ? "cut short" : "empty") ||
		      strstr(store_open_why(), "shorter than its header"));
		CHECK_INT(open_and_use(false), 0);
	}
	/* Set aside, and said: never silently empty. */
	copy_file(pristine, data, 8 * 1024);
	CHECK_INT(store_open(dir, true, &s), 0);
	CHECK(strstr(store_open_why(), "cut short: data.mdb.bad-"));
	CHECK_INT(store_count(s, -1), 0);
	store_close(s);

	srand(7);
	for (int i = 0; i < 30; i++) {
		int fd;
		off_t at = (off_t)((unsigned)rand() % (unsigned)(size - 8));
		uint8_t junk[8];

		copy_file(pristine, data, size);
		for (int j = 0; j < 8; j++)
			junk[j] = (uint8_t)rand();
		fd = open(data, O_WRONLY);
		CHECK(fd >= 0);
		CHECK_INT(pwrite(fd, junk, 8, at), 8);
		close(fd);
		if (open_and_use(false) != 0) {
			fprintf(stderr, "corruption at offset %lld ended the "
					"process\n",
				(long long)at);
			CHECK(0);
		}
	}
	rm_tmp();
}

/* An update of a client's record replaces it (and is counted once). */
static void
test_client_update_replaces(void)
{
	struct store *s;
	struct grey_client c = client_n(9);
	struct store_client a = {T0, T0 + 100, T0, 1, 2}, b = {T0, T0 + 900,
							       T0 + 50, 7, 8};
	struct store_client got;

	mkdir_tmp();
	CHECK_INT(store_open(dir, false, &s), 0);
	CHECK_INT(store_put_client(s, STORE_PASS, &c, &a), 0);
	CHECK_INT(store_put_client(s, STORE_PASS, &c, &b), 0);
	CHECK_INT(store_get_client(s, STORE_PASS, &c, &got), STORE_FOUND);
	CHECK_INT(got.expires, T0 + 900);
	CHECK_INT(got.deliveries, 7);
	CHECK_INT(got.sessions, 8);
	CHECK_INT(store_count_clients(s, STORE_PASS, AF_INET), 1);
	CHECK_INT(store_flush(s), 0);
	store_close(s);
	CHECK_INT(store_open(dir, false, &s), 0);
	CHECK_INT(store_get_client(s, STORE_PASS, &c, &got), STORE_FOUND);
	CHECK_INT(got.refreshed, T0 + 50);
	store_close(s);
	rm_tmp();
}

int
main(void)
{
	RUN(test_client_update_replaces);
	RUN(test_tiny_map_loses_nothing);
	RUN(test_damaged_files_never_crash);
	RUN(test_reopen_keeps_records);
	RUN(test_purge_in_bounded_batches);
	RUN(test_walk_triplets_and_forget_client);
	RUN(test_unknown_schema_and_corrupt_file);
	RUN(test_kill_9_mid_writes);
	return 0;
}
