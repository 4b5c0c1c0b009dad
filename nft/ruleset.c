// SPDX-License-Identifier: GPL-2.0-or-later
/* greygate's ruleset, built with libnftnl expressions: the owned table,
 * named counters, the six sets and two chains:
 *
 *   chain prerouting (nat, dstnat): for TCP to the SMTP port
 *     [meta mark & MARK != 0 accept]
 *     [iifname != IFACE accept]  (when the sensor watches one interface)
 *     ip saddr @allow4 counter allowed accept      (and ip6 / allow6)
 *     ip saddr @trap4 counter trapped redirect to :TRAP (the stutter)
 *     ip saddr @pass4 counter passed accept
 *     counter greylisted redirect to :TARPIT
 *   chain tarpit_guard (filter, input): TCP to the tarpit's ports that
 *     was not redirected (ct status dnat unset) is dropped.
 *   chain handoff_guard (filter, prerouting; with a PROXY hand-off only):
 *     iifname != lo ip daddr MTA tcp dport PORT counter drop: a PROXY
 *     listener believes any header, so only greygated may reach it.
 *   chains handoff_out (route, output) and handoff_in (filter,
 *     prerouting), with a transparent hand-off only:
 *       [out] ct state new meta mark M ct mark set M
 *       ct mark M meta mark set M
 *     the mark of greygated's hand-off sockets goes to their connection
 *     and from it onto the MTA's answers, local (output, rerouted) or
 *     from behind (prerouting), for the policy route that takes them back
 *     to greygated (daemon/handoff_route.c).
 *   chains sensor_in (filter, prerouting) and sensor_out (filter,
 *     postrouting), when the sensor hears NFLOG:
 *       tcp dport SMTP [iifname IFACE] ip saddr @allow4 log group G
 *       (and @pass4, ip6 and the v6 sets; out: sport, oifname, daddr)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter/nf_tables.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "internal.h"

#define SET_ID_BASE 0x6767 /* batch-local ids for rules to find new sets */

static void
set_comment(const struct nftset_config *cfg, enum nftset_kind kind,
	    int family, char *buf, size_t len)
{
	if (kind == NFTSET_ALLOW)
		snprintf(buf, len, "greygate: never greylisted (own networks, "
				   "provider banks)");
	else if (kind == NFTSET_PASS)
		snprintf(buf, len, "greygate: networks (/%u) that passed "
				   "greylisting",
			 family == AF_INET ? cfg->pass_prefix4
					   : cfg->pass_prefix6);
	else
		snprintf(buf, len, "greygate: clients that hit a greytrap");
}

/* The source address bits a set's keys have: mask for the lookup. */
static unsigned
key_bits(const struct nftset_config *cfg, enum nftset_kind kind, int family)
{
	unsigned full = family == AF_INET ? 32 : 128;

	if (kind == NFTSET_PASS)
		return family == AF_INET ? cfg->pass_prefix4
					 : cfg->pass_prefix6;
	return full;
}

static const char *const counter_names[] = {"allowed", "passed", "trapped",
					    "greylisted"};

static uint32_t
set_id(enum nftset_kind kind, int family)
{
	return SET_ID_BASE + (uint32_t)kind * 2 + (family == AF_INET6);
}

/* Puts one object's message into the batch. */
#define BATCH_PUT(b, type, flags, build_payload, obj)                          \
	({                                                                     \
		uint32_t seq_;                                                 \
		char *buf_ = nft_batch_msg(b, &seq_, NULL);                    \
		struct nlmsghdr *nlh_;                                         \
		int r_ = -ENOMEM;                                              \
		if (buf_) {                                                    \
			nlh_ = nftnl_nlmsg_build_hdr(buf_, type, NFPROTO_INET, \
						     (flags) | NLM_F_ACK,      \
						     seq_);                    \
			build_payload(nlh_, obj);                              \
			r_ = nft_batch_done(b);                                \
		}                                                              \
		r_;                                                            \
	})

