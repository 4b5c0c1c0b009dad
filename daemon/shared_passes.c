// SPDX-License-Identifier: GPL-2.0-or-later
/* The passes known here (see shared_passes.h): a search tree of the C
 * library's (tsearch), keyed by the client's network. Lookups happen
 * only while Redis is away; insertions at every pass on the stream. */
#include <errno.h>
#include <search.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>

#include "shared_passes.h"

struct known_pass {
	struct grey_client key;
	int64_t since, expires;
};

struct shared_passes {
	void *root;
	size_t count;
};

static int
cmp_key(const void *a, const void *b)
{
	const struct grey_client *x = &((const struct known_pass *)a)->key;
	const struct grey_client *y = &((const struct known_pass *)b)->key;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	if (x->prefix != y->prefix)
		return x->prefix < y->prefix ? -1 : 1;
	return memcmp(x->bytes, y->bytes, x->family == AF_INET ? 4 : 16);
}

struct shared_passes *
shared_passes_new(void)
{
	return calloc(1, sizeof(struct shared_passes));
}

void
shared_passes_free(struct shared_passes *p)
{
	if (!p)
		return;
	tdestroy(p->root, free);
	free(p);
}

int
shared_passes_put(struct shared_passes *p, const struct grey_client *key,
                  int64_t since, int64_t expires)
{
	struct known_pass *k = calloc(1, sizeof(*k)), **found;

	if (!k)
		return -ENOMEM;
	k->key = *key;
	k->since = since;
	k->expires = expires;
	found = tsearch(k, &p->root, cmp_key);
	if (!found) {
		free(k);
		return -ENOMEM;
	}
	if (*found == k) {
		p->count++;
		return 0;
	}
	free(k);
	k = *found;
	if (since && (!k->since || since < k->since))
		k->since = since;
	if (expires > k->expires)
		k->expires = expires;
	return 0;
}

void
shared_passes_forget(struct shared_passes *p, const struct grey_client *key)
{
	struct known_pass probe = {.key = *key}, **found;
	struct known_pass *k;

	found = tfind(&probe, &p->root, cmp_key);
	if (!found)
		return;
	k = *found;
	tdelete(&probe, &p->root, cmp_key);
	free(k);
	p->count--;
}

bool
shared_passes_find(const struct shared_passes *p, const struct grey_client *key,
                   int64_t now, uint32_t pass_ttl_sec, struct store_client *out)
{
	struct known_pass probe = {.key = *key}, *const * found;
	const struct known_pass *k;

	found = tfind(&probe, &p->root, cmp_key);
	if (!found || (*found)->expires <= now)
		return false;
	k = *found;
	memset(out, 0, sizeof(*out));
	out->expires = k->expires;
	/* (a shared store keeps the earliest since: never later than it) */
	out->since = k->since ? k->since : k->expires - (int64_t)pass_ttl_sec;
	return true;
}

/* The walk's gathering of the ended (twalk_r's closure). */
struct ended {
	int64_t now;
	struct known_pass **keys;
	size_t n, alloc;
	bool failed;
};

static void
gather_ended(const void *node, VISIT which, void *ctx)
{
	const struct known_pass *k = *(struct known_pass *const *)node;
	struct ended *e = ctx;

	if ((which != postorder && which != leaf) || k->expires > e->now ||
	    e->failed)
		return;
	if (e->n == e->alloc) {
		size_t alloc = e->alloc ? 2 * e->alloc : 64;
		void *keys = realloc(e->keys, alloc * sizeof(*e->keys));

		if (!keys) {
			e->failed = true; /* the rest at the next purge */
			return;
		}
		e->keys = keys;
		e->alloc = alloc;
	}
	e->keys[e->n++] = (struct known_pass *)k;
}

size_t
shared_passes_purge(struct shared_passes *p, int64_t now)
{
	struct ended e = {.now = now};

	twalk_r(p->root, gather_ended, &e);
	for (size_t i = 0; i < e.n; i++) {
		tdelete(e.keys[i], &p->root, cmp_key);
		free(e.keys[i]);
	}
	p->count -= e.n;
	free(e.keys);
	return e.n;
}

size_t
shared_passes_count(const struct shared_passes *p)
{
	return p->count;
}
