/* SPDX-License-Identifier: GPL-2.0-or-later */
/* greygated on a store shared by several gateways ([gateway] store =
 * redis://...): each decision's records fetched in one round trip, the
 * policy's decision acted on at once (sets, log, verdict), its writes
 * sent after it; the keys agreed with the other gateways at every
 * connection; every pass and trap decided elsewhere followed into the
 * sets (the stream), and the sets rebuilt from the keys when the stream
 * cannot tell what was missed.
 *
 * Redis trouble is not mail trouble: while Redis does not answer, an
 * attempt is decided from nothing but the passes known here (a new
 * client is greylisted; a passed one is in the kernel's sets and never
 * asks, or asks through the policy door and is found among every
 * gateway's passes this gateway keeps in memory), what was decided
 * waits in memory (bounded) and is written when Redis is back; it is
 * said once, then every minute. */
#ifndef GREYGATE_SHARED_H
#define GREYGATE_SHARED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Every key greygate writes in Redis starts with this. */
#define SHARED_KEYS "gg:"

struct gateway;
struct shared;

/*
 * shared_open - connect to the configured Redis and agree on the keys;
 * waits up to a few seconds for that at start. A Redis that does not
 * answer is not an error (greygated starts, greylisting new clients,
 * and agrees once it answers); a Redis that holds other keys is.
 * Return: 0, or -errno with err set (512 bytes).
 */
int shared_open(struct gateway *gw, char *err);

/* shared_close - what waits to be written is lost (said); pending
 * decisions are told -ECANCELED. NULL ok. */
void shared_close(struct shared *sh);

/* What the store is doing, for status and metrics. */
struct shared_status {
	const char *where;      /* the store's URL */
	bool up;                /* connected, authenticated and agreed */
	bool disagreed;         /* the store holds other settings: this
	                           gateway yields (last_error says which) */
	bool following;         /* the stream is read */
	const char *last_error; /* "" if none */
	int64_t down_since;     /* 0 while up */
	uint64_t decisions, from_nothing, busy;
	uint64_t from_known;  /* of from_nothing: a pass known here found */
	uint64_t passes_known; /* every gateway's passes, known here */
	uint64_t restored; /* passes known here written back into the store */
	uint64_t name_clash;   /* 1: another gateway uses this one's name */
	uint64_t writes, writes_failed, waiting, waiting_dropped;
	uint64_t records_bad;
	uint64_t events, own_events, reconciles, reconciled;
	uint64_t allows_sent, allows_failed, allows_taken;
	int64_t lag_ms; /* the last event's age when applied */
};

void shared_get_status(const struct shared *sh, struct shared_status *out);

#endif