/* type NEWTABLE with flags (EXCL: a table that is not ours is an
 * error), or DELTABLE. */
static int
put_table(struct nft_batch *b, const struct nftset_config *cfg, uint16_t type,
	  uint16_t nlflags)
{
	struct nftnl_table *t = nftnl_table_alloc();
	uint32_t flags = NFT_TABLE_F_OWNER;
	int r;

	if (!t)
		return -ENOMEM;
	if (cfg->persist)
		flags |= NFT_TABLE_F_PERSIST;
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, cfg->table);
	if (type == NFT_MSG_NEWTABLE)
		nftnl_table_set_u32(t, NFTNL_TABLE_FLAGS, flags);
	r = BATCH_PUT(b, type, nlflags, nftnl_table_nlmsg_build_payload, t);
	nftnl_table_free(t);
	return r;
}

static int
put_counter(struct nft_batch *b, const struct nftset_config *cfg,
	    const char *name)
{
	struct nftnl_obj *o = nftnl_obj_alloc();
	int r;

	if (!o)
		return -ENOMEM;
	nftnl_obj_set_u32(o, NFTNL_OBJ_FAMILY, NFPROTO_INET);
	nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, cfg->table);
	nftnl_obj_set_str(o, NFTNL_OBJ_NAME, name);
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_COUNTER);
	r = BATCH_PUT(b, NFT_MSG_NEWOBJ, NLM_F_CREATE,
		      nftnl_obj_nlmsg_build_payload, o);
	nftnl_obj_free(o);
	return r;
}

static int
put_set(struct nft_batch *b, const struct nftset_config *cfg,
	enum nftset_kind kind, int family)
{
	struct nftnl_set *s = nftnl_set_alloc();
	struct nftnl_udata_buf *ud = nftnl_udata_buf_alloc(256);
	char comment[128];
	int r = -ENOMEM;

	if (!s || !ud)
		goto out;
	set_comment(cfg, kind, family, comment, sizeof(comment));
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
	nftnl_set_set_str(s, NFTNL_SET_TABLE, cfg->table);
	nftnl_set_set_str(s, NFTNL_SET_NAME, nftset_set_name(kind, family));
	nftnl_set_set_u32(s, NFTNL_SET_ID, set_id(kind, family));
	nftnl_set_set_u32(s, NFTNL_SET_FLAGS,
			  kind == NFTSET_ALLOW ? NFT_SET_INTERVAL | NFT_SET_TIMEOUT
					       : NFT_SET_TIMEOUT);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_TYPE,
			  family == AF_INET ? NFT_TYPE_IPADDR : NFT_TYPE_IP6ADDR);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_LEN, family == AF_INET ? 4 : 16);
	/* nft needs the key's byte order to print interval elements. */
	nftnl_udata_put_u32(ud, NFTNL_UDATA_SET_KEYBYTEORDER,
			    NFT_BYTEORDER_BIG_ENDIAN);
	nftnl_udata_put_strz(ud, NFTNL_UDATA_SET_COMMENT, comment);
	nftnl_set_set_data(s, NFTNL_SET_USERDATA, nftnl_udata_buf_data(ud),
			   nftnl_udata_buf_len(ud));
	r = BATCH_PUT(b, NFT_MSG_NEWSET, NLM_F_CREATE,
		      nftnl_set_nlmsg_build_payload, s);
out:
	nftnl_udata_buf_free(ud);
	nftnl_set_free(s);
	return r;
}

static int
put_chain(struct nft_batch *b, const struct nftset_config *cfg,
	  const char *name, const char *type, uint32_t hook, int32_t prio)
{
	struct nftnl_chain *c = nftnl_chain_alloc();
	int r;

	if (!c)
		return -ENOMEM;
	nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, cfg->table);
	nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name);
	nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, type);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, hook);
	nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, prio);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, NF_ACCEPT);
	r = BATCH_PUT(b, NFT_MSG_NEWCHAIN, NLM_F_CREATE,
		      nftnl_chain_nlmsg_build_payload, c);
	nftnl_chain_free(c);
	return r;
}

