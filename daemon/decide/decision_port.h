/* SPDX-License-Identifier: GPL-2.0-or-later */
/* How a service asks for a decision without knowing who decides: an
 * attempt in, a decision out (made and acted on: the store, the sets, one
 * log line). The decider (decide.c) gives one (decider_port);
 * the policy door asks through it. A header only: whoever includes it
 * depends on nothing of greygated's. */
#ifndef GREYGATE_DECISION_PORT_H
#define GREYGATE_DECISION_PORT_H

#include <stdbool.h>

struct gateway_decision;
struct grey_attempt;
struct grey_decision;

/* Told once a decision is made and acted on: r 0 with d, or -errno (d
 * NULL: nothing decided; the asker's plain deferral). a and d are valid
 * during the call only. */
typedef void decision_done_fn(int r, const struct grey_attempt *a,
                              const struct grey_decision *d, void *ctx);

struct decision_port {
	/* ask - decide a (at a->now, or now if 0) and tell done: inside
	 * the call on a store that completes inline, later on one that
	 * answers later; log: one log line for it (the door logs its
	 * own). Return: a handle for cancel while done is still to come,
	 * or NULL (told already). */
	struct gateway_decision *(*ask)(void *ctx, struct grey_attempt *a,
	                                bool log, decision_done_fn *done,
	                                void *done_ctx);
	/* cancel - done will not be told (its ctx is going away); the
	 * decision itself goes on. NULL is fine. */
	void (*cancel)(struct gateway_decision *q);
	void *ctx;
};

#endif
