// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of greygated's housekeeping as a service, through
 * housekeeping.h only, with a fake clock over a real decider and LMDB
 * store: the report's figures count on across a restart (from when they
 * began, not from the restart), and from zero after a reset, which a
 * restart keeps; once a second, triplets unseen for the retry window are
 * purged (said in one line), run-time allow entries past their end go
 * (out of the policy too), and a stopped housekeeping does nothing; with
 * store_snapshot_dir, the store's snapshot is its own: none while nothing
 * was written, the last one at close. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "config_parts.h"
#include "check.h"
#include "decider_rig.h"
#include "housekeeping.h"
#include "log.h"
#include "log_capture.h"

static struct housekeeping_settings hk_part; /* (its part) */
static struct allow_settings allow_part;     /* (theirs) */

#define T0 1700000000

static struct timesrc_fake clock_;
static struct decider_rig rig;
static struct metrics_figures *figures;
static struct allow_lists *allow;
static struct housekeeping *hk;
static void
open_hk(void)
{
	config_housekeeping_part(&rig.cfg, &hk_part);
	hk = housekeeping_open(&(struct housekeeping_links){rig.loop,
	                               rig.store, rig.decider, figures},
	                       &hk_part, false);
	CHECK(hk);
}

static void
setup(void)
{
	timesrc_fake_init(&clock_, T0);
	decider_rig_open(&rig, "housekeeping", &clock_.base);
	snprintf(rig.cfg.allow_dir, sizeof(rig.cfg.allow_dir), "%s/allow.d",
	         rig.dir);
	figures = metrics_figures_new(T0);
	CHECK(figures);
	config_allow_part(&rig.cfg, &allow_part);
	allow = allow_lists_open(&(struct allow_links){
	        rig.loop, rig.decider, NULL, rig.records}, &allow_part);
	CHECK(allow);
	CHECK_INT(allow_lists_reload(allow), 0);
	open_hk();
	log_capture_start();
}

static void
teardown(void)
{
	log_capture_stop();
	housekeeping_stop(hk);
	housekeeping_close(hk);
	allow_lists_close(allow);
	metrics_figures_free(figures);
	decider_rig_close(&rig);
}

/* Seconds pass on the fake clock, the loop turning each one. */
static void
pass_sec(unsigned sec)
{
	for (unsigned i = 0; i < sec; i++) {
		timesrc_fake_advance_ms(&clock_, 1000);
		loop_run_once(rig.loop, 0);
	}
}

static enum grey_action
attempt(const char *addr, const char *rcpt)
{
	return decider_rig_attempt(&rig, addr, "alice@example.com", rcpt)
	        .action;
}

/* greygated stopping and starting again over the same store. */
static void
restart(void)
{
	housekeeping_stop(hk);
	housekeeping_close(hk); /* (the figures saved) */
	decider_commit_sync(rig.decider);
	decider_close(rig.decider);
	CHECK_INT(decider_open(rig.decider, rig.store), 0);
	open_hk();
}

static void
test_figures_count_on_across_a_restart(void)
{
	setup();
	CHECK_INT(housekeeping_stats_since(hk), T0);
	attempt("198.51.100.7", "bob@example.org");
	attempt("198.51.100.8", "carol@example.org");
	pass_sec(100);
	restart();
	CHECK_INT(housekeeping_stats_since(hk), T0);
	CHECK_INT(grey_get_counters(decider_grey(rig.decider))->attempts, 2);
	log_capture_expect("report: counting on since");
	log_capture_expect("(2 attempts so far)");
	teardown();
}

static void
test_reset_counts_from_zero_and_stays(void)
{
	setup();
	attempt("198.51.100.7", "bob@example.org");
	pass_sec(50);
	housekeeping_stats_reset(hk);
	CHECK_INT(housekeeping_stats_since(hk), T0 + 50);
	CHECK_INT(grey_get_counters(decider_grey(rig.decider))->attempts, 0);
	log_capture_expect("report: counting starts again");
	attempt("198.51.100.8", "bob@example.org");
	restart();
	CHECK_INT(housekeeping_stats_since(hk), T0 + 50);
	CHECK_INT(grey_get_counters(decider_grey(rig.decider))->attempts, 1);
	teardown();
}

