// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the store's snapshot (store_snapshot.h, issue 33: a store on
 * tmpfs spares a router's flash), through its header, with a real LMDB
 * store, real files and the store's real copy thread, on a loop with a
 * fake clock: a snapshot is taken at its interval with store_dir's other
 * files, and not written again while nothing changed (the inode stays);
 * the last one is taken at stop; a store_dir emptied as a reboot empties
 * a tmpfs gets everything back, and a store_dir with its own store keeps
 * it; a snapshot that fails leaves the one before whole and is said; a
 * snapshot folder others may write to is refused. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "log_capture.h"
#include "store_snapshot.h"
#include "timesrc.h"

#define T0 1700000000
#define INTERVAL_MS 60000

static struct timesrc_fake clock_;
static char store_dir[256];
static struct store_snapshot_config cfg;
static struct loop *loop;
static char top[64];

static void
path_of(char *out, const char *dir, const char *name)
{
	snprintf(out, 512, "%s/%s", dir, name);
}

static void
write_text(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	path_of(path, dir, name);
	CHECK((f = fopen(path, "w")));
	fputs(text, f);
	CHECK(fclose(f) == 0);
}

/* The file's text ("" if it is not there). */
static const char *
read_text(const char *dir, const char *name)
{
	static char text[256];
	char path[512];
	FILE *f;
	size_t n = 0;

	path_of(path, dir, name);
	text[0] = 0;
	if ((f = fopen(path, "r"))) {
		n = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
	}
	text[n] = 0;
	return text;
}

static ino_t
inode_of(const char *dir, const char *name)
{
	char path[512];
	struct stat st;

	path_of(path, dir, name);
	return stat(path, &st) == 0 ? st.st_ino : 0;
}

static void
pass(struct store *store, uint8_t third)
{
	struct grey_client c = {AF_INET, 24, {203, 0, third}};
	struct store_client rec = {T0, T0 + 86400, T0, 0, 0};

	CHECK_INT(store_put_client(store, STORE_PASS, &c, &rec), 0);
	CHECK_INT(store_flush(store), 0);
}

static size_t
passes_in(const char *dir)
{
	struct store *store;
	size_t n;

	CHECK_INT(store_open(dir, false, &store), 0);
	n = store_count_clients(store, STORE_PASS, AF_INET);
	store_close(store);
	return n;
}

/* The fake clock moves ms on; the loop turns until the copy's thread
 * is through (real time, 10 s at most) and it is said. */
static void
run_for(struct store_snapshot *snap, uint64_t ms)
{
	const struct store_snapshot_counters *c =
	        store_snapshot_get_counters(snap);
	uint64_t before = c->taken + c->failed + c->skipped;
	struct timespec pause = {0, 10 * 1000 * 1000};

	timesrc_fake_advance_ms(&clock_, ms);
	loop_run_once(loop, 0);
	for (int i = 0; i < 1000 && c->taken + c->failed + c->skipped == before;
	     i++) {
		nanosleep(&pause, NULL);
		timesrc_fake_advance_ms(&clock_, 1000);
		loop_run_once(loop, 0);
	}
	CHECK(c->taken + c->failed + c->skipped > before);
}

static void
setup(void)
{
	timesrc_fake_init(&clock_, T0);
	CHECK((loop = loop_new(&clock_.base)));
	snprintf(top, sizeof(top), "/tmp/gg-snapshot-XXXXXX");
	CHECK(mkdtemp(top));
	memset(&cfg, 0, sizeof(cfg));
	snprintf(store_dir, sizeof(store_dir), "%s/store", top);
	snprintf(cfg.dir, sizeof(cfg.dir),
	         "%s/flash", top);
	cfg.interval_ms = INTERVAL_MS;
	CHECK(mkdir(store_dir, 0700) == 0);
	log_capture_start();
}

