// SPDX-License-Identifier: GPL-2.0-or-later
/* greygate's ruleset, built with libnftnl expressions: the owned table,
 * named counters, the eight sets and two chains:
 *
 *   chain prerouting (nat, dstnat - 10): for TCP to the SMTP port
 *     [meta mark & MARK != 0 accept]
 *     [iifname != IFACE accept]  (when the sensor watches one interface)
 *     ip saddr @allow4 counter allowed accept      (and ip6 / allow6)
 *     ip saddr @trap4 counter trapped redirect to :TRAP (the stutter)
 *     ip saddr @trust4 counter trusted accept  (one address each, issue 56)
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
 *       tcp dport SMTP iifname IFACE (or != lo) ip saddr @allow4 log
 *       group G accept
 *       (and @trust4, @pass4, ip6 and the v6 sets; out: sport,
 *       oifname, daddr)
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

#include "expr.h"
#include "internal.h"

/* Before every dstnat chain of the same hook (a router's port forward,
 * fw4's dstnat, Docker's): conntrack takes the first NAT a connection
 * meets, and chains of equal priority run in an order their tables'
 * loading chose (a firewall's reload put its port forward first and
 * sent bots past the tarpit: tests/integration/test-firewall.sh). */
#define GREYGATE_PRI_NAT (NF_IP_PRI_NAT_DST - 10)

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
	else if (kind == NFTSET_TRUST)
		snprintf(buf, len, "greygate: clients passed alone (trusted "
				   "by their DNS, or by their STARTTLS)");
	else
		snprintf(buf, len, "greygate: clients that hit a greytrap");
}

static const char *const counter_names[] = {"allowed", "passed", "trapped",
					    "trusted", "greylisted"};

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
	nftnl_set_set_u32(s, NFTNL_SET_ID, nft_set_id(kind, family));
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

static struct nftnl_rule *
rule_new(const struct nftset_config *cfg, const char *chain)
{
	struct nftnl_rule *r = nftnl_rule_alloc();

	nft_expr_lost_reset();

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

	if (!r || nft_expr_lost()) {
		nft_expr_lost_reset();
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
			nft_add_meta(r, NFT_META_MARK);
			nft_add_bitwise(r, &mark, sizeof(mark));
			nft_add_cmp(r, NFT_CMP_NEQ, &zero, sizeof(zero));
			nft_add_verdict(r, NF_ACCEPT);
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
			nft_add_tcp_dport(r, cfg->smtp_port);
			nft_add_meta(r, NFT_META_IIFNAME);
			nft_add_cmp(r, NFT_CMP_NEQ, name, sizeof(name));
			nft_add_verdict(r, NF_ACCEPT);
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
			{NFTSET_TRUST, "trusted", false},
			{NFTSET_PASS, "passed", false},
		};

		for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
			r = rule_new(cfg, "prerouting");
			if (r) {
				nft_add_tcp_dport(r, cfg->smtp_port);
				nft_add_saddr_in(r, cfg, steps[s].kind,
					     families[i]);
				nft_add_counter(r, steps[s].counter);
				if (steps[s].redirect)
					nft_add_redirect(r, cfg->trap_port
								? cfg->trap_port
								: cfg->tarpit_port);
				else
					nft_add_verdict(r, NF_ACCEPT);
			}
			rc = put_rule(b, r);
			if (rc)
				return rc;
		}
	}
	r = rule_new(cfg, "prerouting");
	if (r) {
		nft_add_tcp_dport(r, cfg->smtp_port);
		nft_add_counter(r, "greylisted");
		nft_add_redirect(r, cfg->tarpit_port);
	}
	return put_rule(b, r);
}

/* The sensor hears the fast path only: SMTP of the clients the prerouting
 * chain lets through (the allow, trust and pass sets: issue 56, an
 * address passed alone went unheard), both ways, logged to its NFLOG
 * group once (accepted in this chain: an address in two sets is logged
 * by the first); greylisted and trapped clients' packets were redirected
 * (their port is the tarpit's by now, after NAT) and never reach it. In
 * on prerouting, out on postrouting, both after the redirect and before
 * the replies' NAT is undone. */
static int
put_sensor_rules(struct nft_batch *b, const struct nftset_config *cfg)
{
	static const enum nftset_kind kinds[] = {NFTSET_ALLOW, NFTSET_TRUST,
	                                         NFTSET_PASS};
	const size_t nkinds = sizeof(kinds) / sizeof(kinds[0]);
	static const int families[] = {AF_INET, AF_INET6};
	char name[IFNAMSIZ] = {0};
	/* (greygated's own connections to a local MTA, its probe among
	 * them, go over loopback: never a client's fast path, issue 57) */
	static const char loopback[IFNAMSIZ] = "lo";
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
			for (size_t k = 0; !rc && k < nkinds; k++) {
				r = rule_new(cfg, in ? "sensor_in"
				                     : "sensor_out");
				if (r) {
					nft_add_tcp_port(r, !in, cfg->smtp_port);
					nft_add_meta(r, in ? NFT_META_IIFNAME
					                   : NFT_META_OIFNAME);
					if (name[0])
						nft_add_cmp(r, NFT_CMP_EQ, name,
						        sizeof(name));
					else
						nft_add_cmp(r, NFT_CMP_NEQ,
						        loopback,
						        sizeof(loopback));
					nft_add_addr_in(r, cfg, kinds[k],
					            families[f], in);
					nft_add_log(r, cfg->sensor_group);
					nft_add_verdict(r, NF_ACCEPT);
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
	nft_add_tcp_dport(r, port);
	nft_add_ct(r, NFT_CT_STATUS);
	nft_add_bitwise(r, &dnat, sizeof(dnat));
	nft_add_cmp(r, NFT_CMP_EQ, &zero, sizeof(zero));
	nft_add_verdict(r, NF_DROP);
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
	nft_add_meta(r, NFT_META_NFPROTO);
	nft_add_cmp(r, NFT_CMP_EQ, &nfproto, sizeof(nfproto));
	nft_add_payload(r, NFT_PAYLOAD_NETWORK_HEADER, v4 ? 16 : 24, v4 ? 4 : 16);
	nft_add_cmp(r, NFT_CMP_EQ, cfg->handoff_addr, v4 ? 4 : 16);
	nft_add_tcp_dport(r, cfg->handoff_port);
	nft_add_meta(r, NFT_META_IIFNAME);
	nft_add_cmp(r, NFT_CMP_NEQ, lo, sizeof(lo));
	nft_add_counter(r, "handoff_refused");
	nft_add_verdict(r, NF_DROP);
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

		nft_add_ct(r, NFT_CT_STATE);
		nft_add_bitwise(r, &bit, sizeof(bit));
		nft_add_cmp(r, NFT_CMP_NEQ, &zero, sizeof(zero));
		nft_add_meta(r, NFT_META_MARK);
		nft_add_cmp(r, NFT_CMP_EQ, &mark, sizeof(mark));
		nft_add_mark_set(r, true);
	}
	if (!rc)
		rc = put_rule(b, r);
	else if (r)
		nftnl_rule_free(r);
	for (int i = 0; !rc && i < 2; i++) {
		r = rule_new(cfg, i ? "handoff_in" : "handoff_out");
		if (r) {
			nft_add_ct(r, NFT_CT_MARK);
			nft_add_cmp(r, NFT_CMP_EQ, &mark, sizeof(mark));
			nft_add_mark_set(r, false);
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
			      GREYGATE_PRI_NAT);
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
