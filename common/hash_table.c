// SPDX-License-Identifier: GPL-2.0-or-later
/* The one hash table (hash_table.h): buckets of singly linked chains,
 * doubled when there are more nodes than buckets. */
#include <errno.h>
#include <stdlib.h>

#include "hash_table.h"
#include "invariant.h"

#define BUCKETS_MIN 16

int
hash_table_init(struct hash_table *t, size_t n)
{
	size_t buckets = BUCKETS_MIN;

	while (buckets < n)
		buckets *= 2;
	t->buckets = calloc(buckets, sizeof(*t->buckets));
	if (!t->buckets)
		return -ENOMEM;
	t->mask = buckets - 1;
	t->count = 0;
	t->key = siphash_key_random();
	return 0;
}

void
hash_table_free(struct hash_table *t)
{
	/* (its entries are gone first: one left is a leak, or a pointer
	 * into freed memory later) */
	INVARIANT(t->count == 0);
	free(t->buckets);
	t->buckets = NULL;
	t->mask = t->count = 0;
}

uint64_t
hash_table_hash(const struct hash_table *t, const void *key, size_t len)
{
	return siphash13(&t->key, key, len);
}

/* Twice the buckets, each node moved by its kept hash; no memory: as
 * it was. */
static void
grow(struct hash_table *t)
{
	size_t buckets = (t->mask + 1) * 2;
	struct hash_node **to = calloc(buckets, sizeof(*to));

	if (!to)
		return;
	for (size_t i = 0; i <= t->mask; i++)
		while (t->buckets[i]) {
			struct hash_node *n = t->buckets[i];

			t->buckets[i] = n->next;
			n->next = to[n->hash & (buckets - 1)];
			to[n->hash & (buckets - 1)] = n;
		}
	free(t->buckets);
	t->buckets = to;
	t->mask = buckets - 1;
}

void
hash_table_add(struct hash_table *t, struct hash_node *n, uint64_t h)
{
	struct hash_node **head;

	if (t->count >= t->mask + 1)
		grow(t);
	head = &t->buckets[h & t->mask];
	n->hash = h;
	n->next = *head;
	*head = n;
	t->count++;
}

struct hash_node *
hash_table_chain(const struct hash_table *t, uint64_t h)
{
	return t->buckets[h & t->mask];
}

void
hash_table_remove(struct hash_table *t, struct hash_node *n)
{
	for (struct hash_node **pp = &t->buckets[n->hash & t->mask]; *pp;
	     pp = &(*pp)->next)
		if (*pp == n) {
			*pp = n->next;
			n->next = NULL;
			t->count--;
			return;
		}
}

size_t
hash_table_longest_chain(const struct hash_table *t)
{
	size_t longest = 0;

	for (size_t i = 0; i <= t->mask; i++) {
		size_t n = 0;

		for (const struct hash_node *c = t->buckets[i]; c; c = c->next)
			n++;
		if (n > longest)
			longest = n;
	}
	return longest;
}
