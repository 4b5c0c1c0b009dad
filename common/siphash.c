// SPDX-License-Identifier: GPL-2.0-or-later
/* SipHash-2-4, written from the paper's description (section 2): four
 * 64-bit words of state, two rounds a message block, four to finish. */
#include <endian.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "siphash.h"

static uint64_t
rotl(uint64_t x, unsigned b)
{
	return x << b | x >> (64 - b);
}

static uint64_t
le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

struct siphash_key
siphash_key_of(const uint8_t bytes[SIPHASH_KEY_LEN])
{
	return (struct siphash_key){le64(bytes), le64(bytes + 8)};
}

struct siphash_key
siphash_key_random(void)
{
	uint8_t bytes[SIPHASH_KEY_LEN];
	struct timespec now;
	uint64_t salt = (uint64_t)(uintptr_t)&now;

	if (getrandom(bytes, sizeof(bytes), GRND_NONBLOCK) ==
	    (ssize_t)sizeof(bytes))
		return siphash_key_of(bytes);
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (struct siphash_key){salt ^ (uint64_t)now.tv_nsec << 20,
	                            (uint64_t)now.tv_sec ^ rotl(salt, 29)};
}

struct state {
	uint64_t v0, v1, v2, v3;
};

static inline __attribute__((always_inline)) void
rounds(struct state *s, int n)
{
	while (n--) {
		s->v0 += s->v1;
		s->v1 = rotl(s->v1, 13);
		s->v1 ^= s->v0;
		s->v0 = rotl(s->v0, 32);
		s->v2 += s->v3;
		s->v3 = rotl(s->v3, 16);
		s->v3 ^= s->v2;
		s->v0 += s->v3;
		s->v3 = rotl(s->v3, 21);
		s->v3 ^= s->v0;
		s->v2 += s->v1;
		s->v1 = rotl(s->v1, 17);
		s->v1 ^= s->v2;
		s->v2 = rotl(s->v2, 32);
	}
}

static inline __attribute__((always_inline)) void
absorb(struct state *s, uint64_t m, int c)
{
	s->v3 ^= m;
	rounds(s, c);
	s->v0 ^= m;
}

/* SipHash-c-d: c rounds a block, d to finish (inlined into each caller,
 * so that its rounds are unrolled: the tables hash short keys, where the
 * loop's overhead was half the cost). */
static inline __attribute__((always_inline)) uint64_t
sip(const struct siphash_key *key, const void *data, size_t len, int c,
    int d)
{
	const uint8_t *p = data;
	struct state s = {key->k0 ^ 0x736f6d6570736575ull,
	                  key->k1 ^ 0x646f72616e646f6dull,
	                  key->k0 ^ 0x6c7967656e657261ull,
	                  key->k1 ^ 0x7465646279746573ull};
	uint8_t last[8] = {0};
	size_t whole = len & ~(size_t)7;

	for (size_t i = 0; i < whole; i += 8)
		absorb(&s, le64(p + i), c);
	/* the rest, and the length's low byte in the top one */
	memcpy(last, p + whole, len - whole);
	last[7] = (uint8_t)len;
	absorb(&s, le64(last), c);
	s.v2 ^= 0xff;
	rounds(&s, d);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

uint64_t
siphash24(const struct siphash_key *key, const void *data, size_t len)
{
	return sip(key, data, len, 2, 4);
}

uint64_t
siphash13(const struct siphash_key *key, const void *data, size_t len)
{
	return sip(key, data, len, 1, 3);
}
