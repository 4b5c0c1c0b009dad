// SPDX-License-Identifier: GPL-2.0-or-later
/* The decision service: an attempt (from a tarpit session, or the sensor
 * on the fast path) in; greygated's own clock decides it (never a time a
 * child sent); the decision goes to the store, the sets (a pass reaches
 * the kernel in the turn it is decided) and one postgrey-style log line.
 * And the commit of both: the sets' queue at once, the store when a pass
 * or trap waits (synced: a lost pass costs a sender another delay), or
 * enough writes or time piled up. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decide.h"
#include "grey_store.h"
#include "invariant.h"
#include "strbuf.h"
#include "log.h"

/* The store commits by store_commit_due's rule: a kill -9 loses at most
 * store_commit_interval, and greylisting only ever answers 4xx, so
 * nothing is lost but a retry. */

/* The decider's own state. */
struct decider {
	/* what it decides with (borrowed): its clock, the settings, the
	 * LMDB file it commits, the greylist's records (whichever store);
	 * no sets: they commit what its listener queues (nftset_commit.h) */
	struct loop *loop;
	struct decider_settings cfg; /* its own (decider_reconfigure) */
	struct store *store;
	struct grey_store *records;
	struct grey *grey; /* the greylist's decision, its lists and
			      counters (policy/grey.c) */
	struct gateway_decision *starting; /* a decision being fetched in
					      this call (done inline?) */
	uint64_t store_committed_ms; /* the last commit, loop ms */
	bool must_commit; /* a pass or trap waits: commit it this turn */
	struct decider_fetch_latency fetch; /* the store's, each decision */
	/* who acts on each decision (the nft sets: follow_sets.c) */
	struct decider_listener listeners[DECIDER_LISTENERS_MAX];
	size_t nlisteners;
};

int
decider_listen(struct decider *d, const struct decider_listener *l)
{
	if (d->nlisteners == DECIDER_LISTENERS_MAX)
		return -ENOSPC;
	d->listeners[d->nlisteners++] = *l;
	return 0;
}

struct decider *
decider_new(struct loop *loop, const struct decider_settings *s)
{
	struct decider *d = calloc(1, sizeof(struct decider));

	if (d) {
		d->loop = loop;
		d->cfg = *s;
		/* (the interval counts from the start, whatever the clock's
		 * origin) */
		d->store_committed_ms = loop_now_ms(loop);
	}
	return d;
}

void
decider_free(struct decider *d)
{
	if (d)
		grey_free(d->grey);
	free(d);
}

int
decider_open(struct decider *d, struct store *store)
{
	d->store = store;
	d->grey = grey_new(&d->cfg.grey);
	return d->grey ? 0 : -ENOMEM;
}

void
decider_reconfigure(struct decider *d, const struct decider_settings *s)
{
	d->cfg = *s;
	if (d->grey)
		grey_set_config(d->grey, &s->grey);
}

void
decider_close(struct decider *d)
{
	grey_free(d->grey);
	d->grey = NULL;
}

void
decider_use_records(struct decider *d, struct grey_store *records)
{
	d->records = records;
}

struct grey *
decider_grey(const struct decider *d)
{
	return d ? d->grey : NULL;
}

void
decider_commit_sync(struct decider *d)
{
	d->must_commit = true;
	decider_commit(d);
}

/* Commits the store when enough waits or time passed, or when force is
 * set. (The sets send their own: nftset_commit.h.) */
static void
commit_now(struct decider *d, bool force)
{
	uint64_t now = loop_now_ms(d->loop);
	int r;

	if (d->store &&
	    store_commit_due(store_pending(d->store), force, d->must_commit,
	                     now, d->store_committed_ms,
	                     d->cfg.commit_ms)) {
		d->store_committed_ms = now;
		r = d->must_commit ? store_sync(d->store)
		                   : store_flush(d->store);
		d->must_commit = false;
		if (r < 0)
			log_warnx("store: commit failed: %s", strerror(-r));
	}
}

void
decider_commit(struct decider *d)
{
	commit_now(d, true);
}

void
decider_commit_turn(struct decider *d)
{
	commit_now(d, false);
}

/* A pass's time to live as decided (a trusted client's is its own,
 * issue 56); a pass no set holds (the door's own): pass_ttl. */
