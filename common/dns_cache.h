/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The resolver's cache: answers kept by (type, name) for their TTL on
 * the loop's monotonic clock, a bounded number of them (past the bound
 * the least recently used goes first). Names compare in any case. */
#ifndef GREYGATE_DNS_CACHE_H
#define GREYGATE_DNS_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "dns_answer.h"

struct dns_cache;

/* dns_cache_new - empty, for at most max answers. Return: it, or NULL
 * (errno). */
struct dns_cache *dns_cache_new(size_t max);

/* dns_cache_free - every answer freed; NULL is fine. */
void dns_cache_free(struct dns_cache *c);

/* dns_cache_get - the answer kept for (type, name) if it lasts past
 * now_ms (valid until the cache is next changed), else NULL. */
const struct dns_answer *dns_cache_get(struct dns_cache *c, enum dns_type type,
                                       const char *name, uint64_t now_ms);

/* dns_cache_put - a copy of a kept for a->ttl seconds (at most ttl_max)
 * from now_ms, in place of any before; an answer with ttl 0, or not one
 * of ok, nodata, nxdomain, is not kept. Return: 0 or -ENOMEM. */
int dns_cache_put(struct dns_cache *c, const char *name,
                  const struct dns_answer *a, uint32_t ttl_max,
                  uint64_t now_ms);

/* dns_cache_count - answers held (expired ones too, until pushed out). */
size_t dns_cache_count(const struct dns_cache *c);

#endif
