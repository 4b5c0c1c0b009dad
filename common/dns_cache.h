/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The resolver's cache: answers kept by (type, name) for their TTL on
 * the loop's monotonic clock, a bounded number of them holding a bounded
 * number of bytes (past either bound the least recently used goes
 * first: the names are chosen by clients, who could otherwise make
 * greygated keep 60 kB a name: issue 55). Names compare in any case. */
#ifndef GREYGATE_DNS_CACHE_H
#define GREYGATE_DNS_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "dns_answer.h"

struct dns_cache;

/* The bound in bytes greygated's resolver keeps its cache to: 4 MiB, of
 * the order of greygated itself, and a month's worth of small sites'
 * names (each a few hundred bytes). */
#define DNS_CACHE_BYTES (4u << 20)

/* dns_cache_new - empty, for at most max answers holding at most
 * bytes_max bytes (an answer's records, its name and its entry: what
 * dns_cache_bytes counts). Return: it, or NULL (errno). */
struct dns_cache *dns_cache_new(size_t max, size_t bytes_max);

/* dns_cache_free - every answer freed; NULL is fine. */
void dns_cache_free(struct dns_cache *c);

/* dns_cache_get - the answer kept for (type, name) if it lasts past
 * now_ms (valid until the cache is next changed), else NULL. */
const struct dns_answer *dns_cache_get(struct dns_cache *c, enum dns_type type,
                                       const char *name, uint64_t now_ms);

/* dns_cache_put - a copy of a kept for a->ttl seconds (at most ttl_max)
 * from now_ms, in place of any before; an answer with ttl 0, or not one
 * of ok, nodata, nxdomain, or larger than the whole bound, is not kept.
 * Return: 0 or -ENOMEM. */
int dns_cache_put(struct dns_cache *c, const char *name,
                  const struct dns_answer *a, uint32_t ttl_max,
                  uint64_t now_ms);

/* dns_cache_count - answers held (expired ones too, until pushed out). */
size_t dns_cache_count(const struct dns_cache *c);

/* dns_cache_bytes - the bytes they hold. */
size_t dns_cache_bytes(const struct dns_cache *c);

#endif