/* --- expressions --- */

/* A rule missing one of its expressions must not be sent: without its
 * comparison, "mark & M != 0 accept" accepts everything. An expression
 * that cannot be made marks the rule being built as lost; put_rule then
 * refuses it. */
static bool expr_lost;

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

static void
add_meta(struct nftnl_rule *r, uint32_t key)
{
	struct nftnl_expr *e = expr_new("meta");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, NFT_REG_1);
	add_expr(r, e);
}

static void
add_cmp(struct nftnl_rule *r, uint32_t op, const void *data, uint32_t len)
{
	struct nftnl_expr *e = expr_new("cmp");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
	nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
	add_expr(r, e);
}

static void
add_payload(struct nftnl_rule *r, uint32_t base, uint32_t off, uint32_t len)
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
static void
add_bitwise(struct nftnl_rule *r, const void *mask, uint32_t len)
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

static void
add_lookup(struct nftnl_rule *r, enum nftset_kind kind, int family)
{
	struct nftnl_expr *e = expr_new("lookup");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
	nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET,
			   nftset_set_name(kind, family));
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SET_ID, set_id(kind, family));
	add_expr(r, e);
}

static void
add_counter(struct nftnl_rule *r, const char *name)
{
	struct nftnl_expr *e = expr_new("objref");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE, NFT_OBJECT_COUNTER);
	nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_IMM_NAME, name);
	add_expr(r, e);
}

static void
add_verdict(struct nftnl_rule *r, int verdict)
{
	struct nftnl_expr *e = expr_new("immediate");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)verdict);
	add_expr(r, e);
}

static void
add_redirect(struct nftnl_rule *r, uint16_t port)
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
static void
add_ct(struct nftnl_rule *r, uint32_t key)
{
	struct nftnl_expr *e = expr_new("ct");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	add_expr(r, e);
}

/* ct mark set reg1, or meta mark set reg1 */
static void
add_mark_set(struct nftnl_rule *r, bool on_ct)
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
static void
add_tcp_port(struct nftnl_rule *r, bool source, uint16_t port)
{
	uint8_t tcp = IPPROTO_TCP;
	uint16_t nport = htons(port);

	add_meta(r, NFT_META_L4PROTO);
	add_cmp(r, NFT_CMP_EQ, &tcp, sizeof(tcp));
	add_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, source ? 0 : 2, 2);
	add_cmp(r, NFT_CMP_EQ, &nport, sizeof(nport));
}

static void
add_tcp_dport(struct nftnl_rule *r, uint16_t port)
{
	add_tcp_port(r, false, port);
}

/* meta nfproto FAMILY; ip(6) saddr (source) or daddr [& MASK] @SET */
static void
add_addr_in(struct nftnl_rule *r, const struct nftset_config *cfg,
            enum nftset_kind kind, int family, bool source)
{
	uint8_t nfproto = family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6;
	unsigned len = family == AF_INET ? 4 : 16;
	unsigned bits = key_bits(cfg, kind, family);
	uint8_t mask[16] = {0};

	add_meta(r, NFT_META_NFPROTO);
	add_cmp(r, NFT_CMP_EQ, &nfproto, sizeof(nfproto));
	if (family == AF_INET)
		add_payload(r, NFT_PAYLOAD_NETWORK_HEADER, source ? 12 : 16,
		            4);
	else
		add_payload(r, NFT_PAYLOAD_NETWORK_HEADER, source ? 8 : 24,
		            16);
	if (bits < len * 8) {
		for (unsigned i = 0; i < bits; i++)
			mask[i / 8] |= (uint8_t)(0x80 >> (i % 8));
		add_bitwise(r, mask, len);
	}
	add_lookup(r, kind, family);
}

