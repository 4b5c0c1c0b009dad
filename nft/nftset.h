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
#include "nftset_config.h"

struct nftset;

/* An address prefix: a network or, at full length, one address. */
struct nftset_prefix {
	uint8_t family;    /* AF_INET or AF_INET6 */
	uint8_t prefix;    /* bits */
	uint8_t bytes[16]; /* network order, bits past prefix zero */
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

/* nftset_pass_kind - the set a pass of prefix goes to: NFTSET_TRUST for
 * a single address where the pass sets hold networks (a trusted client's
 * pass, issue 56), else NFTSET_PASS. */
enum nftset_kind nftset_pass_kind(const struct nftset *nft,
				  const struct nftset_prefix *prefix);

/* nftset_del - queue removing prefix. Return: 0, -EINVAL, -ENOMEM. */
MUST_CHECK int nftset_del(struct nftset *nft, enum nftset_kind kind,
	       const struct nftset_prefix *prefix);

/* nftset_flush - queue emptying the kind's IPv4 and IPv6 sets. */
MUST_CHECK int nftset_flush(struct nftset *nft, enum nftset_kind kind);

/* nftset_queued - operations waiting for nftset_commit. */
size_t nftset_queued(const struct nftset *nft);

/* nftset_note_failed - n more changes that will not reach the kernel
 * (refused when queued, at the commit, or not sent). Return: how many
 * so far, since nftset_open. */
uint64_t nftset_note_failed(struct nftset *nft, uint64_t n);

/* nftset_changes_failed - how many so far (NULL: 0). */
uint64_t nftset_changes_failed(const struct nftset *nft);

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

/* A base chain of any table (nftset_each_base_chain). */
struct nftset_chain {
	uint32_t family;  /* NFPROTO_INET, _IPV4, _IPV6, ... */
	char table[64];
	char name[64];
	char type[16];    /* "filter", "nat", "route" */
	uint32_t hook;    /* NF_INET_PRE_ROUTING, ... */
	int32_t priority; /* lower runs first */
};

typedef int nftset_chain_fn(const struct nftset_chain *chain, void *ctx);

/* nftset_each_base_chain - every table's base chains, greygate's too
 * (its table is cfg->table of family inet). Return: 0, the callback's
 * non-zero value, or -errno. */
int nftset_each_base_chain(struct nftset *nft, nftset_chain_fn *fn,
                           void *ctx);

/* nftset_batches_sent - batches sent to the kernel since nftset_open
 * (each attempt of a commit counts). */
uint64_t nftset_batches_sent(const struct nftset *nft);


#endif
