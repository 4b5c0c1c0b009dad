// SPDX-License-Identifier: GPL-2.0-or-later
/* The resolver's cache (dns_cache.h): the keyed hash table over (type,
 * lower-case name) (names are what clients invent: issue 58) and the use
 * list, least recently used first, which is where the bound takes from. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dns_cache.h"
#include "hash_table.h"
#include "list.h"

struct entry {
	struct hash_node node; /* (first: an entry is its node) */
	struct list_node use;  /* in the use list */
	uint64_t expires_ms;
	size_t bytes; /* what it holds (entry_bytes) */
	struct dns_answer answer;
	char name[]; /* lower case */
};

struct dns_cache {
	struct hash_table table;
	size_t count, max;
	size_t bytes, bytes_max;
	struct list uses; /* the least recently used first */
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

/* The type and the name in lower case, keyed (past DNS_NAME_MAX the
 * rest is compared only). */
static uint64_t
hash_of(const struct dns_cache *c, enum dns_type type, const char *name)
{
	char key[DNS_NAME_MAX + 1];

	return hash_table_hash(&c->table, key, dns_question_key(type, name, key));
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
	if (hash_table_init(&c->table, c->max < 1024 ? c->max : 1024) < 0) {
		free(c);
		return NULL;
	}
	list_init(&c->uses);
	return c;
}

/* The least recently used entry, NULL if none. */
static struct entry *
oldest(const struct dns_cache *c)
{
	struct list_node *n = list_front(&c->uses);

	return n ? LIST_ENTRY(n, struct entry, use) : NULL;
}

static struct entry *
find(struct dns_cache *c, enum dns_type type, const char *name,
     uint64_t hash)
{
	for (struct hash_node *n = hash_table_chain(&c->table, hash); n;
	     n = n->next) {
		struct entry *e = (struct entry *)n;

		if (n->hash == hash && e->answer.type == type &&
		    same_name(e->name, name))
			return e;
	}
	return NULL;
}

static void
drop(struct dns_cache *c, struct entry *e)
{
	hash_table_remove(&c->table, &e->node);
	list_remove(&e->use);
	dns_answer_clear(&e->answer);
	c->bytes -= e->bytes;
	free(e);
	c->count--;
}

const struct dns_answer *
dns_cache_get(struct dns_cache *c, enum dns_type type, const char *name,
              uint64_t now_ms)
{
	struct entry *e = find(c, type, name, hash_of(c, type, name));

	if (!e)
		return NULL;
	if (e->expires_ms <= now_ms) {
		drop(c, e);
		return NULL;
	}
	list_remove(&e->use);
	list_push_back(&c->uses, &e->use);
	return &e->answer;
}

int
dns_cache_put(struct dns_cache *c, const char *name, const struct dns_answer *a,
              uint32_t ttl_max, uint64_t now_ms)
{
	uint64_t hash = hash_of(c, a->type, name);
	struct entry *e = find(c, a->type, name, hash);
	size_t len = strlen(name), bytes = entry_bytes(name, a);

	if (e)
		drop(c, e);
	if (a->ttl == 0 || bytes > c->bytes_max ||
	    (a->status != DNS_OK && a->status != DNS_NODATA &&
	     a->status != DNS_NXDOMAIN))
		return 0;
	while (c->count >= c->max || c->bytes + bytes > c->bytes_max)
		drop(c, oldest(c));
	e = calloc(1, sizeof(*e) + len + 1);
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++)
		e->name[i] = lower(name[i]);
	if (dns_answer_copy(&e->answer, a) < 0) {
		free(e);
		return -ENOMEM;
	}
	e->bytes = bytes;
	c->bytes += bytes;
	e->expires_ms =
	        now_ms + (uint64_t)(a->ttl < ttl_max ? a->ttl : ttl_max) * 1000;
	hash_table_add(&c->table, &e->node, hash);
	list_push_back(&c->uses, &e->use);
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
	while (!list_empty(&c->uses))
		drop(c, oldest(c));
	hash_table_free(&c->table);
	free(c);
}