static void
add_saddr_in(struct nftnl_rule *r, const struct nftset_config *cfg,
	     enum nftset_kind kind, int family)
{
	add_addr_in(r, cfg, kind, family, true);
}

/* log group GROUP (the whole packet) */
static void
add_log(struct nftnl_rule *r, uint16_t group)
{
	struct nftnl_expr *e = expr_new("log");

	if (!e)
		return;
	nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP, group);
	add_expr(r, e);
}

static struct nftnl_rule *
rule_new(const struct nftset_config *cfg, const char *chain)
{
	struct nftnl_rule *r = nftnl_rule_alloc();

	expr_lost = false;

	if (!r)
		return NULL;
	nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, NFPROTO_INET);
	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, cfg->table);
	nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chain);
	return r;
}

static int
put_rule(struct nft_batch *b, struct nftnl_rule *r)
{
	int rc;

	if (!r || expr_lost) {
		expr_lost = false;
		if (r)
			nftnl_rule_free(r);
		return -ENOMEM;
	}
	rc = BATCH_PUT(b, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND,
		       nftnl_rule_nlmsg_build_payload, r);
	nftnl_rule_free(r);
	return rc;
}

static int
put_prerouting_rules(struct nft_batch *b, const struct nftset_config *cfg)
{
	static const int families[] = {AF_INET, AF_INET6};
	struct nftnl_rule *r;
	int rc;

	if (cfg->exempt_mark) {
		uint32_t mark = cfg->exempt_mark, zero = 0;

		r = rule_new(cfg, "prerouting");
		if (r) {
			add_meta(r, NFT_META_MARK);
			add_bitwise(r, &mark, sizeof(mark));
			add_cmp(r, NFT_CMP_NEQ, &zero, sizeof(zero));
			add_verdict(r, NF_ACCEPT);
		}
		rc = put_rule(b, r);
		if (rc)
			return rc;
	}
	/* Only where the sensor listens: a client it cannot see could never
	 * prove itself, so elsewhere port 25 is left alone. */
	if (cfg->iifname && cfg->iifname[0]) {
		char name[IFNAMSIZ] = {0};

		strncpy(name, cfg->iifname, sizeof(name) - 1);
		r = rule_new(cfg, "prerouting");
		if (r) {
			add_tcp_dport(r, cfg->smtp_port);
			add_meta(r, NFT_META_IIFNAME);
			add_cmp(r, NFT_CMP_NEQ, name, sizeof(name));
			add_verdict(r, NF_ACCEPT);
		}
		rc = put_rule(b, r);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < 2; i++) {
		static const struct {
			enum nftset_kind kind;
			const char *counter;
			bool redirect;
		} steps[] = {
			{NFTSET_ALLOW, "allowed", false},
			{NFTSET_TRAP, "trapped", true},
			{NFTSET_PASS, "passed", false},
		};

		for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
			r = rule_new(cfg, "prerouting");
			if (r) {
				add_tcp_dport(r, cfg->smtp_port);
				add_saddr_in(r, cfg, steps[s].kind,
					     families[i]);
				add_counter(r, steps[s].counter);
				if (steps[s].redirect)
					add_redirect(r, cfg->trap_port
								? cfg->trap_port
								: cfg->tarpit_port);
				else
					add_verdict(r, NF_ACCEPT);
			}
			rc = put_rule(b, r);
			if (rc)
				return rc;
		}
	}
	r = rule_new(cfg, "prerouting");
	if (r) {
		add_tcp_dport(r, cfg->smtp_port);
		add_counter(r, "greylisted");
		add_redirect(r, cfg->tarpit_port);
	}
	return put_rule(b, r);
}

/* The sensor hears the fast path only: SMTP of the clients the prerouting
 * chain lets through (the allow and pass sets), both ways, logged to its
 * NFLOG group; greylisted and trapped clients' packets were redirected
 * (their port is the tarpit's by now, after NAT) and never reach it. In
 * on prerouting, out on postrouting, both after the redirect and before
 * the replies' NAT is undone. */
