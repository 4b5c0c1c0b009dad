/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The decider: greygated's decision service (decide.c). An attempt in;
 * greygated's own clock decides it over the greylist's records; the
 * decision goes to the store, to the listeners (the nft sets) and one
 * postgrey-style log line. It owns the store's commit (when a pass or
 * trap waits); the sets own theirs (nftset_commit.h). Made with what it
 * decides with (its links), nothing of the gateway's beyond them. */
#ifndef GREYGATE_DECIDE_H
#define GREYGATE_DECIDE_H

#include <stdbool.h>
#include <stdint.h>

#include "decision_port.h"
#include "policy.h"
#include "loop.h"
#include "store.h"
#include "tarpit.h"

struct decider;
struct grey_store;

/* The decider's part of the settings (config_decider_part). */
struct decider_settings {
	struct grey_config grey; /* [greylist] */
	bool mta_asks;           /* [policy] mta_asks: a STARTTLS handed
				    over is the MTA's to greylist */
	uint32_t commit_ms;      /* [gateway] store_commit_interval */
};

/* decider_new - a decider deciding by loop's clock (borrowed) with s
 * (copied: decider_reconfigure brings a reload's). Return: NULL
 * (ENOMEM). decider_free: NULL is fine. */
struct decider *decider_new(struct loop *loop,
                            const struct decider_settings *s);

/* decider_reconfigure - a reload's settings, the greylist's with them,
 * from the next decision on. */
void decider_reconfigure(struct decider *d, const struct decider_settings *s);
void decider_free(struct decider *d);

/* decider_open - the greylist's decision (struct grey) over store, the
 * LMDB file the decider commits (borrowed). Return: 0 or -ENOMEM.
 * decider_close - the greylist gone (none open is fine). */
int decider_open(struct decider *d, struct store *store);
void decider_close(struct decider *d);

/* decider_use_records - the greylist's records, whichever store holds
 * them (borrowed; NULL: none, before it is open or after it is freed). */
void decider_use_records(struct decider *d, struct grey_store *records);


/* decider_grey - the greylist: its lists, counters and settings, for
 * those who report them or change them (allow lists, exempt recipients
 * and traps at a reload); NULL before it is open. */
struct grey *decider_grey(const struct decider *d);

/* decider_decide - decide on one attempt with the decider's clock
 * (a->now is set here) and act on it: the store, the sets (a pass reaches
 * the kernel in this turn), one log line. On a store that completes
 * inline only (the tests').
 * Return: 0 with *dec set, -errno (the store failed; nothing done), or
 * -EINPROGRESS (a store that answers later: use decider_decide_async). */
int decider_decide(struct decider *d, struct grey_attempt *a,
                   struct grey_decision *dec);

/* decider_decide_async - decide a (at a->now, or now if 0) on the
 * records in use, act on it (sets; one log line if log), and tell done:
 * inside the call on a store that completes inline, from the loop on one
 * that answers later.
 * Return: a handle for decider_decide_cancel while done is still to
 * come, or NULL (told already). */
struct gateway_decision *decider_decide_async(struct decider *d,
                                              struct grey_attempt *a, bool log,
                                              decision_done_fn *done,
                                              void *ctx);

/* decider_decide_cancel - done will not be told (its ctx is going away);
 * the decision itself goes on. NULL is fine. */
void decider_decide_cancel(struct gateway_decision *q);

/* decider_port - the decider as a service that only asks sees it
 * (decision_port.h: the policy door). */
struct decision_port decider_port(struct decider *d);

/* Who acts on each decision the decider makes (the nft sets), told in
 * the turn it is made, before the turn's commit. a and dec are valid
 * during the call only. */
struct decider_listener {
	void (*decided)(void *ctx, const struct grey_attempt *a,
	                const struct grey_decision *dec);
	void *ctx;
};
#define DECIDER_LISTENERS_MAX 4

/* decider_listen - l (copied) is told every decision from now.
 * Return: 0, or -ENOSPC (DECIDER_LISTENERS_MAX already). */
int decider_listen(struct decider *d, const struct decider_listener *l);

/* decider_decided - act on a decision made elsewhere (a release): the
 * listeners (at once), the commit, one log line if log. */
void decider_decided(struct decider *d, const struct grey_attempt *a,
                     const struct grey_decision *dec, bool log);

/* decider_verdict_of - what a waiting tarpit session is told of a
 * decision (r: the decision's return; a failure is the plain deferral). */
void decider_verdict_of(const struct decider *d, int r,
                        const struct grey_decision *dec,
                        struct tarpit_verdict *v);


/* How long the store took to give a decision its records (from the
 * fetch to the records: LMDB within the call, Redis a round trip), as a
 * histogram; the bounds in microseconds. */
#define DECIDER_FETCH_BOUNDS 9
extern const uint32_t decider_fetch_bounds_us[DECIDER_FETCH_BOUNDS];
struct decider_fetch_latency {
	uint64_t le[DECIDER_FETCH_BOUNDS + 1]; /* cumulative; the last +Inf */
	uint64_t count;
	uint64_t sum_us;
};

/* decider_fetch_latency - since the start. */
const struct decider_fetch_latency *
decider_fetch_latency(const struct decider *d);

/* decider_commit - commit the store now; _sync: and synced to disk;
 * _turn: commit it if a pass or trap waits, or enough writes or time
 * piled up. */
void decider_commit(struct decider *d);
void decider_commit_sync(struct decider *d);
void decider_commit_turn(struct decider *d);


#endif