static uint32_t
pass_ttl_of(const struct decider_settings *cfg, const struct grey_attempt *a,
            const struct grey_decision *d)
{
	return d->expires > a->now ? (uint32_t)(d->expires - a->now)
	                           : cfg->grey.pass_ttl_sec;
}

static void
log_decision(const struct decider *dc, const struct grey_attempt *a,
             const struct grey_decision *d)
{
	const struct decider_settings *cfg = &dc->cfg;
	char ip[INET6_ADDRSTRLEN], key[64], sig[GREY_SIGNALS_MAX + 64];
	struct strbuf b;
	/* Before any transaction: no sender, no recipient to say. */
	bool tls = a->kind != GREY_ATTEMPT_RCPT;

	inet_ntop(a->client.family, a->client.bytes, ip, sizeof(ip));
	strbuf_init(&b, sig, sizeof(sig));
	if (a->signals && a->signals[0])
		strbuf_add(&b, ", signals=%s", a->signals);
	if (d->unknown_rcpts)
		strbuf_add(&b, ", unknown_recipients=%u", d->unknown_rcpts);
	grey_client_format(&d->client, key, sizeof(key));
	switch (d->action) {
	case GREY_GREYLIST:
		if (tls)
			log_info("action=greylist, reason=%s, client=%s, "
			         "key=%s, helo=%s, at=starttls, delay=%u%s",
			         grey_reason_name(d->reason), ip, key, a->helo,
			         d->wait_sec, sig);
		else
			log_info("action=greylist, reason=%s, client=%s, "
			         "helo=%s, sender=%s, recipient=%s, delay=%u%s",
			         grey_reason_name(d->reason), ip, a->helo,
			         a->sender, a->rcpt, d->wait_sec, sig);
		break;
	case GREY_PASS:
		if (d->reason == GREY_REASON_PASSED)
			log_debug("action=pass, reason=passed, client=%s, "
			          "key=%s",
			          ip, key);
		else if (tls)
			log_info("action=pass, reason=%s, client=%s, key=%s, "
			         "helo=%s, ttl=%u%s",
			         grey_reason_name(d->reason), ip, key, a->helo,
			         pass_ttl_of(cfg, a, d), sig);
		else
			log_info("action=pass, reason=%s, client=%s, key=%s, "
			         "helo=%s, sender=%s, recipient=%s, delay=%u, "
			         "ttl=%u%s",
			         grey_reason_name(d->reason), ip, key, a->helo,
			         a->sender, a->rcpt, d->delay_sec,
			         pass_ttl_of(cfg, a, d), sig);
		break;
	case GREY_REFRESH:
		log_info("action=refresh, reason=%s, client=%s, key=%s, ttl=%u",
		         grey_reason_name(d->reason), ip, key,
		         cfg->grey.pass_ttl_sec);
		break;
	case GREY_TRAP:
		if (tls)
			log_info("action=trap, reason=trapped, client=%s, "
			         "helo=%s",
			         ip, a->helo);
		else
			log_info("action=trap, reason=trapped, client=%s, "
			         "helo=%s, sender=%s, recipient=%s",
			         ip, a->helo, a->sender, a->rcpt);
		break;
	case GREY_ALLOWED:
		if (d->reason == GREY_REASON_TLS_HANDED)
			log_info("action=handoff, reason=%s, client=%s, "
			         "helo=%s (in TLS to the MTA, unpassed: it asks "
			         "the policy door per recipient)",
			         grey_reason_name(d->reason), ip, a->helo);
		else if (d->reason == GREY_REASON_RECIPIENT_EXEMPT)
			log_info("action=handoff, reason=%s, client=%s, "
			         "helo=%s, sender=%s, recipient=%s (unpassed: "
			         "%s about the others)",
			         grey_reason_name(d->reason), ip, a->helo,
			         a->sender, a->rcpt,
			         cfg->mta_asks
			                 ? "the MTA asks the policy door"
			                 : "the tarpit asks");
		else
			log_debug("action=allow, reason=allow-list, client=%s, "
			          "sender=%s, recipient=%s",
			          ip, a->sender, a->rcpt);
		break;
	case GREY_REFUSE:
		log_info("action=refuse, reason=%s, client=%s, helo=%s, "
		         "sender=%s, recipient=%s%s",
		         grey_reason_name(d->reason), ip, a->helo, a->sender,
		         a->rcpt, sig);
		break;
	case GREY_ACTION_NONE:
		break;
	}
}

