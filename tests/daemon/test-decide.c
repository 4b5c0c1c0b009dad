// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of greygated's decision service with a fake clock and a real
 * store (no kernel sets): it decides by its own clock, never by a time
 * the child sent, so a confused or compromised child cannot move a
 * deadline; and each tarpit question gets the verdict that matches the
 * decision (the seconds left, a pass, a trap); its listeners hear each
 * decision. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "check.h"
#include "decider_rig.h"
#include "log.h"
#include "log_capture.h"

#define T0 1700000000

static struct decider_rig rig;
static struct timesrc_fake clock_;

static void
setup(void)
{
	timesrc_fake_init(&clock_, T0);
	decider_rig_open(&rig, "decide", &clock_.base);
}

static void
teardown(void)
{
	decider_rig_close(&rig);
}

/* A tarpit attempt as the child sends it, with its packet time. */
static struct grey_decision
attempt(const char *from, int64_t child_says)
{
	struct grey_attempt a = {.kind = GREY_ATTEMPT_RCPT,
	                         .now = child_says,
	                         .helo = "c.test",
	                         .sender = from,
	                         .rcpt = "bob@example.org",
	                         .path = GREY_PATH_TARPIT};
	struct grey_decision d;

	a.client.family = AF_INET;
	inet_pton(AF_INET, "198.51.100.7", a.client.bytes);
	CHECK_INT(decider_decide(rig.decider, &a, &d), 0);
	return d;
}

static int
first_seen(const struct grey_client *c, const char *sender, const char *rcpt,
           const struct store_triplet *t, void *ctx)
{
	*(int64_t *)ctx = t->first_seen;
	return 0;
}

static void
test_own_clock(void)
{
	struct grey_decision d;
	int64_t seen = 0;

	setup();
	/* The child claims a time a day ahead: the triplet is first seen
	 * when greygated says it is. */
	d = attempt("a@a.test", T0 + 86400);
	CHECK_INT(d.action, GREY_GREYLIST);
	CHECK_INT(d.wait_sec, rig.cfg.grey.delay_sec);
	CHECK_INT(store_each_triplet(rig.store, first_seen, &seen), 0);
	CHECK_INT(seen, T0);
	/* A retry the child dates past the delay, before greygated's clock
	 * got there: still early. */
	timesrc_fake_advance_ms(&clock_, 100 * 1000);
	d = attempt("a@a.test", T0 + 100000);
	CHECK_INT(d.action, GREY_GREYLIST);
	CHECK_INT(d.reason, GREY_REASON_EARLY_RETRY);
	CHECK_INT(d.wait_sec, rig.cfg.grey.delay_sec - 100);
	/* And one it dates in the past, once greygated's clock passed the
	 * delay: it passes. */
	timesrc_fake_advance_ms(&clock_,
	                        (uint64_t)rig.cfg.grey.delay_sec * 1000);
	d = attempt("a@a.test", 0);
	CHECK_INT(d.action, GREY_PASS);
	CHECK_INT(d.reason, GREY_REASON_RETRY_PASSED);
	CHECK_INT(d.delay_sec, rig.cfg.grey.delay_sec + 100);
	CHECK_INT(d.expires, T0 + 100 + rig.cfg.grey.delay_sec +
	                             rig.cfg.grey.pass_ttl_sec);
	teardown();
}

static void
test_verdicts(void)
{
	struct tarpit_verdict v;
	struct grey_decision d;

	setup();
	d = attempt("b@a.test", 0);
	decider_verdict_of(rig.decider, 0, &d, &v);
	CHECK_INT(v.action, TARPIT_GREYLIST);
	CHECK_INT(v.wait_sec, rig.cfg.grey.delay_sec);
	timesrc_fake_advance_ms(&clock_, 42 * 1000);
	d = attempt("b@a.test", 0);
	decider_verdict_of(rig.decider, 0, &d, &v);
	CHECK_INT(v.wait_sec, rig.cfg.grey.delay_sec - 42);
	timesrc_fake_advance_ms(&clock_,
	                        (uint64_t)rig.cfg.grey.delay_sec * 1000);
	d = attempt("b@a.test", 0);
	decider_verdict_of(rig.decider, 0, &d, &v);
	CHECK_INT(v.action, TARPIT_PASS);
	CHECK(!v.gated);
	/* An exempt recipient of a client not passed: handed over gated
	 * (the tarpit asks about the others), unless the MTA asks the
	 * policy door about them. */
	d.action = GREY_ALLOWED;
	d.reason = GREY_REASON_RECIPIENT_EXEMPT;
	decider_verdict_of(rig.decider, 0, &d, &v);
	CHECK_INT(v.action, TARPIT_PASS);
	CHECK(v.gated);
	rig.cfg.policy.mta_asks = true;
	decider_rig_reconfigure(&rig);
	decider_verdict_of(rig.decider, 0, &d, &v);
	CHECK(!v.gated);
	rig.cfg.policy.mta_asks = false;
	decider_rig_reconfigure(&rig);
	d.reason = GREY_REASON_ALLOW_LIST;
	decider_verdict_of(rig.decider, 0, &d, &v);
	CHECK(!v.gated);
	d.action = GREY_TRAP;
	decider_verdict_of(rig.decider, 0, &d, &v);
	CHECK_INT(v.action, TARPIT_TRAP);
	/* The store failed: the plain deferral. */
	decider_verdict_of(rig.decider, -EIO, &d, &v);
	CHECK_INT(v.action, TARPIT_GREYLIST);
	CHECK_INT(v.wait_sec, rig.cfg.grey.delay_sec);
	teardown();
}

