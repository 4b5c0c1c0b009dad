/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What greygate's nftables table is made of: its settings and its kinds
 * of sets. Apart from nftset.h so that the ruleset builder and the
 * expressions (inside nft/) need the table's description only, not the
 * manager that uses them. */
#ifndef GREYGATE_NFTSET_CONFIG_H
#define GREYGATE_NFTSET_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

struct nftset_config {
	const char *table;    /* table name in family inet ("greygate") */
	uint16_t smtp_port;   /* port clients connect to (25) */
	uint16_t tarpit_port; /* where unproven clients are sent (2525) */
	uint16_t trap_port;   /* where trapped clients are sent (0: the
				 tarpit port) */
	uint32_t exempt_mark; /* packets with any of these mark bits skip
				 greygate (0: no such rule) */
	const char *iifname;  /* steer only port 25 arriving here (NULL or
				 "": every interface) */
	uint8_t pass_prefix4; /* key length of pass4 (24) */
	uint8_t pass_prefix6; /* key length of pass6 (64) */
	bool persist;         /* keep the table if greygated dies (fail
				 closed; Linux 6.9+), take it back on start */
	/* The MTA's PROXY listener for the hand-off: TCP to it that did not
	 * come over loopback (greygated's own) is dropped, here or on its
	 * way to an MTA behind. handoff_family 0: no such rule. */
	uint8_t handoff_family;
	uint8_t handoff_addr[16];
	uint16_t handoff_port;
	/* Transparent hand-off: connections greygated opens with this mark
	 * (from the client's address) have it copied to their conntrack
	 * entry and from there onto the MTA's answers, on output (MTA on
	 * this host) and prerouting (MTA behind), so a policy route takes
	 * them back to greygated. 0: no such chains. */
	uint32_t handoff_mark;
	/* The sensor's NFLOG group: SMTP of allowed and passed clients,
	 * both ways, is logged there (chains sensor_in, sensor_out) for it
	 * to hear the fast path only. 0: no such chains (it captures on
	 * the interface). */
	uint16_t sensor_group;
};

/* allow sets hold intervals (any CIDR); pass and trap sets are hash sets
 * of one key length each (the rule masks the source address to it), so an
 * update costs the same however large they grow. */
enum nftset_kind {
	NFTSET_ALLOW = 0, /* allow4/allow6: never greylisted, any CIDR */
	NFTSET_PASS = 1,  /* pass4/pass6: networks of pass_prefix4/6 */
	NFTSET_TRAP = 2,  /* trap4/trap6: single addresses */
	NFTSET_TRUST = 3, /* trust4/trust6: single addresses a trusted
			     first contact passed (issue 56), where
			     pass sets hold networks */
	NFTSET_KINDS
};

/* nftset_set_name - "allow4", "pass6", ... */
static inline const char *
nftset_set_name(enum nftset_kind kind, int family)
{
	static const char *const names[NFTSET_KINDS][2] = {
		{"allow4", "allow6"}, {"pass4", "pass6"}, {"trap4", "trap6"},
		{"trust4", "trust6"}};

	return names[kind][family == AF_INET6];
}

#endif
