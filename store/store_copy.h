/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Moving a greylist between stores: from this gateway's LMDB into a
 * shared Redis (a site going from one gateway to several), and back.
 * Only live records go: triplets seen within the retry window, passes
 * and traps not yet ended. Each runs the loop until it is done (for
 * greygated --store-copy, not for a running gateway). */
#ifndef GREYGATE_STORE_COPY_H
#define GREYGATE_STORE_COPY_H

#include <stdint.h>

#include "policy.h"
#include "store.h"

struct loop;
struct rconn;

struct store_copy_counts {
	uint64_t triplets, passes, traps; /* copied */
	uint64_t skipped;                 /* expired: left behind */
	uint64_t bad;                     /* unreadable in Redis: left */
	uint64_t failed;                  /* writes that failed */
};

/*
 * store_copy_to_redis - every live record of from into the shared store
 * on c, each written as a decision's writes are: merged with what Redis
 * holds (earliest first sight, latest end), expiring by itself, and
 * passes and traps appended to the stream, so running gateways put them
 * in their sets. (Deliveries counted on a pass add up: copied twice, they
 * count twice.)
 * Return: 0, or -errno (the counts say how far it went).
 */
int store_copy_to_redis(struct store *from, struct loop *loop, struct rconn *c,
                        const char *prefix, const struct grey_config *cfg,
                        const char *gateway, int64_t now,
                        struct store_copy_counts *counts);

/*
 * store_copy_from_redis - every live record of the shared store on c
 * into to (replacing records of the same keys), committed.
 * @triplet_ttl_sec: a triplet last seen longer ago is left behind
 * Return: 0, or -errno.
 */
int store_copy_from_redis(struct loop *loop, struct rconn *c,
                          const char *prefix, struct store *to, int64_t now,
                          uint32_t triplet_ttl_sec,
                          struct store_copy_counts *counts);

#endif