static int
one_pass(const struct grey_client *c, const struct store_client *rec,
	 void *ctx)
{
	*(struct store_client *)ctx = *rec;
	return 0;
}

/* A passed client's sessions on the fast path (to EHLO): each is counted
 * and refreshes the pass, at most once per refresh_interval; RCPTs in
 * clear count as deliveries; a STARTTLS answered there is counted as
 * TLS. A client not passed is nothing to a visit. */
static void
test_fast_path_visits(void)
{
	struct grey_attempt v = {.kind = GREY_ATTEMPT_VISIT, .helo = "c",
				 .path = GREY_PATH_FAST};
	struct grey_attempt tls = v;
	struct store_client rec;
	struct grey_decision d;

	setup();
	rig.cfg.grey.refresh_interval_sec = 60;
	decider_rig_reconfigure(&rig);
	v.client.family = AF_INET;
	inet_pton(AF_INET, "198.51.100.7", v.client.bytes);
	tls.kind = GREY_ATTEMPT_STARTTLS;
	tls.client = v.client;
	CHECK_INT(decider_decide(rig.decider, &v, &d), 0);
	CHECK_INT(d.action, GREY_ACTION_NONE);
	/* Passed by a retry... */
	attempt("c@a.test", 0);
	timesrc_fake_advance_ms(&clock_,
	                        (uint64_t)rig.cfg.grey.delay_sec * 1000);
	CHECK_INT(attempt("c@a.test", 0).action, GREY_PASS);
	/* ... then a visit within the interval: counted, not refreshed. */
	CHECK_INT(decider_decide(rig.decider, &v, &d), 0);
	CHECK_INT(d.action, GREY_PASS);
	CHECK_INT(d.reason, GREY_REASON_PASSED);
	CHECK_INT(decider_decide(rig.decider, &tls, &d), 0);
	timesrc_fake_advance_ms(&clock_, 61 * 1000);
	CHECK_INT(decider_decide(rig.decider, &v, &d), 0);
	CHECK_INT(d.action, GREY_REFRESH);
	CHECK_INT(d.expires,
	          loop_wall_sec(rig.loop) + rig.cfg.grey.pass_ttl_sec);
	CHECK_INT(store_each_client(rig.store, STORE_PASS, 0, one_pass, &rec),
	          0);
	CHECK_INT(rec.sessions, 2);
	CHECK_INT(rec.expires, d.expires);
	CHECK_INT(
	        grey_get_counters(decider_grey(rig.decider))->fastpath_sessions,
	        2);
	CHECK_INT(grey_get_counters(decider_grey(rig.decider))->fastpath_tls,
	          1);
	teardown();
}

/* What a listener of the decider hears (the sets are one). */
struct heard {
	int calls;
	struct grey_decision last;
	int64_t last_now;
};

static void
on_decided(void *ctx, const struct grey_attempt *a,
           const struct grey_decision *d)
{
	struct heard *h = ctx;

	h->calls++;
	h->last = *d;
	h->last_now = a->now;
}

/* Every decision reaches every listener, in its turn, at the decider's
 * clock (issue 30: the sets are the decider's listener, not its callee);
 * no more than DECIDER_LISTENERS_MAX are taken. */
static void
test_listeners_hear_each_decision(void)
{
	struct heard one = {0}, two = {0};
	struct decider_listener l1 = {.decided = on_decided, .ctx = &one};
	struct decider_listener l2 = {.decided = on_decided, .ctx = &two};

	setup();
	CHECK_INT(decider_listen(rig.decider, &l1), 0);
	CHECK_INT(decider_listen(rig.decider, &l2), 0);
	attempt("l@l.test", T0 + 5000);
	CHECK_INT(one.calls, 1);
	CHECK_INT(two.calls, 1);
	CHECK_INT(one.last.action, GREY_GREYLIST);
	CHECK_INT(one.last_now, T0);
	timesrc_fake_advance_ms(&clock_,
	                        (uint64_t)rig.cfg.grey.delay_sec * 1000);
	attempt("l@l.test", 0);
	CHECK_INT(one.calls, 2);
	CHECK_INT(two.calls, 2);
	CHECK_INT(one.last.action, GREY_PASS);
	CHECK_INT(one.last.expires,
	          T0 + rig.cfg.grey.delay_sec + rig.cfg.grey.pass_ttl_sec);
	CHECK_INT(decider_listen(rig.decider, &l1), 0);
	CHECK_INT(decider_listen(rig.decider, &l1), 0);
	CHECK_INT(decider_listen(rig.decider, &l1), -ENOSPC);
	teardown();
}

