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

#include "decision_port.h"
#include "gateway-int.h"
#include "grey_store.h"
#include "log.h"

/* The store commits when this many writes wait or this long passed since
 * the last commit: a kill -9 loses at most that much, and greylisting
 * only ever answers 4xx, so nothing is lost but a retry. */
#define STORE_COMMIT_PENDING 10000
#define STORE_COMMIT_MS 200

/* The decider's own state (gw->decider). */
struct decider {
	struct gateway *gw; /* what it decides with: the store, the sets */
	struct grey *grey; /* the greylist's decision, its lists and
			      counters (policy/grey.c) */
	struct gateway_decision *starting; /* a decision being fetched in
					      this call (done inline?) */
	uint64_t store_committed_ms; /* the last commit, loop ms */
	bool must_commit; /* a pass or trap waits: commit it this turn */
	uint64_t set_changes_failed; /* that did not reach the kernel */
	/* who acts on each decision (the nft sets: follow_sets.c) */
	struct decider_listener listeners[DECIDER_LISTENERS_MAX];
	size_t nlisteners;
};

int
gateway_decider_listen(struct gateway *gw, const struct decider_listener *l)
{
	struct decider *d = gw->decider;

	if (d->nlisteners == DECIDER_LISTENERS_MAX)
		return -ENOSPC;
	d->listeners[d->nlisteners++] = *l;
	return 0;
}

struct decider *
gateway_decider_new(struct gateway *gw)
{
	struct decider *d = calloc(1, sizeof(struct decider));

	if (d)
		d->gw = gw;
	return d;
}

void
gateway_decider_free(struct decider *d)
{
	if (d)
		grey_free(d->grey);
	free(d);
}

int
gateway_decider_open(struct gateway *gw)
{
	gw->decider->grey = grey_new(&gw->cfg->grey, gw->store);
	return gw->decider->grey ? 0 : -ENOMEM;
}

void
gateway_decider_close(struct gateway *gw)
{
	grey_free(gw->decider->grey);
	gw->decider->grey = NULL;
}

struct grey *
gateway_grey(const struct gateway *gw)
{
	return gw->decider ? gw->decider->grey : NULL;
}

void
gateway_commit_sync(struct gateway *gw)
{
	gw->decider->must_commit = true;
	gateway_commit(gw);
}

uint64_t
gateway_set_changes_failed(const struct gateway *gw)
{
	return gw->decider->set_changes_failed;
}

void
gateway_prefix_of(const struct grey_client *c, struct nftset_prefix *p)
{
	p->family = c->family;
	p->prefix = c->prefix;
	memcpy(p->bytes, c->bytes, 16);
}

/* What a client sees when a change of the kind's set does not reach the
 * kernel. */
static const char *
consequence(const char *what)
{
	if (!strcmp(what, "pass"))
		return "it meets the tarpit again until one of its attempts "
		       "puts it back";
	if (!strcmp(what, "trap"))
		return "it is greylisted, not trapped, until it is trapped "
		       "again";
	if (!strcmp(what, "forget"))
		return "it stays passed until its element times out";
	return "that network is greylisted until the next reload or "
	       "allow puts it back";
}

void
gateway_set_failed(struct gateway *gw, const char *what, const char *key,
                   int err)
{
	if (++gw->decider->set_changes_failed % 100 != 1)
		return;
	log_warnx("nft: %s of %s did not reach the kernel's set (%s): %s "
	          "(%" PRIu64 " set change(s) failed so far)",
	          what, key, strerror(-err), consequence(what),
	          gw->decider->set_changes_failed);
}

static void
on_nft_refused(enum nftset_kind kind, const struct ip_range *range, int err,
               void *ctx)
{
	char text[IP_RANGE_TEXT_MAX];

	gateway_set_failed(ctx, kind == NFTSET_PASS   ? "pass"
	                        : kind == NFTSET_TRAP ? "trap"
	                                              : "allow",
	                   ip_range_format(range, text), err);
}

/* Sends the queued set changes now (a pass must reach the kernel at
 * once); commits the store when enough waits or time passed, or when
 * force is set. */