static void
teardown(void)
{
	char cmd[128];

	log_capture_stop();
	loop_free(loop);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	CHECK(system(cmd) == 0);
}

/* A store_dir emptied (a reboot on tmpfs). */
static void
reboot(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir -m 700 %s",
	         store_dir, store_dir);
	CHECK(system(cmd) == 0);
}

static void
test_taken_restored(void)
{
	struct store *store;
	struct store_snapshot *snap;
	char err[512] = "", path[512];
	const char *flash = cfg.dir;
	ino_t first;

	setup();
	CHECK_INT(store_snapshot_restore(store_dir, &cfg, err), 0);
	log_capture_expect("holds no snapshot yet: the greylist starts empty");
	CHECK_INT(store_open(store_dir, false, &store), 0);
	write_text(store_dir, "allow-runtime.txt", "198.51.100.0/24 0 x\n");
	write_text(store_dir, "privacy.key", "key\n");
	pass(store, 1);
	CHECK((snap = store_snapshot_start(loop, store_dir, &cfg, store, false)));

	run_for(snap, INTERVAL_MS);
	CHECK_INT(store_snapshot_get_counters(snap)->taken, 1);
	log_capture_expect("store: snapshot written to ");
	CHECK(inode_of(flash, "data.mdb"));
	CHECK_STR(read_text(flash, "allow-runtime.txt"),
	          "198.51.100.0/24 0 x\n");
	CHECK_STR(read_text(flash, "privacy.key"), "key\n");
	CHECK(!inode_of(flash, "lock.mdb"));
	CHECK(!inode_of(flash, ".data.mdb.new"));
	first = inode_of(flash, "data.mdb");

	/* Nothing written since: nothing written to the flash. */
	run_for(snap, INTERVAL_MS);
	CHECK_INT(store_snapshot_get_counters(snap)->skipped, 1);
	CHECK(inode_of(flash, "data.mdb") == first);

	/* Written since: at the stop, the last one has it. */
	pass(store, 2);
	write_text(store_dir, "privacy.key", "key 2\n");
	path_of(path, store_dir, "allow-runtime.txt");
	CHECK(unlink(path) == 0);
	CHECK_INT(store_snapshot_close(snap), 0);
	store_close(store);
	CHECK(inode_of(flash, "data.mdb") != first);
	CHECK_STR(read_text(flash, "privacy.key"), "key 2\n");
	CHECK(!inode_of(flash, "allow-runtime.txt"));
	first = inode_of(flash, "data.mdb");

	reboot();
	CHECK_INT(store_snapshot_restore(store_dir, &cfg, err), 1);
	log_capture_expect("store: restored from the snapshot in ");
	CHECK_INT(passes_in(store_dir), 2);
	CHECK_STR(read_text(store_dir, "privacy.key"), "key 2\n");

	/* Restored and stopped again at once (respawned in a loop): the
	 * snapshot is the store, nothing is written. */
	CHECK_INT(store_open(store_dir, false, &store), 0);
	CHECK((snap = store_snapshot_start(loop, store_dir, &cfg, store, true)));
	CHECK_INT(store_snapshot_close(snap), 0);
	store_close(store);
	CHECK(inode_of(flash, "data.mdb") == first);
	printf("ok: taken at its interval with the other files, not again "
	       "while nothing changed, the last at stop; a reboot's empty "
	       "store_dir gets it all back\n");

	/* A store_dir with its own store keeps it (it is the newer). */
	CHECK_INT(store_open(store_dir, false, &store), 0);
	pass(store, 3);
	store_close(store);
	CHECK_INT(store_snapshot_restore(store_dir, &cfg, err), 0);
	CHECK_INT(passes_in(store_dir), 3);
	printf("ok: a store_dir with its own store keeps it\n");
	teardown();
}

