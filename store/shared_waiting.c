// SPDX-License-Identifier: GPL-2.0-or-later
/* The triplets greylisted here lately (see shared_waiting.h): a ring of
 * SHARED_WAITING_MAX slots, each one allocation holding the record and
 * its two addresses. Written at each first sight or early retry, read
 * when the store comes back emptied, and searched while it is away. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared_waiting.h"

/* A slot: the record, then "sender\0recipient\0" (the pointers are
 * made only when listed: 16 bytes less a triplet). */
struct kept {
	struct grey_client key;
	struct store_triplet t;
	char text[];
};

struct shared_waiting {
	struct kept **slot;
	size_t max, next, count;
};

struct shared_waiting *
shared_waiting_new(size_t max)
{
	struct shared_waiting *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->max = max ? max : SHARED_WAITING_MAX;
	w->slot = calloc(w->max, sizeof(*w->slot));
	if (!w->slot) {
		free(w);
		return NULL;
	}
	return w;
}

void
shared_waiting_free(struct shared_waiting *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->max; i++)
		free(w->slot[i]);
	free(w->slot);
	free(w);
}

/* A listed copy of k, its addresses in the same allocation. */
static struct shared_waiting_triplet *
listed(const struct kept *k)
{
	size_t ls = strlen(k->text) + 1;
	size_t lr = strlen(k->text + ls) + 1;
	struct shared_waiting_triplet *e = malloc(sizeof(*e) + ls + lr);
	char *text;

	if (!e)
		return NULL;
	text = (char *)(e + 1);
	memcpy(text, k->text, ls + lr);
	e->key = k->key;
	e->t = k->t;
	e->sender = text;
	e->rcpt = text + ls;
	return e;
}

int
shared_waiting_put(struct shared_waiting *w, const struct grey_client *key,
                   const char *sender, const char *rcpt,
                   const struct store_triplet *t)
{
	size_t ls = strlen(sender) + 1, lr = strlen(rcpt) + 1;
	struct kept *k = malloc(sizeof(*k) + ls + lr);

	if (!k)
		return -ENOMEM;
	k->key = *key;
	k->t = *t;
	memcpy(k->text, sender, ls);
	memcpy(k->text + ls, rcpt, lr);
	if (w->slot[w->next])
		free(w->slot[w->next]);
	else
		w->count++;
	w->slot[w->next] = k;
	w->next = (w->next + 1) % w->max;
	return 0;
}

bool
shared_waiting_find(const struct shared_waiting *w,
                    const struct grey_client *key, const char *sender,
                    const char *rcpt, struct store_triplet *t)
{
	size_t ls = strlen(sender) + 1;

	for (size_t i = 1; i <= w->max; i++) {
		const struct kept *k = w->slot[(w->next + w->max - i) % w->max];

		if (k && !memcmp(&k->key, key, sizeof(*key)) &&
		    !strcmp(k->text, sender) && !strcmp(k->text + ls, rcpt)) {
			*t = k->t;
			return true;
		}
	}
	return false;
}

int
shared_waiting_list(const struct shared_waiting *w, int64_t since,
                    struct shared_waiting_triplet ***out, size_t *n)
{
	struct shared_waiting_triplet **list = NULL;
	size_t got = 0;

	if (w->count && !(list = calloc(w->count, sizeof(*list))))
		return -ENOMEM;
	/* From the oldest: the slot the next put takes, round. */
	for (size_t i = 0; i < w->max; i++) {
		const struct kept *k = w->slot[(w->next + i) % w->max];

		if (!k || k->t.first_seen <= since)
			continue;
		list[got] = listed(k);
		if (!list[got]) {
			while (got)
				free(list[--got]);
			free(list);
			return -ENOMEM;
		}
		got++;
	}
	*out = list;
	*n = got;
	return 0;
}

size_t
shared_waiting_count(const struct shared_waiting *w)
{
	return w->count;
}