static void
commit_now(struct gateway *gw, bool force)
{
	uint64_t now = loop_now_ms(gw->loop);
	int r;

	if (gw->nft && nftset_queued(gw->nft)) {
		size_t queued = nftset_queued(gw->nft);

		r = nftset_commit(gw->nft, on_nft_refused, gw);
		if (r < 0) {
			gw->decider->set_changes_failed += queued;
			log_warnx("nft: %zu set change(s) not sent (%s): the "
			          "passed clients among them meet the tarpit "
			          "again until one of their attempts puts them "
			          "back",
			          queued, strerror(-r));
		}
	}
	if (store_pending(gw->store) &&
	    (force || gw->decider->must_commit ||
	     store_pending(gw->store) >= STORE_COMMIT_PENDING ||
	     now - gw->decider->store_committed_ms >= STORE_COMMIT_MS)) {
		gw->decider->store_committed_ms = now;
		r = gw->decider->must_commit ? store_sync(gw->store)
		                    : store_flush(gw->store);
		gw->decider->must_commit = false;
		if (r < 0)
			log_warnx("store: commit failed: %s", strerror(-r));
	}
}

void
gateway_commit(struct gateway *gw)
{
	commit_now(gw, true);
}

void
gateway_commit_turn(struct gateway *gw)
{
	commit_now(gw, false);
}

static void
log_decision(struct gateway *gw, const struct grey_attempt *a,
             const struct grey_decision *d)
{
	const struct config *cfg = gw->cfg;
	char ip[INET6_ADDRSTRLEN], key[64], sig[GREY_SIGNALS_MAX + 64] = "";
	/* Before any transaction: no sender, no recipient to say. */
	bool tls = a->kind != GREY_ATTEMPT_RCPT;

	inet_ntop(a->client.family, a->client.bytes, ip, sizeof(ip));
	if (a->signals && a->signals[0])
		snprintf(sig, sizeof(sig), ", signals=%s", a->signals);
	if (d->unknown_rcpts) {
		size_t n = strlen(sig);

		snprintf(sig + n, sizeof(sig) - n, ", unknown_recipients=%u",
		         d->unknown_rcpts);
	}
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
			         cfg->grey.pass_ttl_sec, sig);
		else
			log_info("action=pass, reason=%s, client=%s, key=%s, "
			         "helo=%s, sender=%s, recipient=%s, delay=%u, "
			         "ttl=%u%s",
			         grey_reason_name(d->reason), ip, key, a->helo,
			         a->sender, a->rcpt, d->delay_sec,
			         cfg->grey.pass_ttl_sec, sig);
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
			         "the MTA asks the policy door about the others)",
			         grey_reason_name(d->reason), ip, a->helo,
			         a->sender, a->rcpt);
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
apply(struct gateway *gw, const struct grey_attempt *a,
      const struct grey_decision *d)
{
	struct decider *dc = gw->decider;

	if ((d->action == GREY_PASS && d->reason != GREY_REASON_PASSED) ||
	    d->action == GREY_REFRESH || d->action == GREY_TRAP)
		dc->must_commit = true;
	for (size_t i = 0; i < dc->nlisteners; i++)
		dc->listeners[i].decided(dc->listeners[i].ctx, a, d);
}

void
gateway_decided(struct gateway *gw, const struct grey_attempt *a,
                const struct grey_decision *d, bool log)
{
	apply(gw, a, d);
	/* A pass reaches the kernel in the same turn it is decided. */
	gateway_commit_turn(gw);
	if (log)
		log_decision(gw, a, d);
}

/* A decision waiting for its records: the attempt's copy (its strings
 * the caller's only for the call), the records, whom to tell. On a store
 * that completes inline it lives on the stack for the call. */
struct gateway_decision {
	struct gateway *gw;
	struct grey_attempt a;
	char helo[256], sender[GREY_ADDR_MAX], rcpt[GREY_ADDR_MAX];
	char signals[GREY_SIGNALS_MAX];
	struct grey_records w;
	bool log, on_heap;
	gateway_decided_fn *done; /* or: */
	decision_done_fn *done_plain;
	void *ctx;
};

static void
finish(struct gateway_decision *q, int r, const struct grey_decision *d)
{
	struct gateway *gw = q->gw;

	if (gw->decider->starting == q)
		gw->decider->starting = NULL;
	if (q->done)
		q->done(gw, r, &q->a, d, q->ctx);
	else if (q->done_plain)
		q->done_plain(r, &q->a, d, q->ctx);
	if (q->on_heap)
		free(q);
}

/* The records are in (or the store could tell nothing: r < 0): decided
 * by the policy's pure half, written back, acted on. */
