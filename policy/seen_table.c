// SPDX-License-Identifier: GPL-2.0-or-later
/* Things seen lately (see seen_table.h): open addressing over a fixed
 * table, a short probe; when the probe finds neither the key nor a free
 * or stale slot, the key seen longest ago makes room. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "seen_table.h"
#include "siphash.h"

/* Slots looked at for one key: the table stays fast when full. */
#define PROBE 8

struct slot {
	uint8_t used;
	uint8_t key[SEEN_KEY_LEN];
	struct seen_entry e;
};

struct seen_table {
	struct siphash_key key; /* so that nobody can aim at one run of
	                           slots (the tables' hash, issue 58) */
	uint32_t window_sec;
	size_t nslots;
	struct slot slots[];
};

struct seen_table *
seen_table_new(size_t slots, uint32_t window_sec)
{
	struct seen_table *t;

	if (!slots)
		slots = 1;
	t = calloc(1, sizeof(*t) + slots * sizeof(struct slot));
	if (!t)
		return NULL;
	t->nslots = slots;
	t->window_sec = window_sec;
	t->key = siphash_key_random();
	return t;
}

void
seen_table_free(struct seen_table *t)
{
	free(t);
}

void
seen_table_set_window(struct seen_table *t, uint32_t window_sec)
{
	t->window_sec = window_sec;
}

static size_t
home(const struct seen_table *t, const uint8_t *key)
{
	return (size_t)(siphash13(&t->key, key, SEEN_KEY_LEN) % t->nslots);
}

static bool
stale(const struct seen_table *t, const struct slot *s, int64_t now)
{
	return now - s->e.last >= (int64_t)t->window_sec || now < s->e.last;
}

static struct slot *
find(const struct seen_table *t, const uint8_t *key)
{
	size_t h = home(t, key);

	for (size_t i = 0; i < PROBE && i < t->nslots; i++) {
		const struct slot *s = &t->slots[(h + i) % t->nslots];

		if (s->used && !memcmp(s->key, key, SEEN_KEY_LEN))
			return (struct slot *)s;
	}
	return NULL;
}

const struct seen_entry *
seen_table_find(const struct seen_table *t, const uint8_t key[SEEN_KEY_LEN],
                int64_t now)
{
	const struct slot *s = find(t, key);

	return s && !stale(t, s, now) ? &s->e : NULL;
}

void
seen_table_forget(struct seen_table *t, const uint8_t key[SEEN_KEY_LEN])
{
	struct slot *s = find(t, key);

	if (s)
		s->used = 0;
}

const struct seen_entry *
seen_table_add(struct seen_table *t, const uint8_t key[SEEN_KEY_LEN],
               int64_t now)
{
	struct slot *s = find(t, key);

	if (!s) {
		size_t h = home(t, key);
		struct slot *oldest = NULL;

		for (size_t i = 0; i < PROBE && i < t->nslots; i++) {
			struct slot *c = &t->slots[(h + i) % t->nslots];

			if (!c->used || stale(t, c, now)) {
				oldest = c;
				break;
			}
			if (!oldest || c->e.last < oldest->e.last)
				oldest = c;
		}
		s = oldest;
		s->used = 1;
		memcpy(s->key, key, SEEN_KEY_LEN);
		s->e = (struct seen_entry){0, now, now};
	} else if (stale(t, s, now)) {
		s->e = (struct seen_entry){0, now, now};
	}
	if (s->e.count < UINT32_MAX)
		s->e.count++;
	s->e.last = now;
	return &s->e;
}
