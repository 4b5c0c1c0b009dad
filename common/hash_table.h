/* SPDX-License-Identifier: GPL-2.0-or-later */
/* greygate's one hash table (issue 58): intrusive (a node in each
 * entry, no allocation an entry), chained, its hash SipHash-1-3 under a
 * key drawn when the table is made, so that a client choosing what it
 * sends (its IPv6 addresses, the names it invents) cannot choose
 * collisions; it doubles its buckets as it fills (a failure to grow
 * only lengthens chains). The caller keeps the hash in the node and
 * compares its own key along the chain:
 *
 *	uint64_t h = hash_table_hash(&t, &addr, sizeof(addr));
 *	for (struct hash_node *n = hash_table_chain(&t, h); n; n = n->next)
 *		if (n->hash == h && same(entry_of(n), &addr)) ...
 */
#ifndef GREYGATE_HASH_TABLE_H
#define GREYGATE_HASH_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "siphash.h"

struct hash_node {
	struct hash_node *next;
	uint64_t hash;
};

struct hash_table {
	struct hash_node **buckets;
	size_t mask;  /* buckets - 1 (a power of two) */
	size_t count; /* nodes in it */
	struct siphash_key key;
};

/* hash_table_init - empty, about n entries' room at first (it grows),
 * under a random key. Return: 0 or -ENOMEM. */
int hash_table_init(struct hash_table *t, size_t n);

/* hash_table_free - its buckets (its entries are the caller's: it
 * must be empty; one left breaks an invariant, invariant.h). */
void hash_table_free(struct hash_table *t);

/* hash_table_hash - the hash of key[0..len) in t. */
uint64_t hash_table_hash(const struct hash_table *t, const void *key,
                         size_t len);

/* hash_table_add - n, with hash h (from hash_table_hash). */
void hash_table_add(struct hash_table *t, struct hash_node *n, uint64_t h);

/* hash_table_chain - the first node of hash h's chain (NULL: none);
 * the others follow by ->next, with other hashes among them. */
struct hash_node *hash_table_chain(const struct hash_table *t, uint64_t h);

/* hash_table_remove - n, which is in t. */
void hash_table_remove(struct hash_table *t, struct hash_node *n);

/* hash_table_longest_chain - the most nodes one bucket holds. */
size_t hash_table_longest_chain(const struct hash_table *t);

#endif
