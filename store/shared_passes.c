// SPDX-License-Identifier: GPL-2.0-or-later
/* The passes known here (see shared_passes.h): a search tree of the C
 * library's (tsearch), keyed by the client's network. Lookups happen
 * only while Redis is away; insertions at every pass on the stream. */
#include <errno.h>
#include <search.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
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
	/* A pass ends pass_ttl after it was made or last refreshed: so a
	 * decision from it refreshes no more often than the store's would. */
	out->refreshed = k->expires - (int64_t)pass_ttl_sec;
	if (out->refreshed < out->since)
		out->refreshed = out->since;
	return true;
}

/* The walk's gathering of the ended, or of the live (twalk_r's
 * closure). */
struct gathered {
	int64_t now;
	bool live;
	struct known_pass **keys;
	size_t n, alloc;
	bool failed;
};

static void
gather(const void *node, VISIT which, void *ctx)
{
	const struct known_pass *k = *(struct known_pass *const *)node;
	struct gathered *g = ctx;

	if ((which != postorder && which != leaf) ||
	    (k->expires > g->now) != g->live || g->failed)
		return;
	if (g->n == g->alloc) {
		size_t alloc = g->alloc ? 2 * g->alloc : 64;
		void *keys = realloc(g->keys, alloc * sizeof(*g->keys));

		if (!keys) {
			g->failed = true;
			return;
		}
		g->keys = keys;
		g->alloc = alloc;
	}
	g->keys[g->n++] = (struct known_pass *)k;
}

size_t
shared_passes_purge(struct shared_passes *p, int64_t now)
{
	struct gathered e = {.now = now, .live = false};

	/* (out of memory: the rest at the next purge) */
	compat_twalk_r(p->root, gather, &e);
	for (size_t i = 0; i < e.n; i++) {
		tdelete(e.keys[i], &p->root, cmp_key);
		free(e.keys[i]);
	}
	p->count -= e.n;
	free(e.keys);
	return e.n;
}

int
shared_passes_list(const struct shared_passes *p, int64_t now,
                   struct shared_pass **out, size_t *n)
{
	struct gathered l = {.now = now, .live = true};
	struct shared_pass *list;

	compat_twalk_r(p->root, gather, &l);
	list = l.failed ? NULL : calloc(l.n ? l.n : 1, sizeof(*list));
	if (!list) {
		free(l.keys);
		return -ENOMEM;
	}
	for (size_t i = 0; i < l.n; i++)
		list[i] = (struct shared_pass){l.keys[i]->key, l.keys[i]->since,
		                               l.keys[i]->expires};
	free(l.keys);
	*out = list;
	*n = l.n;
	return 0;
}

size_t
shared_passes_count(const struct shared_passes *p)
{
	return p->count;
}
