/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The transparent hand-off's way back, in the routing tables: a policy
 * rule that sends TCP packets carrying a mark and coming from one source
 * port (the MTA's answers, marked by greygate's table) to a table of
 * their own, whose only route is "local, everything", so they reach
 * greygated's socket bound to the client's address instead of leaving
 * for the client. IPv4 and IPv6; rtnetlink through libmnl.
 *
 * Unlike the nft table, a rule is not owned by a socket: it outlives a
 * killed greygated. Greygate's rules and routes carry a protocol of their
 * own (MARKROUTE_PROTOCOL: `ip rule` shows "proto 165"); markroute_install
 * first removes those of that mark and table a previous run left, so
 * there is never a second one, and refuses a mark or a table another
 * rule uses; markroute_remove is called on every orderly exit. Nothing
 * without greygate's protocol is ever removed. */
#ifndef GREYGATE_MARKROUTE_H
#define GREYGATE_MARKROUTE_H

#include <stdbool.h>
#include <stdint.h>

#include "must_check.h"

/* The protocol tag of greygate's rules and routes (unassigned in
 * iproute2's rt_protos). */
#define MARKROUTE_PROTOCOL 165

struct markroute_config {
	uint32_t mark;  /* the packets' mark (exact) */
	uint32_t table; /* a routing table greygate fills alone */
	uint16_t sport; /* their TCP source port: the MTA's */
};

/* What markroute_install did. */
struct markroute_result {
	unsigned stale; /* rules a previous run left, removed */
	bool ipv6;      /* IPv6 is routed back too (false: no IPv6 here) */
};

/*
 * markroute_install - refuse a mark or table a rule not greygate's uses
 * (-EADDRINUSE); remove greygate's stale rules of c's mark and table, then
 * add, for IPv4 and (where the kernel has it) IPv6, the local route in
 * c->table and the rule "fwmark MARK ipproto tcp sport SPORT lookup
 * TABLE". Needs CAP_NET_ADMIN.
 * Return: 0, or -errno with nothing of it left in place
 * (markroute_explain says what each means).
 */
MUST_CHECK int markroute_install(const struct markroute_config *c,
                      struct markroute_result *out);

/*
 * markroute_remove - remove every rule of c's mark and table and the
 * local routes in c->table (none there is no error).
 * Return: the number of rules removed, or -errno.
 */
MUST_CHECK int markroute_remove(const struct markroute_config *c);

/*
 * markroute_count - the policy rules of c's mark and table there are now,
 * of both families (for tests and the status: one for IPv4 and one for
 * IPv6 where it is routed; more means something is wrong).
 * Return: the count, or -errno.
 */
int markroute_count(const struct markroute_config *c);

/*
 * markroute_check - can this kernel route by mark and port? Reads the
 * rules (no privilege needed) and looks for IP_TRANSPARENT.
 * Return: 0, or -errno (markroute_explain).
 */
int markroute_check(void);

/* markroute_explain - a sentence on what err from the above means. */
const char *markroute_explain(int err);

#endif