static void
on_records(struct grey_records *w, int r, void *ctx)
{
	struct gateway_decision *q = ctx;
	struct gateway *gw = q->gw;
	struct grey_records before;
	struct grey_decision d;

	if (r >= 0) {
		before = *w;
		r = grey_decide_records(gateway_grey(gw), &q->a, w, &d);
	}
	if (r >= 0)
		r = grey_store_apply(gw->records, &before, w, &d);
	if (r < 0) {
		/* (a store closing, or one too busy, counts its own) */
		if (r != -ECANCELED && r != -EBUSY)
			log_warnx("store: %s; decision skipped: the client "
			          "gets the plain deferral",
			          strerror(-r));
		finish(q, r, NULL);
		return;
	}
	gateway_decided(gw, &q->a, &d, q->log);
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

/* Either done (with gw) or done_plain tells the asker. */
static struct gateway_decision *
decide_async(struct gateway *gw, struct grey_attempt *a, bool log,
             gateway_decided_fn *done, decision_done_fn *done_plain,
             void *ctx)
{
	struct gateway_decision here, *heap = NULL, *q = &here;

	if (!a->now)
		a->now = loop_wall_sec(gw->loop);
	if (!gw->records->completes_inline) {
		q = heap = malloc(sizeof(*heap));
		if (!heap) {
			if (done)
				done(gw, -ENOMEM, a, NULL, ctx);
			else
				done_plain(-ENOMEM, a, NULL, ctx);
			return NULL;
		}
	}
	q->gw = gw;
	q->a = *a;
	q->log = log;
	q->on_heap = q != &here;
	q->done = done;
	q->done_plain = done_plain;
	q->ctx = ctx;
	if (q->on_heap)
		keep_strings(q);
	grey_records_prepare(gateway_grey(gw), &q->a, &q->w);
	gw->decider->starting = q;
	grey_store_fetch(gw->records, &q->w, q->a.now, on_records, q);
	if (gw->decider->starting != q)
		return NULL; /* decided already */
	gw->decider->starting = NULL;
	if (!heap) {
		/* A store that said it completes inline did not: its
		 * answer would come to a record gone with this call. */
		log_warnx("store %s: a fetch did not complete inline",
		          grey_store_name(gw->records));
		abort();
	}
	return heap;
}

struct gateway_decision *
gateway_decide_async(struct gateway *gw, struct grey_attempt *a, bool log,
                     gateway_decided_fn *done, void *ctx)
{
	return decide_async(gw, a, log, done, NULL, ctx);
}

static struct gateway_decision *
port_ask(void *ctx, struct grey_attempt *a, bool log, decision_done_fn *done,
         void *done_ctx)
{
	struct decider *dc = ctx;

	return decide_async(dc->gw, a, log, NULL, done, done_ctx);
}

static void
port_cancel(struct gateway_decision *q)
{
	if (q) {
		q->done = NULL;
		q->done_plain = NULL;
	}
}

void
gateway_decide_cancel(struct gateway_decision *q)
{
	port_cancel(q);
}

struct decision_port
gateway_decision_port(struct gateway *gw)
{
	return (struct decision_port){port_ask, port_cancel, gw->decider};
}

/* (gateway_decide's answer, from an inline store) */
struct told {
	bool told;
	int r;
	struct grey_decision *d;
};

static void
tell(struct gateway *gw, int r, const struct grey_attempt *a,
     const struct grey_decision *d, void *ctx)
{
	struct told *t = ctx;

	(void)gw;
	(void)a;
	t->told = true;
	t->r = r;
	if (d)
		*t->d = *d;
}

int
gateway_decide(struct gateway *gw, struct grey_attempt *a,
               struct grey_decision *d)
{
	struct told t = {.d = d};

	a->now = loop_wall_sec(gw->loop);
	gateway_decide_async(gw, a, true, tell, &t);
	return t.told ? t.r : -EINPROGRESS;
}

void
gateway_verdict_of(const struct gateway *gw, int r,
                   const struct grey_decision *d, struct tarpit_verdict *v)
{
	v->action = TARPIT_GREYLIST;
	v->wait_sec = gw->cfg->grey.delay_sec;
	v->handoff_fd = -1;
	v->greeted = false;
	v->refused = 0;
	if (r < 0)
		return; /* the store failed: the plain deferral */
	switch (d->action) {
	case GREY_GREYLIST:
		v->wait_sec = d->wait_sec;
		break;
	case GREY_PASS:
	case GREY_REFRESH:
	case GREY_ALLOWED:
		v->action = TARPIT_PASS;
		break;
	case GREY_TRAP:
		v->action = TARPIT_TRAP;
		break;
	case GREY_REFUSE:
		v->action = TARPIT_REFUSE;
		v->refused = d->reason == GREY_REASON_SPF_FAIL
		                     ? TARPIT_REFUSED_SPF
		                     : TARPIT_REFUSED_RECIPIENT;
		break;
	case GREY_ACTION_NONE:
		break;
	}
}
