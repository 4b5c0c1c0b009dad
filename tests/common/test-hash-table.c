// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the one hash table (common/hash_table.c) and its SipHash-2-4
 * (common/siphash.c): the paper's test vectors; entries added, found,
 * removed, through its growth; and the attack it is for (issue 58): 512
 * IPv6 addresses chosen to fall in one bucket of the tarpit's former
 * table (FNV-1a, unseeded, 4,096 buckets) spread over this one's. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hash_table.h"
#include "siphash.h"

static void
test_siphash_vectors(void)
{
	uint8_t key[16], msg[15];
	struct siphash_key k;

	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 15; i++)
		msg[i] = (uint8_t)i;
	k = siphash_key_of(key);
	/* the paper's appendix A: 15 bytes 00..0e under key 00..0f */
	CHECK(siphash24(&k, msg, 15) == 0xa129ca6149be45e5ull);
	/* the reference's first vector: the empty message */
	CHECK(siphash24(&k, msg, 0) == 0x726fdb47dd0e0e31ull);
}

struct entry {
	struct hash_node node;
	uint32_t value;
};

static struct entry *
find(const struct hash_table *t, uint32_t value)
{
	uint64_t h = hash_table_hash(t, &value, sizeof(value));

	for (struct hash_node *n = hash_table_chain(t, h); n; n = n->next) {
		struct entry *e = (struct entry *)n;

		if (n->hash == h && e->value == value)
			return e;
	}
	return NULL;
}

static void
test_add_find_remove_grow(void)
{
	enum { N = 10000 };
	struct hash_table t;
	struct entry *e = calloc(N, sizeof(*e));

	CHECK(e);
	CHECK_INT(hash_table_init(&t, 4), 0);
	CHECK_INT(t.mask + 1, 16);
	for (uint32_t i = 0; i < N; i++) {
		e[i].value = i * 7919;
		hash_table_add(&t, &e[i].node,
		               hash_table_hash(&t, &e[i].value,
		                               sizeof(e[i].value)));
	}
	CHECK_INT(t.count, N);
	CHECK(t.mask + 1 >= N / 2); /* grew */
	for (uint32_t i = 0; i < N; i++)
		CHECK(find(&t, i * 7919) == &e[i]);
	CHECK(!find(&t, 1));
	for (uint32_t i = 0; i < N; i += 2)
		hash_table_remove(&t, &e[i].node);
	CHECK_INT(t.count, N / 2);
	for (uint32_t i = 0; i < N; i++)
		CHECK(find(&t, i * 7919) == (i % 2 ? &e[i] : NULL));
	for (uint32_t i = 1; i < N; i += 2)
		hash_table_remove(&t, &e[i].node);
	CHECK_INT(t.count, 0);
	CHECK_INT(hash_table_longest_chain(&t), 0);
	hash_table_free(&t);
	free(e);
}

/* The tarpit's former bucket of an IPv6 address. */
static size_t
fnv1a_bucket(const uint8_t addr[16])
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < 16; i++)
		h = (h ^ addr[i]) * 16777619u;
	return h & 4095;
}

static void
test_chosen_collisions_spread(void)
{
	enum { N = 512 };
	struct hash_table t, other;
	struct {
		struct hash_node node;
		uint8_t addr[16];
	} *e = calloc(N, sizeof(*e));
	uint8_t addr[16] = {0x20, 0x01, 0x0d, 0xb8};
	size_t found = 0, same_hash = 0;

	CHECK(e);
	/* An attacker's /64: addresses whose former bucket is 0. */
	for (uint32_t x = 0; found < N; x++) {
		memcpy(addr + 12, &x, sizeof(x));
		if (fnv1a_bucket(addr) == 0)
			memcpy(e[found++].addr, addr, 16);
	}
	CHECK_INT(hash_table_init(&t, 4096), 0);
	CHECK_INT(hash_table_init(&other, 4096), 0);
	for (size_t i = 0; i < N; i++) {
		uint64_t h = hash_table_hash(&t, e[i].addr, 16);

		hash_table_add(&t, &e[i].node, h);
		same_hash += h == hash_table_hash(&other, e[i].addr, 16);
	}
	/* 512 in 4,096 buckets: a few at most (512 in one, before) */
	CHECK(hash_table_longest_chain(&t) <= 8);
	/* each table its own key */
	CHECK_INT(same_hash, 0);
	for (size_t i = 0; i < N; i++)
		hash_table_remove(&t, &e[i].node);
	hash_table_free(&t);
	hash_table_free(&other);
	free(e);
}

int
main(void)
{
	RUN(test_siphash_vectors);
	RUN(test_add_find_remove_grow);
	RUN(test_chosen_collisions_spread);
	return 0;
}