/* Unseen for the retry window: purged by the timer, said once. */
static void
test_purge(void)
{
	setup();
	rig.cfg.grey.retry_window_sec = 600; /* (a reload's) */
	config_housekeeping_part(&rig.cfg, &hk_part);
	housekeeping_reconfigure(hk, &hk_part);
	housekeeping_start(hk, rig.records, allow);
	attempt("198.51.100.7", "bob@example.org");
	attempt("198.51.100.8", "carol@example.org");
	CHECK_INT(store_count(rig.store, -1), 2);
	pass_sec(300);
	attempt("198.51.100.9", "dave@example.org");
	pass_sec(301); /* the first two are past the window */
	CHECK_INT(store_count(rig.store, -1), 1);
	log_capture_expect("store: purged 2 triplet(s) unseen for the "
	                     "retry window (600s)");
	log_capture_expect("1 triplet(s), 0 pass(es) and 0 trap(s) kept");
	/* said at most once an hour */
	pass_sec(300);
	CHECK_INT(store_count(rig.store, -1), 0);
	CHECK(!strstr(strstr(log_capture_text(), "store: purged") + 1, "store: purged"));
	teardown();
}

/* A run-time allow entry past its end: gone from the list and the
 * policy at the next tick; none of it once stopped. */
static void
test_allow_entries_end(void)
{
	size_t n;

	setup();
	housekeeping_start(hk, rig.records, allow);
	CHECK_INT(allow_lists_runtime(allow, "203.0.113.0/24", 5, "brief"),
	          0);
	CHECK_INT(attempt("203.0.113.7", "bob@example.org"), GREY_ALLOWED);
	pass_sec(4);
	allow_lists_runtime_entries(allow, &n);
	CHECK_INT(n, 1);
	pass_sec(2);
	allow_lists_runtime_entries(allow, &n);
	CHECK_INT(n, 0);
	CHECK_INT(attempt("203.0.113.8", "bob@example.org"), GREY_GREYLIST);
	/* stopped: an entry past its end stays until started again */
	CHECK_INT(allow_lists_runtime(allow, "198.51.100.0/24", 2, ""), 0);
	housekeeping_stop(hk);
	pass_sec(5);
	allow_lists_runtime_entries(allow, &n);
	CHECK_INT(n, 1);
	teardown();
}

static void
test_last_snapshot_at_close(void)
{
	char *snap = rig.cfg.store_snapshot.dir, file[300];
	struct stat st;

	setup();
	CHECK(housekeeping_snapshots(hk) == NULL); /* (none asked for) */
	housekeeping_stop(hk);
	housekeeping_close(hk);
	CHECK(snprintf(snap, sizeof(rig.cfg.store_snapshot.dir), "%s/snapshot",
	               rig.dir) < (int)sizeof(rig.cfg.store_snapshot.dir));
	CHECK(mkdir(snap, 0700) == 0);
	rig.cfg.store_snapshot.interval_ms = 3600 * 1000;
	open_hk();
	CHECK(housekeeping_snapshots(hk) != NULL);
	CHECK_INT(housekeeping_snapshots(hk)->taken, 0);
	attempt("198.51.100.7", "bob@example.org");
	decider_commit_sync(rig.decider);
	snprintf(file, sizeof(file), "%s/data.mdb", snap);
	CHECK(stat(file, &st) < 0);
	housekeeping_stop(hk);
	housekeeping_close(hk);
	hk = NULL;
	CHECK(stat(file, &st) == 0 && st.st_size > 0);
	teardown();
}

int
main(void)
{
	log_init("test-housekeeping", false, LOG_LEVEL_INFO);
	RUN(test_figures_count_on_across_a_restart);
	RUN(test_reset_counts_from_zero_and_stays);
	RUN(test_purge);
	RUN(test_allow_entries_end);
	RUN(test_last_snapshot_at_close);
	return 0;
}
