/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The triplets this gateway greylisted lately (issue 29 D2): when the
 * shared store comes back emptied, they are written back beside the
 * passes, so that a sender first seen a moment before does not wait a
 * whole delay again. Only this gateway's own (each gateway of the site
 * writes back its own), only the latest SHARED_WAITING_MAX (a ring: a
 * flood of bots pushes the oldest out, and those senders wait once
 * more, as they all did before), only those still inside the retry
 * window when listed. In memory only. */
#ifndef GREYGATE_SHARED_WAITING_H
#define GREYGATE_SHARED_WAITING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"

/* Triplets kept, at most (about 120 bytes each with typical
 * addresses: tests/store/test-shared-waiting.c). */
#define SHARED_WAITING_MAX 8192u

struct shared_waiting;

/* shared_waiting_new - none kept; at most max (0: SHARED_WAITING_MAX).
 * Return: NULL (errno) or them. */
struct shared_waiting *shared_waiting_new(size_t max);

/* shared_waiting_free - NULL ok. */
void shared_waiting_free(struct shared_waiting *w);

/* shared_waiting_put - the triplet (key, sender, recipient) as written
 * here, t its record; the oldest goes when full. Return: 0 or -ENOMEM
 * (not kept). */
int shared_waiting_put(struct shared_waiting *w, const struct grey_client *key,
                       const char *sender, const char *rcpt,
                       const struct store_triplet *t);

/* One kept triplet, as listed (its strings in the same allocation). */
struct shared_waiting_triplet {
	struct grey_client key;
	struct store_triplet t;
	const char *sender, *rcpt;
};

/* shared_waiting_list - the kept triplets first seen after since,
 * oldest first, each allocated (*out an array of n pointers: free each,
 * then the array). Return: 0 or -ENOMEM. */
int shared_waiting_list(const struct shared_waiting *w, int64_t since,
                        struct shared_waiting_triplet ***out, size_t *n);

/* shared_waiting_find - the latest record kept of the triplet (key,
 * sender, recipient), into *t: what this gateway decides from while the
 * shared store is away or it yields (issue 57: each retry there was a
 * first sight, so mail whose retries all reached it never passed). One
 * pass over the ring, newest first: only then. Return: true if kept. */
bool shared_waiting_find(const struct shared_waiting *w,
                         const struct grey_client *key, const char *sender,
                         const char *rcpt, struct store_triplet *t);

/* shared_waiting_count - how many are kept. */
size_t shared_waiting_count(const struct shared_waiting *w);

#endif
