/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Forward-confirmed reverse DNS, the first of the signals that tell a
 * mail server from a bot (issue 31): the client's address has a PTR
 * name, and that name has the client's address among its A (AAAA)
 * records. Asked through greygated's resolver, so nothing blocks and a
 * client seen again is answered from the cache. A lookup that times out
 * or fails is said as such (FCRDNS_TEMPERROR): the caller must not take
 * it for "no PTR" (a bot) nor for a confirmation. */
#ifndef GREYGATE_FCRDNS_H
#define GREYGATE_FCRDNS_H

#include <stdint.h>

#include "dns_answer.h"
#include "resolver.h"

enum fcrdns_result {
	FCRDNS_CONFIRMED,   /* a PTR name resolves back to the address */
	FCRDNS_NO_PTR,      /* no PTR name (NXDOMAIN, or none) */
	FCRDNS_UNCONFIRMED, /* PTR names, none resolving back to it */
	FCRDNS_TEMPERROR,   /* a lookup timed out or failed: not known */
};

/* PTR names followed, at most (Postfix: a client with more is rare and
 * suspect; RFC 8601's iprev says "a few"). */
#define FCRDNS_NAMES_MAX 10

struct fcrdns_answer {
	enum fcrdns_result result;
	/* CONFIRMED: the name confirmed; UNCONFIRMED: the first PTR name;
	 * else "" */
	char name[DNS_NAME_MAX];
};

typedef void fcrdns_fn(const struct fcrdns_answer *a, void *ctx);

struct fcrdns;

/*
 * fcrdns_start - look up the address (family AF_INET or AF_INET6); fn is
 * told once, unless cancelled. When the cache answers it all, fn is told
 * before this returns and *out is NULL.
 * Return: 0, or -ENOMEM (fn not told).
 */
int fcrdns_start(struct resolver *r, int family, const uint8_t *addr,
                 fcrdns_fn *fn, void *ctx, struct fcrdns **out);

/* fcrdns_cancel - fn will not be told. NULL is fine. */
void fcrdns_cancel(struct fcrdns *f);

/* fcrdns_result_name - "confirmed", "no-ptr", "unconfirmed",
 * "temperror": as logged. */
const char *fcrdns_result_name(enum fcrdns_result r);

#endif
