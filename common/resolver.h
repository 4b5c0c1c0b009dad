/* SPDX-License-Identifier: GPL-2.0-or-later */
/* greygated's DNS resolver: c-ares on the event loop (its sockets are
 * the loop's descriptors, its timeouts a loop timer: nothing blocks),
 * with a cache that keeps each answer for its TTL and "no such name" or
 * "no such record" for the zone's negative TTL (RFC 2308), and one
 * question in flight per (type, name) however many ask it at once. A
 * server that does not answer costs timeout_ms per try; the caller
 * decides what a timeout means (greylisting: as if nothing were known,
 * never a pass). */
#ifndef GREYGATE_RESOLVER_H
#define GREYGATE_RESOLVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns_answer.h"
#include "loop.h"
#include "must_check.h"

struct resolver;
struct resolver_query;

struct resolver_config {
	/* "198.51.100.53", "198.51.100.53:5353,[2001:db8::53]:53"; NULL
	 * or "": the system's (/etc/resolv.conf) */
	const char *servers;
	unsigned timeout_ms; /* per try (0: 1000) */
	unsigned tries;      /* per server (0: 2) */
	size_t cache_max;    /* answers kept (0: 10,000) */
	size_t cache_bytes_max; /* bytes they hold at most (0: 4 MiB,
	                         * DNS_CACHE_BYTES) */
	/* seconds an answer is kept at most (0: 1 hour): every name asked
	 * is one a client chose (its sender's domain and what that domain's
	 * SPF names, its HELO, its PTR name, a list's name of its address),
	 * and greylisting's retry needs an answer for minutes, not days */
	uint32_t ttl_max;
	uint32_t negative_ttl_max; /* the same for "no such" (0: 15 min) */
};

/* What the resolver has done since it began. */
struct resolver_counters {
	uint64_t asked;    /* questions sent to a server */
	uint64_t cached;   /* answered from the cache */
	uint64_t joined;   /* answered by a question already in flight */
	uint64_t timeouts; /* questions no server answered in time */
	uint64_t failures; /* SERVFAIL, refused, unreadable answers */
	/* no server answered the last RESOLVER_SILENT_AFTER questions in a
	 * row (and none since): its callers should not wait (issue 57) */
	bool silent;
	int64_t silent_since; /* ... since then, epoch seconds */
	uint64_t silences;    /* times it went silent */
};

/* Questions in a row that no server answered in time before the
 * resolver is said silent; any answer from a server ends it. */
#define RESOLVER_SILENT_AFTER 5

/* resolver_silent - has no server answered the last questions (see
 * resolver_counters.silent)? Questions are still asked meanwhile: the
 * first answer says it is back. */
bool resolver_silent(const struct resolver *r);

/*
 * An answer, valid during the call only (copy what is kept). cached:
 * from the cache, no question sent. A query's function is called once,
 * unless it is cancelled first.
 */
typedef void resolver_fn(const struct dns_answer *a, bool cached, void *ctx);

/*
 * resolver_new - a resolver on loop.
 * @err: why not, when it fails (a server list c-ares refuses, say)
 * Return: it, or NULL.
 */
struct resolver *resolver_new(struct loop *loop,
                              const struct resolver_config *cfg, char *err,
                              size_t len);

/* resolver_free - every question in flight dropped without a call; NULL
 * is fine. */
void resolver_free(struct resolver *r);

/*
 * resolver_ask - the answer to (type, name), to fn. From the cache (or
 * when the question cannot be asked: a DNS_BAD answer) fn is called
 * before this returns and *q is NULL; otherwise *q is the query, to
 * cancel until fn is called.
 * Return: 0, or -ENOMEM (fn not called).
 */
MUST_CHECK int resolver_ask(struct resolver *r, const char *name,
                            enum dns_type type, resolver_fn *fn, void *ctx,
                            struct resolver_query **q);

/* resolver_cancel - fn will not be called (the answer, when it comes, is
 * still cached). NULL is fine. */
void resolver_cancel(struct resolver_query *q);

/* resolver_counters - its counters, and answers cached now. */
void resolver_counters(const struct resolver *r, struct resolver_counters *out,
                       size_t *cached_now);

#endif
