/* SPDX-License-Identifier: GPL-2.0-or-later */
/* greygated on a store shared by several gateways ([gateway] store =
 * redis://...): each decision's records fetched in one round trip, the
 * policy's decision acted on at once (sets, log, verdict), its writes
 * sent after it; the keys agreed with the other gateways at every
 * connection; every pass and trap decided elsewhere followed into the
 * sets (the stream), and the sets rebuilt from the keys when the stream
 * cannot tell what was missed.
 *
 * Redis trouble is not mail trouble: while Redis does not answer (or
 * this gateway yields), an attempt is decided from nothing but the
 * passes known here and the triplets it greylisted lately (a new client
 * is greylisted, and its retry here passes; a passed one is in the
 * kernel's sets and never asks, or asks through the policy door and is
 * found among every gateway's passes this gateway keeps in memory), what was decided
 * waits in memory (bounded) and is written when Redis is back; it is
 * said once, then every minute. */
#ifndef GREYGATE_SHARED_H
#define GREYGATE_SHARED_H

#include "policy.h"
#include "store_url.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Every key greygate writes in Redis starts with this. */
#define SHARED_KEYS "gg:"

/* The shared store's part of the settings (config_shared_part), copied
 * at its start. A reload changes none of it: where the store is and
 * how to reach it need a restart, the greylist's agreed keys (delay,
 * retry_window, pass_ttl) are kept while the store is shared, and the
 * gateway's name stays the one it claimed there. */
struct shared_settings {
	char store[300];           /* [gateway] store, as written */
	struct store_url store_url; /* ... parsed */
	char password_file[256];   /* [gateway] store_password_file */
	char store_dir[256];       /* [gateway] store_dir: the instance id */
	char hostname[256];        /* [gateway] hostname: its name there */
	struct grey_config grey;   /* [greylist]: agreed with the others */
};

struct allow_runtime;
struct grey_store;
struct loop;
struct shared;

/* Where the run-time allow entries this gateway holds come from (they
 * are written into a store that lacks them: a new or emptied Redis). */
struct shared_allow_source {
	const struct allow_runtime *(*entries)(void *ctx, size_t *n);
	void *ctx;
};

/*
 * shared_open - connect to the Redis cfg names and agree on the keys;
 * waits up to a few seconds for that at start. A Redis that does not
 * answer is not an error (greygated starts, greylisting new clients,
 * and agrees once it answers); a Redis that holds other keys is.
 * @cfg: its part of the settings (copied)
 * @out: the store, set at once (also when this fails: close it)
 * Return: 0, or -errno with err set (512 bytes).
 */
int shared_open(struct loop *loop, const struct shared_settings *cfg,
                const struct shared_allow_source *allow,
                struct grey_store **out, char *err);

/* shared_close - what waits to be written is lost (said); pending
 * decisions are told -ECANCELED. NULL ok. */
void shared_close(struct shared *sh);



#endif
