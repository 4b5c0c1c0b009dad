/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The passes a gateway on a shared store knows of: every gateway's, as
 * the stream and the rebuilds bring them, and its own as it decides
 * them. While Redis does not answer, a passed client that asks (through
 * the policy door, where no kernel set stands before it) is still
 * decided as passed from them. In memory only (79 bytes a pass:
 * tests/store/test-shared-passes.c measures it). */
#ifndef GREYGATE_SHARED_PASSES_H
#define GREYGATE_SHARED_PASSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"

struct shared_passes;

/* shared_passes_new - none known yet. Return: NULL (errno) or them. */
struct shared_passes *shared_passes_new(void);

/* shared_passes_free - NULL ok. */
void shared_passes_free(struct shared_passes *p);

/* shared_passes_put - the pass of key, from since (0: not known) to
 * expires; one known already keeps the earlier since and the later end.
 * Return: 0 or -ENOMEM. */
int shared_passes_put(struct shared_passes *p, const struct grey_client *key,
                      int64_t since, int64_t expires);

/* shared_passes_forget - key's pass is no more (greygatectl forget). */
void shared_passes_forget(struct shared_passes *p,
                          const struct grey_client *key);

/* shared_passes_find - key's pass if it lasts past now, as the record
 * the policy decides from: since (if not known, what it must have been
 * at the latest: expires less pass_ttl), expires, refreshed (expires
 * less pass_ttl: when it was made or last refreshed); the counts 0.
 * Return: true if found. */
bool shared_passes_find(const struct shared_passes *p,
                        const struct grey_client *key, int64_t now,
                        uint32_t pass_ttl_sec, struct store_client *out);

/* shared_passes_purge - the ended ones dropped. Return: how many. */
size_t shared_passes_purge(struct shared_passes *p, int64_t now);

/* One known pass, as listed. */
struct shared_pass {
	struct grey_client key;
	int64_t since, expires;
};

/* shared_passes_list - every pass lasting past now, in a new array (the
 * caller frees it). Return: 0 or -ENOMEM. */
int shared_passes_list(const struct shared_passes *p, int64_t now,
                       struct shared_pass **out, size_t *n);

/* shared_passes_count - how many are known. */
size_t shared_passes_count(const struct shared_passes *p);

#endif