/* A new pass, a refresh or a trap is committed to the store this turn;
 * the listeners act on the decision (the sets: with the time it has
 * left). */
static void
apply(struct decider *dc, const struct grey_attempt *a,
      const struct grey_decision *d)
{
	if ((d->action == GREY_PASS && d->reason != GREY_REASON_PASSED) ||
	    d->action == GREY_REFRESH || d->action == GREY_TRAP)
		dc->must_commit = true;
	for (size_t i = 0; i < dc->nlisteners; i++)
		dc->listeners[i].decided(dc->listeners[i].ctx, a, d);
}

void
decider_decided(struct decider *dc, const struct grey_attempt *a,
                const struct grey_decision *d, bool log)
{
	apply(dc, a, d);
	/* (the store's commit when due; a pass reaches the kernel in the
	 * same turn, before the loop waits: nftset_commit.h) */
	decider_commit_turn(dc);
	if (log)
		log_decision(dc, a, d);
}

/* A decision waiting for its records: the attempt's copy (its strings
 * the caller's only for the call), the records, whom to tell. On a store
 * that completes inline it lives on the stack for the call. */
struct gateway_decision {
	struct decider *dc;
	struct grey_attempt a;
	char helo[256], sender[GREY_ADDR_MAX], rcpt[GREY_ADDR_MAX];
	char signals[GREY_SIGNALS_MAX];
	struct grey_records w;
	bool log, on_heap;
	uint64_t fetched_us; /* when its records were asked for */
	decision_done_fn *done;
	void *ctx;
};

/* From 100 µs (LMDB's pages in memory) to a second (a Redis away). */
const uint32_t decider_fetch_bounds_us[DECIDER_FETCH_BOUNDS] = {
        100, 500, 1000, 5000, 10000, 50000, 100000, 500000, 1000000};

/* (the monotonic clock, not the loop's: a fetch is often under a ms) */
static uint64_t
monotonic_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void
count_fetch(struct decider_fetch_latency *h, uint64_t us)
{
	for (int i = 0; i < DECIDER_FETCH_BOUNDS; i++)
		if (us <= decider_fetch_bounds_us[i])
			h->le[i]++;
	h->le[DECIDER_FETCH_BOUNDS]++;
	h->count++;
	h->sum_us += us;
}

const struct decider_fetch_latency *
decider_fetch_latency(const struct decider *d)
{
	return &d->fetch;
}

static void
finish(struct gateway_decision *q, int r, const struct grey_decision *d)
{
	if (q->dc->starting == q)
		q->dc->starting = NULL;
	if (q->done)
		q->done(r, &q->a, d, q->ctx);
	if (q->on_heap)
		free(q);
}

/* The records are in (or the store could tell nothing: r < 0): decided
 * by the policy's pure half, written back, acted on. */
static void
on_records(struct grey_records *w, int r, void *ctx)
{
	struct gateway_decision *q = ctx;
	struct decider *dc = q->dc;
	struct grey_records before;
	struct grey_decision d;

	count_fetch(&dc->fetch, monotonic_us() - q->fetched_us);
	if (r >= 0) {
		before = *w;
		r = grey_decide_records(dc->grey, &q->a, w, &d);
	}
	if (r >= 0)
		r = grey_store_apply(dc->records, &before, w, &d);
	if (r < 0) {
		/* (a store closing, or one too busy, counts its own) */
		if (r != -ECANCELED && r != -EBUSY)
			log_warnx("store: %s; decision skipped: the client "
			          "gets the plain deferral",
			          strerror(-r));
		finish(q, r, NULL);
		return;
	}
	decider_decided(dc, &q->a, &d, q->log);
	finish(q, 0, &d);
}

/* The attempt's strings, copied where they outlive the caller's. */
static void
keep_strings(struct gateway_decision *q)
{
	const struct grey_attempt *a = &q->a;

	snprintf(q->helo, sizeof(q->helo), "%s", a->helo ? a->helo : "");
	snprintf(q->sender, sizeof(q->sender), "%s",
	         a->sender ? a->sender : "");
	snprintf(q->rcpt, sizeof(q->rcpt), "%s", a->rcpt ? a->rcpt : "");
	snprintf(q->signals, sizeof(q->signals), "%s",
	         a->signals ? a->signals : "");
	q->a.signals = q->signals;
	q->a.helo = q->helo;
	q->a.sender = q->sender;
	q->a.rcpt = q->rcpt;
}