static int
put_sensor_rules(struct nft_batch *b, const struct nftset_config *cfg)
{
	static const enum nftset_kind kinds[] = {NFTSET_ALLOW, NFTSET_PASS};
	static const int families[] = {AF_INET, AF_INET6};
	char name[IFNAMSIZ] = {0};
	struct nftnl_rule *r;
	int rc;

	if (cfg->iifname)
		strncpy(name, cfg->iifname, sizeof(name) - 1);
	rc = put_chain(b, cfg, "sensor_in", "filter", NF_INET_PRE_ROUTING,
	               NF_IP_PRI_FILTER);
	if (!rc)
		rc = put_chain(b, cfg, "sensor_out", "filter",
		               NF_INET_POST_ROUTING, NF_IP_PRI_FILTER);
	for (int in = 1; !rc && in >= 0; in--)
		for (size_t f = 0; !rc && f < 2; f++)
			for (size_t k = 0; !rc && k < 2; k++) {
				r = rule_new(cfg, in ? "sensor_in"
				                     : "sensor_out");
				if (r) {
					add_tcp_port(r, !in, cfg->smtp_port);
					if (name[0]) {
						add_meta(r,
						         in ? NFT_META_IIFNAME
						            : NFT_META_OIFNAME);
						add_cmp(r, NFT_CMP_EQ, name,
						        sizeof(name));
					}
					add_addr_in(r, cfg, kinds[k],
					            families[f], in);
					add_log(r, cfg->sensor_group);
				}
				rc = put_rule(b, r);
			}
	return rc;
}

static int
put_guard_rule(struct nft_batch *b, const struct nftset_config *cfg,
	       uint16_t port)
{
	struct nftnl_rule *r = rule_new(cfg, "tarpit_guard");
	uint32_t dnat = IPS_DST_NAT, zero = 0;

	if (!r)
		return -ENOMEM;
	add_tcp_dport(r, port);
	add_ct(r, NFT_CT_STATUS);
	add_bitwise(r, &dnat, sizeof(dnat));
	add_cmp(r, NFT_CMP_EQ, &zero, sizeof(zero));
	add_verdict(r, NF_DROP);
	return put_rule(b, r);
}

/* Whatever reaches the MTA's PROXY listener from outside (not over
 * loopback: greygated's own connections are local) is dropped, in
 * prerouting, so that an MTA behind a router is guarded too. */
static int
put_handoff_guard_rule(struct nft_batch *b, const struct nftset_config *cfg)
{
	struct nftnl_rule *r = rule_new(cfg, "handoff_guard");
	bool v4 = cfg->handoff_family == AF_INET;
	uint8_t nfproto = v4 ? NFPROTO_IPV4 : NFPROTO_IPV6;
	char lo[IFNAMSIZ] = "lo";

	if (!r)
		return -ENOMEM;
	add_meta(r, NFT_META_NFPROTO);
	add_cmp(r, NFT_CMP_EQ, &nfproto, sizeof(nfproto));
	add_payload(r, NFT_PAYLOAD_NETWORK_HEADER, v4 ? 16 : 24, v4 ? 4 : 16);
	add_cmp(r, NFT_CMP_EQ, cfg->handoff_addr, v4 ? 4 : 16);
	add_tcp_dport(r, cfg->handoff_port);
	add_meta(r, NFT_META_IIFNAME);
	add_cmp(r, NFT_CMP_NEQ, lo, sizeof(lo));
	add_counter(r, "handoff_refused");
	add_verdict(r, NF_DROP);
	return put_rule(b, r);
}

