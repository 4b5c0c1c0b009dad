// SPDX-License-Identifier: GPL-2.0-or-later
/* The resolver's cache (dns_cache.h): a chained hash table over
 * (type, lower-case name) and a list from the most to the least recently
 * used, which is where the bound takes from. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dns_cache.h"

struct entry {
	struct entry *next_in_bucket;
	struct entry *newer, *older; /* the use list */
	uint64_t hash, expires_ms;
	size_t bytes; /* what it holds (entry_bytes) */
	struct dns_answer answer;
	char name[]; /* lower case */
};

struct dns_cache {
	struct entry **buckets;
	size_t nbuckets; /* a power of two */
	size_t count, max;
	size_t bytes, bytes_max;
	struct entry *newest, *oldest;
};

/* What an answer under name holds: its entry and name, and each record's
 * text with malloc's own word or two (a record of a few bytes costs its
 * allocation's minimum, not its length). */
static size_t
entry_bytes(const char *name, const struct dns_answer *a)
{
	size_t n = sizeof(struct entry) + strlen(name) + 1 + 16;

	for (size_t i = 0; i < a->n; i++)
		if (a->rec[i].text)
			n += strlen(a->rec[i].text) + 1 + 16;
	return n;
}

static char
lower(char ch)
{
	return ch >= 'A' && ch <= 'Z' ? (char)(ch + 32) : ch;
}

/* FNV-1a over the type and the name in lower case. */
static uint64_t
hash_of(enum dns_type type, const char *name)
{
	uint64_t h = 14695981039346656037ull ^ (uint64_t)type;

	for (; *name; name++)
		h = (h ^ (unsigned char)lower(*name)) * 1099511628211ull;
	return h;
}

static bool
same_name(const char *lowered, const char *name)
{
	for (; *lowered && lower(*name) == *lowered; lowered++, name++)
		;
	return *lowered == 0 && *name == 0;
}

struct dns_cache *
dns_cache_new(size_t max, size_t bytes_max)
{
	struct dns_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->max = max ? max : 1;
	c->bytes_max = bytes_max;
	c->nbuckets = 64;
	while (c->nbuckets < c->max && c->nbuckets < ((size_t)1 << 24))
		c->nbuckets <<= 1;
	c->buckets = calloc(c->nbuckets, sizeof(*c->buckets));
	if (!c->buckets) {
		free(c);
		return NULL;
	}
	return c;
}

static void
unlink_use(struct dns_cache *c, struct entry *e)
{
	if (e->newer)
		e->newer->older = e->older;
	else
		c->newest = e->older;
	if (e->older)
		e->older->newer = e->newer;
	else
		c->oldest = e->newer;
	e->newer = e->older = NULL;
}

static void
link_newest(struct dns_cache *c, struct entry *e)
{
	e->older = c->newest;
	e->newer = NULL;
	if (c->newest)
		c->newest->newer = e;
	c->newest = e;
	if (!c->oldest)
		c->oldest = e;
}

static struct entry **
slot_of(struct dns_cache *c, enum dns_type type, const char *name,
        uint64_t hash)
{
	struct entry **at = &c->buckets[hash & (c->nbuckets - 1)];

	for (; *at; at = &(*at)->next_in_bucket)
		if ((*at)->hash == hash && (*at)->answer.type == type &&
		    same_name((*at)->name, name))
			break;
	return at;
}

static void
drop(struct dns_cache *c, struct entry **at)
{
	struct entry *e = *at;

	*at = e->next_in_bucket;
	unlink_use(c, e);
	dns_answer_clear(&e->answer);
	c->bytes -= e->bytes;
	free(e);
	c->count--;
}

const struct dns_answer *
dns_cache_get(struct dns_cache *c, enum dns_type type, const char *name,
              uint64_t now_ms)
{
	struct entry **at = slot_of(c, type, name, hash_of(type, name));

	if (!*at)
		return NULL;
	if ((*at)->expires_ms <= now_ms) {
		drop(c, at);
		return NULL;
	}
	unlink_use(c, *at);
	link_newest(c, *at);
	return &(*at)->answer;
}

int
dns_cache_put(struct dns_cache *c, const char *name, const struct dns_answer *a,
              uint32_t ttl_max, uint64_t now_ms)
{
	uint64_t hash = hash_of(a->type, name);
	struct entry **at = slot_of(c, a->type, name, hash);
	size_t len = strlen(name), bytes = entry_bytes(name, a);
	struct entry *e;

	if (*at)
		drop(c, at);
	if (a->ttl == 0 || bytes > c->bytes_max ||
	    (a->status != DNS_OK && a->status != DNS_NODATA &&
	     a->status != DNS_NXDOMAIN))
		return 0;
	while (c->count >= c->max || c->bytes + bytes > c->bytes_max) {
		struct entry *old = c->oldest;

		drop(c, slot_of(c, old->answer.type, old->name, old->hash));
	}
	e = calloc(1, sizeof(*e) + len + 1);
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++)
		e->name[i] = lower(name[i]);
	if (dns_answer_copy(&e->answer, a) < 0) {
		free(e);
		return -ENOMEM;
	}
	e->hash = hash;
	e->bytes = bytes;
	c->bytes += bytes;
	e->expires_ms =
	        now_ms + (uint64_t)(a->ttl < ttl_max ? a->ttl : ttl_max) * 1000;
	at = &c->buckets[hash & (c->nbuckets - 1)];
	e->next_in_bucket = *at;
	*at = e;
	link_newest(c, e);
	c->count++;
	return 0;
}

size_t
dns_cache_count(const struct dns_cache *c)
{
	return c->count;
}

size_t
dns_cache_bytes(const struct dns_cache *c)
{
	return c->bytes;
}

void
dns_cache_free(struct dns_cache *c)
{
	if (!c)
		return;
	while (c->oldest) {
		struct entry *e = c->oldest;

		drop(c, slot_of(c, e->answer.type, e->name, e->hash));
	}
	free(c->buckets);
	free(c);
}