static void
test_failure_keeps_the_one_before(void)
{
	struct store *store;
	struct store_snapshot *snap;
	char err[512] = "", path[512];
	ino_t before;

	setup();
	CHECK_INT(store_snapshot_restore(store_dir, &cfg, err), 0);
	CHECK_INT(store_open(store_dir, false, &store), 0);
	pass(store, 1);
	CHECK((snap = store_snapshot_start(loop, store_dir, &cfg, store, false)));
	run_for(snap, INTERVAL_MS);
	before = inode_of(cfg.dir, "data.mdb");
	CHECK(before);

	/* The copy cannot be opened: a folder where its file goes. */
	path_of(path, cfg.dir, ".data.mdb.new");
	CHECK(mkdir(path, 0700) == 0);
	pass(store, 2);
	run_for(snap, INTERVAL_MS);
	CHECK_INT(store_snapshot_get_counters(snap)->failed, 1);
	log_capture_expect("failed");
	log_capture_expect("the one taken before stays");
	CHECK(inode_of(cfg.dir, "data.mdb") == before);
	CHECK_INT(passes_in(cfg.dir), 1);

	/* The next one, the way clear again, has it. */
	CHECK(rmdir(path) == 0);
	run_for(snap, INTERVAL_MS);
	CHECK_INT(store_snapshot_get_counters(snap)->taken, 2);
	CHECK_INT(store_snapshot_close(snap), 0);
	store_close(store);
	CHECK_INT(passes_in(cfg.dir), 2);
	printf("ok: a failed snapshot is said, the one before stays whole, "
	       "the next one is taken\n");
	teardown();
}

static void
test_folder_refused(void)
{
	char err[512] = "";

	setup();
	CHECK(mkdir(cfg.dir, 0700) == 0);
	CHECK(chmod(cfg.dir, 0777) == 0);
	CHECK_INT(store_snapshot_restore(store_dir, &cfg, err), -EPERM);
	CHECK(strstr(err, "writable by nobody else"));
	printf("ok: a snapshot folder others may write to is refused: %s\n",
	       err);
	teardown();
}

/* A reload's interval (store_snapshot_reconfigure) counts from the
 * reload: its own copy of the settings, not the file's rewritten in
 * place under it. */
static void
test_reconfigured_interval(void)
{
	struct store_snapshot_config longer;
	struct store *store;
	struct store_snapshot *snap;
	const struct store_snapshot_counters *c;
	char err[512] = "";

	setup();
	CHECK_INT(store_snapshot_restore(store_dir, &cfg, err), 0);
	log_capture_expect("holds no snapshot yet: the greylist starts empty");
	CHECK_INT(store_open(store_dir, false, &store), 0);
	pass(store, 1);
	CHECK((snap = store_snapshot_start(loop, store_dir, &cfg, store, false)));
	longer = cfg;
	longer.interval_ms = 3 * INTERVAL_MS;
	cfg.interval_ms = 1; /* (what it was given was copied) */
	store_snapshot_reconfigure(snap, &longer);
	c = store_snapshot_get_counters(snap);
	timesrc_fake_advance_ms(&clock_, 2 * INTERVAL_MS);
	for (int i = 0; i < 20; i++) { /* (a copy begun would end in these) */
		struct timespec pause = {0, 10 * 1000 * 1000};

		loop_run_once(loop, 0);
		nanosleep(&pause, NULL);
		timesrc_fake_advance_ms(&clock_, 1000);
	}
	CHECK_INT(c->taken + c->failed + c->skipped, 0);
	run_for(snap, INTERVAL_MS);
	CHECK_INT(store_snapshot_get_counters(snap)->taken, 1);
	log_capture_expect("store: snapshot written to ");
	CHECK_INT(store_snapshot_close(snap), 0);
	store_close(store);
	printf("ok: a reloaded interval counts from the reload\n");
	teardown();
}

int
main(void)
{
	test_taken_restored();
	test_failure_keeps_the_one_before();
	test_folder_refused();
	test_reconfigured_interval();
	printf("PASS\n");
	return 0;
}