/* The transparent hand-off's way back (see the top). */
static int
put_handoff_mark_rules(struct nft_batch *b, const struct nftset_config *cfg)
{
	uint32_t mark = cfg->handoff_mark, is_new = IP_CT_NEW, zero = 0;
	struct nftnl_rule *r;
	int rc = put_chain(b, cfg, "handoff_out", "route", NF_INET_LOCAL_OUT,
			   NF_IP_PRI_MANGLE);

	if (!rc)
		rc = put_chain(b, cfg, "handoff_in", "filter",
			       NF_INET_PRE_ROUTING, NF_IP_PRI_MANGLE);
	/* Only a connection's first packet: a hand-off socket whose tuple
	 * met an existing connection (its port chosen alike) must not mark
	 * that one. */
	r = rule_new(cfg, "handoff_out");
	if (r) {
		uint32_t bit = NF_CT_STATE_BIT(is_new);

		add_ct(r, NFT_CT_STATE);
		add_bitwise(r, &bit, sizeof(bit));
		add_cmp(r, NFT_CMP_NEQ, &zero, sizeof(zero));
		add_meta(r, NFT_META_MARK);
		add_cmp(r, NFT_CMP_EQ, &mark, sizeof(mark));
		add_mark_set(r, true);
	}
	if (!rc)
		rc = put_rule(b, r);
	else if (r)
		nftnl_rule_free(r);
	for (int i = 0; !rc && i < 2; i++) {
		r = rule_new(cfg, i ? "handoff_in" : "handoff_out");
		if (r) {
			add_ct(r, NFT_CT_MARK);
			add_cmp(r, NFT_CMP_EQ, &mark, sizeof(mark));
			add_mark_set(r, false);
		}
		rc = put_rule(b, r);
	}
	return rc;
}

int
nft_ruleset_build(struct nft_batch *b, const struct nftset_config *cfg,
		  bool takeover)
{
	int r = 0;

	/* Taking an orphaned persistent table: claim it (OWNER|PERSIST on
	 * the existing table), delete it, build it anew, all in one batch:
	 * packets see the old rules until the new ones are in place. */
	if (takeover) {
		r = put_table(b, cfg, NFT_MSG_NEWTABLE, NLM_F_CREATE);
		if (!r)
			r = put_table(b, cfg, NFT_MSG_DELTABLE, 0);
	}
	if (!r)
		r = put_table(b, cfg, NFT_MSG_NEWTABLE,
			      NLM_F_CREATE | NLM_F_EXCL);

	for (size_t i = 0; !r && i < sizeof(counter_names) / sizeof(*counter_names); i++)
		r = put_counter(b, cfg, counter_names[i]);
	for (int k = 0; !r && k < NFTSET_KINDS; k++) {
		r = put_set(b, cfg, (enum nftset_kind)k, AF_INET);
		if (!r)
			r = put_set(b, cfg, (enum nftset_kind)k, AF_INET6);
	}
	if (!r)
		r = put_chain(b, cfg, "prerouting", "nat", NF_INET_PRE_ROUTING,
			      NF_IP_PRI_NAT_DST);
	if (!r)
		r = put_chain(b, cfg, "tarpit_guard", "filter", NF_INET_LOCAL_IN,
			      NF_IP_PRI_FILTER);
	if (!r)
		r = put_prerouting_rules(b, cfg);
	if (!r)
		r = put_guard_rule(b, cfg, cfg->tarpit_port);
	if (!r && cfg->trap_port && cfg->trap_port != cfg->tarpit_port)
		r = put_guard_rule(b, cfg, cfg->trap_port);
	if (!r && cfg->handoff_family) {
		r = put_counter(b, cfg, "handoff_refused");
		if (!r)
			r = put_chain(b, cfg, "handoff_guard", "filter",
				      NF_INET_PRE_ROUTING, NF_IP_PRI_MANGLE);
		if (!r)
			r = put_handoff_guard_rule(b, cfg);
	}
	if (!r && cfg->handoff_mark)
		r = put_handoff_mark_rules(b, cfg);
	if (!r && cfg->sensor_group)
		r = put_sensor_rules(b, cfg);
	return r;
}
