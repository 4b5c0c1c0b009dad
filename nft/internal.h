/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared inside nft/ only: the batch sender and the ruleset builder. */
#ifndef GREYGATE_NFT_INTERNAL_H
#define GREYGATE_NFT_INTERNAL_H

#include <libmnl/libmnl.h>

#include "must_check.h"

#include "nftset_config.h"

/* Netlink datatypes nft uses to print set keys as addresses. */
#define NFT_TYPE_IPADDR 7
#define NFT_TYPE_IP6ADDR 8
/* nft's byte order tag for set keys in set userdata. */
#define NFT_BYTEORDER_BIG_ENDIAN 2

struct nft_batch;

/* A batch under construction: messages are numbered from 0; the sender
 * reports errors by that number. */
struct nft_batch *nft_batch_new(void);
void nft_batch_free(struct nft_batch *b);
/* nft_batch_msg - room for the next message's header; its number is
 * written to *index. Returns the buffer to build it in. */
char *nft_batch_msg(struct nft_batch *b, uint32_t *seq, size_t *index);
/* nft_batch_done - the message built in the buffer is complete. */
MUST_CHECK int nft_batch_done(struct nft_batch *b);
size_t nft_batch_count(const struct nft_batch *b);

/* Called with the number of each message the kernel refused. */
typedef void nft_batch_err_fn(size_t index, int err, void *ctx);

/* nft_batch_send - send and collect one answer per message.
 * Return: number of refused messages, or -errno. */
MUST_CHECK int nft_batch_send(struct mnl_socket *nl, struct nft_batch *b,
		   nft_batch_err_fn *on_err, void *ctx);

#ifndef NFT_TABLE_F_PERSIST
#define NFT_TABLE_F_PERSIST 0x4 /* Linux 6.9; older headers lack it */
#endif

/* nft_ruleset_build - append the table, counters, sets and chains.
 * @takeover: first take an orphaned persistent table of that name and
 * delete it, so the new one replaces it in the same batch. */
MUST_CHECK int nft_ruleset_build(struct nft_batch *b, const struct nftset_config *cfg,
		      bool takeover);

#endif