struct gateway_decision *
decider_decide_async(struct decider *dc, struct grey_attempt *a, bool log,
                     decision_done_fn *done, void *ctx)
{
	struct gateway_decision here, *heap = NULL, *q = &here;

	if (!a->now)
		a->now = loop_wall_sec(dc->loop);
	if (!dc->records->completes_inline) {
		q = heap = malloc(sizeof(*heap));
		if (!heap) {
			done(-ENOMEM, a, NULL, ctx);
			return NULL;
		}
	}
	q->dc = dc;
	q->a = *a;
	q->log = log;
	q->on_heap = q != &here;
	q->done = done;
	q->ctx = ctx;
	if (q->on_heap)
		keep_strings(q);
	grey_records_prepare(dc->grey, &q->a, &q->w);
	dc->starting = q;
	q->fetched_us = monotonic_us();
	grey_store_fetch(dc->records, &q->w, q->a.now, on_records, q);
	if (dc->starting != q)
		return NULL; /* decided already */
	dc->starting = NULL;
	if (!heap) {
		/* A store that said it completes inline did not: its
		 * answer would come to a record gone with this call. */
		log_warnx("store %s: a fetch did not complete inline",
		          grey_store_name(dc->records));
		UNREACHABLE("an inline store's fetch left pending");
	}
	return heap;
}

static struct gateway_decision *
port_ask(void *ctx, struct grey_attempt *a, bool log, decision_done_fn *done,
         void *done_ctx)
{
	return decider_decide_async(ctx, a, log, done, done_ctx);
}

void
decider_decide_cancel(struct gateway_decision *q)
{
	if (q)
		q->done = NULL;
}

struct decision_port
decider_port(struct decider *d)
{
	return (struct decision_port){port_ask, decider_decide_cancel, d};
}

/* (decider_decide's answer, from an inline store) */
struct told {
	bool told;
	int r;
	struct grey_decision *d;
};

static void
tell(int r, const struct grey_attempt *a, const struct grey_decision *d,
     void *ctx)
{
	struct told *t = ctx;

	(void)a;
	t->told = true;
	t->r = r;
	if (d)
		*t->d = *d;
}

int
decider_decide(struct decider *dc, struct grey_attempt *a,
               struct grey_decision *d)
{
	struct told t = {.d = d};

	a->now = loop_wall_sec(dc->loop);
	decider_decide_async(dc, a, true, tell, &t);
	return t.told ? t.r : -EINPROGRESS;
}

void
decider_verdict_of(const struct decider *dc, int r,
                   const struct grey_decision *d, struct tarpit_verdict *v)
{
	v->action = TARPIT_GREYLIST;
	v->wait_sec = dc->cfg.grey.delay_sec;
	v->handoff_fd = -1;
	v->greeted = false;
	v->refused = 0;
	v->gated = false;
	if (r < 0)
		return; /* the store failed: the plain deferral */
	switch (d->action) {
	case GREY_GREYLIST:
		v->wait_sec = d->wait_sec;
		break;
	case GREY_PASS:
	case GREY_REFRESH:
		v->action = TARPIT_PASS;
		break;
	case GREY_ALLOWED:
		v->action = TARPIT_PASS;
		/* An exempt recipient of a client not passed: handed over
		 * gated, unless the MTA asks the door about the others. */
		v->gated = d->reason == GREY_REASON_RECIPIENT_EXEMPT &&
		           !dc->cfg.mta_asks;
		break;
	case GREY_TRAP:
		v->action = TARPIT_TRAP;
		break;
	case GREY_REFUSE:
		v->action = TARPIT_REFUSE;
		v->refused = d->reason == GREY_REASON_SPF_FAIL
		                     ? TARPIT_REFUSED_SPF
		             : d->reason == GREY_REASON_SENDER_DOMAIN
		                     ? TARPIT_REFUSED_SENDER_DOMAIN
		             : d->reason == GREY_REASON_SENDER_NULL_MX
		                     ? TARPIT_REFUSED_SENDER_NULL_MX
		                     : TARPIT_REFUSED_RECIPIENT;
		break;
	case GREY_ACTION_NONE:
		break;
	}
}
