/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed hash whose
 * collisions cannot be chosen without the key. Every hash table whose
 * keys come from outside (a client's address, a name it invented) hashes
 * with it (SipHash-1-3), under a key drawn at start (hash_table.h). */
#ifndef GREYGATE_SIPHASH_H
#define GREYGATE_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#define SIPHASH_KEY_LEN 16

struct siphash_key {
	uint64_t k0, k1;
};

/* siphash_key_of - the key of 16 bytes (as the paper reads them). */
struct siphash_key siphash_key_of(const uint8_t bytes[SIPHASH_KEY_LEN]);

/* siphash_key_random - a key from getrandom; before the kernel has
 * entropy (early boot), from the clock and an address, which still
 * differ from run to run. */
struct siphash_key siphash_key_random(void);

/* siphash24 - the hash of data[0..len) under key. */
uint64_t siphash24(const struct siphash_key *key, const void *data,
                   size_t len);

/* siphash13 - the same with one round a block and three to finish
 * (SipHash-1-3, as Rust's and Python's hash tables use it): the hash
 * tables', run for every packet the sensor reads; the code is
 * siphash24's, which the paper's vectors hold to. */
uint64_t siphash13(const struct siphash_key *key, const void *data,
                   size_t len);

#endif
