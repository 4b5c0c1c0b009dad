// SPDX-License-Identifier: GPL-2.0-or-later
/* Every table's base chains as the kernel holds them (nftset.h): what
 * greygatectl check compares greygate's own hooks with, for a firewall
 * (fw4, firewalld, an admin's own) whose chain on the same hook sees
 * port 25 first. */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "internal.h"
#include "nftset-int.h"

struct chains_dump {
	nftset_chain_fn *fn;
	void *ctx;
	int stop; /* the callback's non-zero value */
};

static int
on_chain_msg(const struct nlmsghdr *nlh, void *ctx)
{
	struct chains_dump *d = ctx;
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct nftset_chain out = {0};
	const char *s;

	if (!c)
		return MNL_CB_ERROR;
	if (nftnl_chain_nlmsg_parse(nlh, c) < 0) {
		nftnl_chain_free(c);
		return MNL_CB_ERROR;
	}
	/* (a chain without a hook is reached by jumps only) */
	if (!d->stop && nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM)) {
		out.family = nftnl_chain_get_u32(c, NFTNL_CHAIN_FAMILY);
		out.hook = nftnl_chain_get_u32(c, NFTNL_CHAIN_HOOKNUM);
		out.priority = (int32_t)nftnl_chain_get_u32(c, NFTNL_CHAIN_PRIO);
		if ((s = nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE)))
			snprintf(out.table, sizeof(out.table), "%s", s);
		if ((s = nftnl_chain_get_str(c, NFTNL_CHAIN_NAME)))
			snprintf(out.name, sizeof(out.name), "%s", s);
		if ((s = nftnl_chain_get_str(c, NFTNL_CHAIN_TYPE)))
			snprintf(out.type, sizeof(out.type), "%s", s);
		d->stop = d->fn(&out, d->ctx);
	}
	nftnl_chain_free(c);
	return MNL_CB_OK;
}

int
nftset_each_base_chain(struct nftset *nft, nftset_chain_fn *fn, void *ctx)
{
	static char buf[1 << 16];
	struct chains_dump d = {fn, ctx, 0};
	struct nlmsghdr *nlh;
	int r;

	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETCHAIN, NFPROTO_UNSPEC,
	                            NLM_F_DUMP | NLM_F_ACK,
	                            (uint32_t)time(NULL));
	r = nftset_dump(nft, buf, sizeof(buf), nlh, on_chain_msg, &d);
	return r < 0 ? r : d.stop;
}
