/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inside the sets (nftset.c the queue and the commit, nftset_list.c the
 * reading back): struct nftset and what they share. No other module
 * includes it: nftset.h is the API. */
#ifndef GREYGATE_NFTSET_INT_H
#define GREYGATE_NFTSET_INT_H

#include <libmnl/libmnl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nftset.h"

enum op_type { OP_ADD, OP_DEL, OP_FLUSH };

struct op {
	enum op_type type;
	enum nftset_kind kind;
	struct nftset_prefix prefix; /* the key; allow: the interval's start */
	struct ip_range range;       /* what the op covers (for refusals) */
	bool has_end;                /* allow: an interval end element */
	uint8_t end[16];             /* its key: the address after the last */
	uint64_t timeout_ms;
	char *comment;
};

struct nftset {
	struct nftset_config cfg;
	char table[64];
	struct mnl_socket *nl;
	struct op *ops;
	size_t nops, ops_alloc;
	uint64_t batches;
	uint64_t changes_failed; /* nftset_note_failed */
	/* the pass sets' elements of a persistent table taken back, as
	 * they were before its rebuild emptied them (nftset_kept_passes) */
	struct nftset_elem *kept;
	size_t nkept, kept_alloc;
};

/* nftset_key_bits - the key length of kind's set of family (-1: any,
 * the allow sets' intervals). */
int nftset_key_bits(const struct nftset *nft, enum nftset_kind kind,
                    int family);

/* nftset_dump - send the dump request nlh (built in buf) on the sets'
 * socket and run cb on each message of the answer, read into buf (len
 * bytes). Return: 0 or -errno. */
int nftset_dump(struct nftset *nft, char *buf, size_t len,
                const struct nlmsghdr *nlh, mnl_cb_t cb, void *ctx);

#endif
