// SPDX-License-Identifier: GPL-2.0-or-later
/* The unknown recipients' tally (see unknown_tally.h): open addressing
 * over a fixed table, a short probe; when the probe finds neither the
 * client nor a free or stale slot, the client seen longest ago makes room. */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "unknown_tally.h"

/* Slots looked at for one client: the table stays fast when full. */
#define PROBE 8

struct slot {
	uint8_t family; /* 0: free */
	uint8_t bytes[16];
	uint32_t count;
	int64_t last; /* its latest unknown recipient */
};

struct unknown_tally {
	uint64_t seed; /* so that nobody can aim at one chain of slots */
	struct slot slots[UNKNOWN_TALLY_SLOTS];
};

struct unknown_tally *
unknown_tally_new(void)
{
	struct unknown_tally *t = calloc(1, sizeof(*t));

	if (t && getrandom(&t->seed, sizeof(t->seed), GRND_NONBLOCK) !=
	                 (ssize_t)sizeof(t->seed))
		t->seed = (uint64_t)(uintptr_t)t;
	return t;
}

void
unknown_tally_free(struct unknown_tally *t)
{
	free(t);
}

/* FNV-1a over the address, from the seed. */
static size_t
home(const struct unknown_tally *t, const struct grey_addr *a)
{
	uint64_t h = 14695981039346656037ull ^ t->seed;

	h = (h ^ a->family) * 1099511628211ull;
	for (size_t i = 0; i < sizeof(a->bytes); i++)
		h = (h ^ a->bytes[i]) * 1099511628211ull;
	return (size_t)(h % UNKNOWN_TALLY_SLOTS);
}

static bool
same(const struct slot *s, const struct grey_addr *a)
{
	return s->family == a->family &&
	       memcmp(s->bytes, a->bytes, sizeof(s->bytes)) == 0;
}

static bool
stale(const struct slot *s, int64_t now)
{
	return now - s->last >= UNKNOWN_TALLY_WINDOW_SEC || now < s->last;
}

static const struct slot *
find(const struct unknown_tally *t, const struct grey_addr *a)
{
	size_t h = home(t, a);

	for (size_t i = 0; i < PROBE; i++) {
		const struct slot *s = &t->slots[(h + i) % UNKNOWN_TALLY_SLOTS];

		if (s->family && same(s, a))
			return s;
	}
	return NULL;
}

uint32_t
unknown_tally_count(const struct unknown_tally *t,
                    const struct grey_addr *client, int64_t now)
{
	const struct slot *s = find(t, client);

	return s && !stale(s, now) ? s->count : 0;
}

uint32_t
unknown_tally_add(struct unknown_tally *t, const struct grey_addr *client,
                  int64_t now)
{
	struct slot *s = (struct slot *)find(t, client);

	if (!s) {
		size_t h = home(t, client);
		struct slot *oldest = NULL;

		for (size_t i = 0; i < PROBE; i++) {
			struct slot *c = &t->slots[(h + i) % UNKNOWN_TALLY_SLOTS];

			if (!c->family || stale(c, now)) {
				oldest = c;
				break;
			}
			if (!oldest || c->last < oldest->last)
				oldest = c;
		}
		s = oldest;
		s->family = client->family;
		memcpy(s->bytes, client->bytes, sizeof(s->bytes));
		s->count = 0;
	} else if (stale(s, now)) {
		s->count = 0;
	}
	if (s->count < UINT32_MAX)
		s->count++;
	s->last = now;
	return s->count;
}