static void
test_log_lines(void)
{
	struct grey_attempt tls = {.kind = GREY_ATTEMPT_STARTTLS,
	                           .helo = "tls.test",
	                           .path = GREY_PATH_TARPIT};
	struct grey_decision d;

	setup();
	rig.cfg.grey.delay_sec = 300;
	rig.cfg.grey.pass_ttl_sec = 86400;
	decider_rig_reconfigure(&rig);
	CHECK_INT(grey_trap_add(decider_grey(rig.decider), "trap@example.org"),
	          0);
	log_set_level(LOG_LEVEL_INFO);
	log_capture_start();
	decider_rig_attempt(&rig, "198.51.100.7", "alice@a.test",
	                    "bob@example.org");
	log_capture_expect("action=greylist, reason=new, client=198.51.100.7, "
	             "helo=c.test, sender=alice@a.test, "
	             "recipient=bob@example.org, delay=300\n");
	timesrc_fake_advance_ms(&clock_, 100 * 1000);
	decider_rig_attempt(&rig, "198.51.100.7", "alice@a.test",
	                    "bob@example.org");
	log_capture_expect("action=greylist, reason=early-retry, "
	             "client=198.51.100.7, helo=c.test, sender=alice@a.test, "
	             "recipient=bob@example.org, delay=200\n");
	timesrc_fake_advance_ms(&clock_, 200 * 1000);
	decider_rig_attempt(&rig, "198.51.100.7", "alice@a.test",
	                    "bob@example.org");
	log_capture_expect("action=pass, reason=retry-passed, client=198.51.100.7, "
	             "key=198.51.100.0/24, helo=c.test, sender=alice@a.test, "
	             "recipient=bob@example.org, delay=300, ttl=86400\n");
	/* a STARTTLS: its address (issue 56), no sender to say */
	tls.client.family = AF_INET;
	inet_pton(AF_INET, "203.0.113.5", tls.client.bytes);
	CHECK_INT(decider_decide(rig.decider, &tls, &d), 0);
	log_capture_expect("action=greylist, reason=new, "
	             "client=203.0.113.5, key=203.0.113.5/32, helo=tls.test, "
	             "at=starttls, delay=300\n");
	/* a greytrap */
	d = decider_rig_attempt(&rig, "192.0.2.66", "spam@x.test",
	                        "trap@example.org");
	CHECK_INT(d.action, GREY_TRAP);
	log_capture_expect("action=trap, reason=trapped, client=192.0.2.66, "
	             "helo=c.test, sender=spam@x.test, "
	             "recipient=trap@example.org\n");
	/* a passed client's own next mail: debug only, not a line here */
	log_capture_start();
	decider_rig_attempt(&rig, "198.51.100.9", "carol@a.test",
	                    "dave@example.org");
	CHECK_STR(log_capture_text(), "");
	log_capture_stop();
	log_set_level(LOG_LEVEL_WARN);
	teardown();
}

/* The store's writes wait for store_commit_interval: at the default a
 * pass is committed at once; with five minutes (a router's flash) the
 * pass waits with the rest until five minutes passed since the last
 * commit, then all go at once. */
static void
pass_after_a_commit(void)
{
	struct grey_decision d;

	attempt("c@a.test", 0);
	timesrc_fake_advance_ms(&clock_,
	                        (uint64_t)rig.cfg.grey.delay_sec * 1000 + 1000);
	attempt("other@a.test", 0); /* (a write, committed now) */
	decider_commit(rig.decider);
	CHECK_INT(store_pending(rig.store), 0);
	d = attempt("c@a.test", 0);
	CHECK_INT(d.action, GREY_PASS);
}

static void
test_commit_interval(void)
{
	setup();
	pass_after_a_commit();
	CHECK_INT(store_pending(rig.store), 0);
	teardown();

	setup();
	rig.cfg.store_commit_ms = 5 * 60 * 1000;
	decider_rig_reconfigure(&rig);
	pass_after_a_commit();
	CHECK(store_pending(rig.store) > 0);
	timesrc_fake_advance_ms(&clock_, 4 * 60 * 1000);
	decider_commit_turn(rig.decider);
	CHECK(store_pending(rig.store) > 0);
	timesrc_fake_advance_ms(&clock_, 60 * 1000);
	decider_commit_turn(rig.decider);
	CHECK_INT(store_pending(rig.store), 0);
	teardown();
}

int
main(void)
{
	log_init("test-decide", false, LOG_LEVEL_WARN);
	RUN(test_own_clock);
	RUN(test_verdicts);
	RUN(test_commit_interval);
	RUN(test_fast_path_visits);
	RUN(test_listeners_hear_each_decision);
	RUN(test_log_lines);
	return 0;
}
