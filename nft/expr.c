// SPDX-License-Identifier: GPL-2.0-or-later
/* The expressions greygate's rules are made of (libnftnl), one helper
 * each, for the ruleset builder (ruleset.c): what nft would write as
 * "tcp dport 25", "ip saddr & MASK @pass4", "log group G", ... */
#include <arpa/inet.h>
#include <stdio.h> /* (libnftnl's headers use FILE) */
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "expr.h"

#define SET_ID_BASE 0x6767 /* batch-local ids for rules to find new sets */

/* The source address bits a set's keys have: mask for the lookup. */
unsigned
nft_key_bits(const struct nftset_config *cfg, enum nftset_kind kind, int family)
{
	unsigned full = family == AF_INET ? 32 : 128;

	if (kind == NFTSET_PASS)
		return family == AF_INET ? cfg->pass_prefix4
					 : cfg->pass_prefix6;
	return full;
}

uint32_t
nft_set_id(enum nftset_kind kind, int family)
{
	return SET_ID_BASE + (uint32_t)kind * 2 + (family == AF_INET6);
}

/* --- expressions --- */

/* A rule missing one of its expressions must not be sent: without its
 * comparison, "mark & M != 0 accept" accepts everything. An expression
 * that cannot be made marks the rule being built as lost; put_rule then
 * refuses it. */
static bool expr_lost;

bool
nft_expr_lost(void)
{
	return expr_lost;
}

void
nft_expr_lost_reset(void)
{
	expr_lost = false;
}

static struct nftnl_expr *
expr_new(const char *name)
{
	struct nftnl_expr *e = nftnl_expr_alloc(name);

	if (!e)
		expr_lost = true;
	return e;
}

static void
add_expr(struct nftnl_rule *r, struct nftnl_expr *e)
{
	if (e)
		nftnl_rule_add_expr(r, e);
}

void
nft_add_meta(struct nftnl_rule *r, uint32_t key)
{
	struct nftnl_expr *e = expr_new("meta");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, NFT_REG_1);
	add_expr(r, e);
}

void
nft_add_cmp(struct nftnl_rule *r, uint32_t op, const void *data, uint32_t len)
{
	struct nftnl_expr *e = expr_new("cmp");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
	nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
	add_expr(r, e);
}

void
nft_add_payload(struct nftnl_rule *r, uint32_t base, uint32_t off, uint32_t len)
{
	struct nftnl_expr *e = expr_new("payload");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, off);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, NFT_REG_1);
	add_expr(r, e);
}

/* reg1 &= mask (len bytes) */
void
nft_add_bitwise(struct nftnl_rule *r, const void *mask, uint32_t len)
{
	static const uint8_t zero[16];
	struct nftnl_expr *e = expr_new("bitwise");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, mask, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, zero, len);
	add_expr(r, e);
}

void
nft_add_lookup(struct nftnl_rule *r, enum nftset_kind kind, int family)
{
	struct nftnl_expr *e = expr_new("lookup");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
	nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET,
			   nftset_set_name(kind, family));
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SET_ID, nft_set_id(kind, family));
	add_expr(r, e);
}

void
nft_add_counter(struct nftnl_rule *r, const char *name)
{
	struct nftnl_expr *e = expr_new("objref");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE, NFT_OBJECT_COUNTER);
	nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_IMM_NAME, name);
	add_expr(r, e);
}

void
nft_add_verdict(struct nftnl_rule *r, int verdict)
{
	struct nftnl_expr *e = expr_new("immediate");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)verdict);
	add_expr(r, e);
}

void
nft_add_redirect(struct nftnl_rule *r, uint16_t port)
{
	uint16_t nport = htons(port);
	struct nftnl_expr *imm = expr_new("immediate");
	struct nftnl_expr *e = expr_new("redir");

	if (imm) {
		nftnl_expr_set_u32(imm, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
		nftnl_expr_set(imm, NFTNL_EXPR_IMM_DATA, &nport, sizeof(nport));
		add_expr(r, imm);
	}
	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_REG_PROTO_MIN, NFT_REG_1);
		add_expr(r, e);
	}
}

/* ct KEY into reg1 */
void
nft_add_ct(struct nftnl_rule *r, uint32_t key)
{
	struct nftnl_expr *e = expr_new("ct");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	add_expr(r, e);
}

/* ct mark set reg1, or meta mark set reg1 */
void
nft_add_mark_set(struct nftnl_rule *r, bool on_ct)
{
	struct nftnl_expr *e = expr_new(on_ct ? "ct" : "meta");

	if (!e)
		return;
	nftnl_expr_set_u32(e, on_ct ? NFTNL_EXPR_CT_KEY : NFTNL_EXPR_META_KEY,
			   on_ct ? NFT_CT_MARK : NFT_META_MARK);
	nftnl_expr_set_u32(e, on_ct ? NFTNL_EXPR_CT_SREG : NFTNL_EXPR_META_SREG,
			   NFT_REG_1);
	add_expr(r, e);
}

/* meta l4proto tcp; tcp sport PORT (source) or dport PORT */
void
nft_add_tcp_port(struct nftnl_rule *r, bool source, uint16_t port)
{
	uint8_t tcp = IPPROTO_TCP;
	uint16_t nport = htons(port);

	nft_add_meta(r, NFT_META_L4PROTO);
	nft_add_cmp(r, NFT_CMP_EQ, &tcp, sizeof(tcp));
	nft_add_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, source ? 0 : 2, 2);
	nft_add_cmp(r, NFT_CMP_EQ, &nport, sizeof(nport));
}

void
nft_add_tcp_dport(struct nftnl_rule *r, uint16_t port)
{
	nft_add_tcp_port(r, false, port);
}

/* meta nfproto FAMILY; ip(6) saddr (source) or daddr [& MASK] @SET */
void
nft_add_addr_in(struct nftnl_rule *r, const struct nftset_config *cfg,
            enum nftset_kind kind, int family, bool source)
{
	uint8_t nfproto = family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6;
	unsigned len = family == AF_INET ? 4 : 16;
	unsigned bits = nft_key_bits(cfg, kind, family);
	uint8_t mask[16] = {0};

	nft_add_meta(r, NFT_META_NFPROTO);
	nft_add_cmp(r, NFT_CMP_EQ, &nfproto, sizeof(nfproto));
	if (family == AF_INET)
		nft_add_payload(r, NFT_PAYLOAD_NETWORK_HEADER, source ? 12 : 16,
		            4);
	else
		nft_add_payload(r, NFT_PAYLOAD_NETWORK_HEADER, source ? 8 : 24,
		            16);
	if (bits < len * 8) {
		for (unsigned i = 0; i < bits; i++)
			mask[i / 8] |= (uint8_t)(0x80 >> (i % 8));
		nft_add_bitwise(r, mask, len);
	}
	nft_add_lookup(r, kind, family);
}

void
nft_add_saddr_in(struct nftnl_rule *r, const struct nftset_config *cfg,
	     enum nftset_kind kind, int family)
{
	nft_add_addr_in(r, cfg, kind, family, true);
}

/* log group GROUP (the whole packet) */
void
nft_add_log(struct nftnl_rule *r, uint16_t group)
{
	struct nftnl_expr *e = expr_new("log");

	if (!e)
		return;
	nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP, group);
	add_expr(r, e);
}

