/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The nft manager: greygate's own nftables table (owned by this process's
 * netlink socket, so it vanishes when the process does), its sets of
 * allowed, passed and trapped clients, the chains that send everyone else
 * to the tarpit, and batched element updates with timeouts. It knows
 * nothing of SMTP. */
#ifndef GREYGATE_NFTSET_H
#define GREYGATE_NFTSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "must_check.h"
#include "iprange.h"

struct nftset;

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

/* An address prefix: a network or, at full length, one address. */
struct nftset_prefix {
	uint8_t family;    /* AF_INET or AF_INET6 */
	uint8_t prefix;    /* bits */
	uint8_t bytes[16]; /* network order, bits past prefix zero */
};

/* allow sets hold intervals (any CIDR); pass and trap sets are hash sets
 * of one key length each (the rule masks the source address to it), so an
 * update costs the same however large they grow. */
enum nftset_kind {
	NFTSET_ALLOW = 0, /* allow4/allow6: never greylisted, any CIDR */
	NFTSET_PASS = 1,  /* pass4/pass6: networks of pass_prefix4/6 */
	NFTSET_TRAP = 2,  /* trap4/trap6: single addresses */
	NFTSET_KINDS
};

/* An element read back from the kernel. */
struct nftset_elem {
	struct nftset_prefix prefix; /* pass, trap: the key */
	struct ip_range range;       /* allow: the interval (any range) */
	uint64_t timeout_ms; /* 0: none */
	uint64_t expires_ms; /* time left; 0 with no timeout */
	char comment[128];
};

/*
 * nftset_open - create the table, its counters, sets and chains in one
 * batch, owned by a new netlink socket.
 * @cfg: copied (table name too)
 * @out: the manager (nftset_close)
 * With cfg->persist, a table of that name that a dead greygated left
 * (persistent, no owner) is taken back: its rules are replaced in one
 * batch; its sets start empty until the caller refills them (from its
 * store, and from nftset_kept_passes).
 * Return: 0; -EEXIST when a table of that name exists (not ours);
 * -EPERM without CAP_NET_ADMIN; other -errno. nftset_explain tells a
 * person what each means and what to do.
 */
int nftset_open(const struct nftset_config *cfg, struct nftset **out);

/* nftset_close - close the socket: the kernel drops the table. NULL ok. */
void nftset_close(struct nftset *nft);

/* nftset_explain - a sentence on what err from nftset_open means. */
const char *nftset_explain(int err);

/*
 * nftset_add - queue adding (or refreshing) prefix in the kind's set.
 * @timeout_ms: element lifetime; 0 for none. A refresh restarts it.
 * @comment: shown by `nft list` (copied; NULL for none)
 * Return: 0, -EINVAL (bad prefix, or not of the set's key length: a
 * pass set takes networks of exactly pass_prefix4/6 bits, a trap set
 * single addresses), -ENOMEM.
 */
MUST_CHECK int nftset_add(struct nftset *nft, enum nftset_kind kind,
	       const struct nftset_prefix *prefix, uint64_t timeout_ms,
	       const char *comment);

/* nftset_add_range - queue adding the interval [range->lo, range->hi]
 * to allow4 or allow6 (any range, not only a CIDR). The kernel refuses
 * one that overlaps an element already there: merge before.
 * Return: 0, -EINVAL, -ENOMEM. */
MUST_CHECK int nftset_add_range(struct nftset *nft, const struct ip_range *range,
		     uint64_t timeout_ms, const char *comment);

/* nftset_del - queue removing prefix. Return: 0, -EINVAL, -ENOMEM. */
MUST_CHECK int nftset_del(struct nftset *nft, enum nftset_kind kind,
	       const struct nftset_prefix *prefix);

/* nftset_flush - queue emptying the kind's IPv4 and IPv6 sets. */
MUST_CHECK int nftset_flush(struct nftset *nft, enum nftset_kind kind);

/* nftset_queued - operations waiting for nftset_commit. */
size_t nftset_queued(const struct nftset *nft);

/* Told about each queued operation the kernel refused (a pass or trap
 * key as the range of its prefix). */
typedef void nftset_fail_fn(enum nftset_kind kind,
			    const struct ip_range *range, int err, void *ctx);

/*
 * nftset_commit - send the queue as one netlink batch, however long, and
 * wait for the kernel's answer. A batch is all-or-nothing, so operations
 * the kernel refuses are reported to fail() and the rest is sent again
 * without them (still one batch: packets see the sets before or after,
 * never in between).
 * Return: the number of refused operations (0: all applied), or -errno
 * when the batch could not be sent (the queue is then dropped).
 */
MUST_CHECK int nftset_commit(struct nftset *nft, nftset_fail_fn *fail, void *ctx);

typedef int nftset_elem_fn(const struct nftset_elem *elem, void *ctx);

/*
 * nftset_list - read the kind's sets back from the kernel (IPv4 first).
 * Slow for big sets (a dump): never on the hot path.
 * Return: 0, the callback's non-zero value, or -errno.
 */
int nftset_list(struct nftset *nft, enum nftset_kind kind, nftset_elem_fn *fn,
		void *ctx);

/*
 * nftset_kept_passes - the pass sets' elements (time left in expires_ms)
 * of the persistent table nftset_open took back from a greygated that
 * died, as they were before the rebuild emptied the sets: the caller
 * puts back what its store lacks (nothing else knows of them). Only
 * keys of the pass length configured now. Return: how many (*out valid
 * until nftset_kept_passes_done or nftset_close); 0 for a new table.
 */
size_t nftset_kept_passes(const struct nftset *nft,
			  const struct nftset_elem **out);

/* nftset_kept_passes_done - they were taken: their memory goes. */
void nftset_kept_passes_done(struct nftset *nft);

/* nftset_batches_sent - batches sent to the kernel since nftset_open
 * (each attempt of a commit counts). */
uint64_t nftset_batches_sent(const struct nftset *nft);

/* nftset_set_name - "allow4", "pass6", ... */
const char *nftset_set_name(enum nftset_kind kind, int family);

#endif
