/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inside nft/ only: the expressions greygate's rules are made of
 * (expr.c), for the ruleset builder. Each appends to rule r; an
 * expression that cannot be made (no memory) marks the rule being built
 * as lost (nft_expr_lost), and the builder then refuses to send it: a
 * rule short of its comparison would match everything. */
#ifndef GREYGATE_NFT_EXPR_H
#define GREYGATE_NFT_EXPR_H

#include <stdbool.h>
#include <stdint.h>

#include "nftset_config.h"

struct nftnl_rule;

/* nft_expr_lost - an expression of the rule being built was lost. */
bool nft_expr_lost(void);
/* nft_expr_lost_reset - a new rule is being built. */
void nft_expr_lost_reset(void);

/* nft_key_bits - the source address bits a set's keys have. */
unsigned nft_key_bits(const struct nftset_config *cfg, enum nftset_kind kind,
                      int family);
/* nft_set_id - the batch-local id a new set's rules find it by. */
uint32_t nft_set_id(enum nftset_kind kind, int family);

/* meta KEY into reg1 */
void nft_add_meta(struct nftnl_rule *r, uint32_t key);
/* reg1 OP data (len bytes) */
void nft_add_cmp(struct nftnl_rule *r, uint32_t op, const void *data,
                 uint32_t len);
/* len bytes at off from base into reg1 */
void nft_add_payload(struct nftnl_rule *r, uint32_t base, uint32_t off,
                     uint32_t len);
/* reg1 &= mask (len bytes) */
void nft_add_bitwise(struct nftnl_rule *r, const void *mask, uint32_t len);
/* reg1 @ the kind's set of that family */
void nft_add_lookup(struct nftnl_rule *r, enum nftset_kind kind, int family);
/* counter name (a named counter object) */
void nft_add_counter(struct nftnl_rule *r, const char *name);
/* accept, drop, ... */
void nft_add_verdict(struct nftnl_rule *r, int verdict);
/* redirect to :port */
void nft_add_redirect(struct nftnl_rule *r, uint16_t port);
/* ct KEY into reg1 */
void nft_add_ct(struct nftnl_rule *r, uint32_t key);
/* ct mark set reg1, or meta mark set reg1 */
void nft_add_mark_set(struct nftnl_rule *r, bool on_ct);
/* meta l4proto tcp; tcp sport PORT (source) or dport PORT */
void nft_add_tcp_port(struct nftnl_rule *r, bool source, uint16_t port);
void nft_add_tcp_dport(struct nftnl_rule *r, uint16_t port);
/* meta nfproto FAMILY; ip(6) saddr (source) or daddr [& MASK] @SET */
void nft_add_addr_in(struct nftnl_rule *r, const struct nftset_config *cfg,
                     enum nftset_kind kind, int family, bool source);
void nft_add_saddr_in(struct nftnl_rule *r, const struct nftset_config *cfg,
                      enum nftset_kind kind, int family);
/* log group GROUP (the whole packet) */
void nft_add_log(struct nftnl_rule *r, uint16_t group);

#endif
