// SPDX-License-Identifier: GPL-2.0-or-later
/* The transparent hand-off's policy route (see markroute.h): requests on
 * a NETLINK_ROUTE socket, one at a time, each with its acknowledgement. */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "markroute.h"

static const int families[] = {AF_INET, AF_INET6};

/* One rtnetlink conversation. */
struct rtnl {
	struct mnl_socket *nl;
	uint32_t seq, portid;
	/* A dump's datagram fits (MNL_SOCKET_BUFFER_SIZE is 8 KiB). */
	char buf[32768];
};

static int
rtnl_open(struct rtnl *r)
{
	r->nl = mnl_socket_open(NETLINK_ROUTE);
	if (!r->nl)
		return -errno;
	if (mnl_socket_bind(r->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int err = -errno;

		mnl_socket_close(r->nl);
		return err;
	}
	r->portid = mnl_socket_get_portid(r->nl);
	r->seq = (uint32_t)time(NULL);
	return 0;
}

static struct nlmsghdr *
rtnl_msg(struct rtnl *r, uint16_t type, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(r->buf);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++r->seq;
	return nlh;
}

/* Send nlh; read until its answer is whole (an ack, or a dump's end),
 * each message to cb. Return: 0 or -errno (the kernel's). */
static int
rtnl_talk(struct rtnl *r, struct nlmsghdr *nlh, mnl_cb_t cb, void *ctx)
{
	uint32_t seq = nlh->nlmsg_seq;
	ssize_t n;
	int ret;

	if (mnl_socket_sendto(r->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		n = mnl_socket_recvfrom(r->nl, r->buf, sizeof(r->buf));
		if (n < 0)
			return -errno;
		ret = mnl_cb_run(r->buf, (size_t)n, seq, r->portid, cb, ctx);
	} while (ret == MNL_CB_OK);
	return ret < 0 ? -errno : 0;
}

/* The selector by which greygate's rules are found and removed: mark,
 * table and greygate's protocol tag (an admin's rule of the same mark
 * and table is never touched), whatever port a previous run used. */
static void
put_rule_selector(struct nlmsghdr *nlh, int family,
                  const struct markroute_config *c)
{
	struct fib_rule_hdr *frh =
	        mnl_nlmsg_put_extra_header(nlh, sizeof(*frh));

	frh->family = (uint8_t)family;
	frh->action = FR_ACT_TO_TBL;
	frh->table = c->table < 256 ? (uint8_t)c->table : RT_TABLE_UNSPEC;
	mnl_attr_put_u32(nlh, FRA_TABLE, c->table);
	mnl_attr_put_u32(nlh, FRA_FWMARK, c->mark);
	mnl_attr_put_u32(nlh, FRA_FWMASK, UINT32_MAX);
	mnl_attr_put_u8(nlh, FRA_PROTOCOL, MARKROUTE_PROTOCOL);
}

static int
add_rule(struct rtnl *r, int family, const struct markroute_config *c)
{
	struct nlmsghdr *nlh =
	        rtnl_msg(r, RTM_NEWRULE, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK);
	struct fib_rule_port_range sport = {c->sport, c->sport};

	put_rule_selector(nlh, family, c);
	mnl_attr_put_u8(nlh, FRA_IP_PROTO, IPPROTO_TCP);
	mnl_attr_put(nlh, FRA_SPORT_RANGE, sizeof(sport), &sport);
	return rtnl_talk(r, nlh, NULL, NULL);
}

/* Every rule of c's mark and table in family, one request each (a
 * delete takes the first that matches). Return: how many, or -errno. */
static int
del_rules(struct rtnl *r, int family, const struct markroute_config *c)
{
	int n = 0, err;

	for (;;) {
		struct nlmsghdr *nlh = rtnl_msg(r, RTM_DELRULE, NLM_F_ACK);

		put_rule_selector(nlh, family, c);
		err = rtnl_talk(r, nlh, NULL, NULL);
		if (err == -ENOENT)
			return n;
		if (err < 0)
			return err;
		n++;
	}
}

/* RTM_NEWROUTE (replace: a leftover is taken over, never doubled) or
 * RTM_DELROUTE of "local default dev lo" in c->table. */
static int
put_local_route(struct rtnl *r, int family, uint16_t type,
                const struct markroute_config *c)
{
	uint16_t flags = type == RTM_NEWROUTE
	                         ? NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK
	                         : NLM_F_ACK;
	struct nlmsghdr *nlh = rtnl_msg(r, type, flags);
	struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));

	rtm->rtm_family = (uint8_t)family;
	rtm->rtm_table = c->table < 256 ? (uint8_t)c->table : RT_TABLE_UNSPEC;
	rtm->rtm_protocol = MARKROUTE_PROTOCOL;
	rtm->rtm_scope = RT_SCOPE_HOST;
	rtm->rtm_type = RTN_LOCAL;
	mnl_attr_put_u32(nlh, RTA_TABLE, c->table);
	mnl_attr_put_u32(nlh, RTA_OIF, if_nametoindex("lo"));
	return rtnl_talk(r, nlh, NULL, NULL);
}

/* Both families' rules and routes gone; the first error, if any. */
static int
remove_all(struct rtnl *r, const struct markroute_config *c)
{
	int removed = 0, first_err = 0;

	for (int i = 0; i < 2; i++) {
		int n = del_rules(r, families[i], c);
		int e = put_local_route(r, families[i], RTM_DELROUTE, c);

		if (n >= 0)
			removed += n;
		/* No IPv6 here, or nothing of ours: nothing to remove. */
		else if (n != -EAFNOSUPPORT && !first_err)
			first_err = n;
		if (e < 0 && e != -ESRCH && e != -ENOENT &&
		    e != -EAFNOSUPPORT && !first_err)
			first_err = e;
	}
	return first_err ? first_err : removed;
}

struct count_ctx {
	const struct markroute_config *c;
	int n;       /* rules of c's mark and table */
	int foreign; /* rules not greygate's using c's mark or table */
};

static int
on_rule_attr(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(a);

	if (type <= FRA_MAX &&
	    (((type == FRA_FWMARK || type == FRA_TABLE || type == FRA_FWMASK) &&
	      mnl_attr_get_payload_len(a) >= 4) ||
	     (type == FRA_PROTOCOL && mnl_attr_get_payload_len(a) >= 1)))
		tb[type] = a;
	return MNL_CB_OK;
}

static int
on_rule(const struct nlmsghdr *nlh, void *data)
{
	struct count_ctx *cc = data;
	const struct nlattr *tb[FRA_MAX + 1] = {0};
	const struct fib_rule_hdr *frh = mnl_nlmsg_get_payload(nlh);
	uint32_t table, mark;
	bool ours;

	if (mnl_attr_parse(nlh, sizeof(*frh), on_rule_attr, tb) < 0)
		return MNL_CB_OK;
	table = tb[FRA_TABLE] ? mnl_attr_get_u32(tb[FRA_TABLE]) : frh->table;
	mark = tb[FRA_FWMARK] ? mnl_attr_get_u32(tb[FRA_FWMARK]) : 0;
	ours = tb[FRA_PROTOCOL] &&
	       mnl_attr_get_u8(tb[FRA_PROTOCOL]) == MARKROUTE_PROTOCOL;
	if (tb[FRA_FWMARK] && mark == cc->c->mark && table == cc->c->table)
		cc->n++;
	if (!ours && ((tb[FRA_FWMARK] && mark == cc->c->mark) ||
	              (cc->c->table && table == cc->c->table)))
		cc->foreign++;
	return MNL_CB_OK;
}

/* Dump family's rules, each to on_rule. Return: 0 or -errno. */
static int
dump_rules(struct rtnl *r, int family, struct count_ctx *cc)
{
	struct nlmsghdr *nlh = rtnl_msg(r, RTM_GETRULE, NLM_F_DUMP);
	struct fib_rule_hdr *frh =
	        mnl_nlmsg_put_extra_header(nlh, sizeof(*frh));

	frh->family = (uint8_t)family;
	return rtnl_talk(r, nlh, on_rule, cc);
}

/* Both families' rules counted into cc. Return: 0 or -errno. */
static int
count_rules(struct rtnl *r, struct count_ctx *cc)
{
	int err = 0;

	for (int i = 0; !err && i < 2; i++) {
		err = dump_rules(r, families[i], cc);
		if (families[i] == AF_INET6 && err == -EAFNOSUPPORT)
			err = 0;
	}
	return err;
}

int
markroute_remove(const struct markroute_config *c)
{
	struct rtnl r;
	int n = rtnl_open(&r);

	if (n < 0)
		return n;
	n = remove_all(&r, c);
	mnl_socket_close(r.nl);
	return n;
}

int
markroute_install(const struct markroute_config *c,
                  struct markroute_result *out)
{
	struct rtnl r;
	int err = rtnl_open(&r);

	struct count_ctx cc = {.c = c};

	memset(out, 0, sizeof(*out));
	if (err < 0)
		return err;
	/* The mark or the table someone else routes by: not ours to
	 * take (nor to remove at the stop). */
	err = count_rules(&r, &cc);
	if (!err && cc.foreign)
		err = -EADDRINUSE;
	if (err) {
		mnl_socket_close(r.nl);
		return err;
	}
	err = remove_all(&r, c);
	if (err >= 0) {
		out->stale = (unsigned)err;
		err = 0;
	}
	for (int i = 0; !err && i < 2; i++) {
		err = put_local_route(&r, families[i], RTM_NEWROUTE, c);
		if (!err)
			err = add_rule(&r, families[i], c);
		/* A host without IPv6 routes IPv4 back alone. */
		if (families[i] == AF_INET6 && err == -EAFNOSUPPORT)
			err = 0;
		else if (families[i] == AF_INET6 && !err)
			out->ipv6 = true;
	}
	if (err)
		remove_all(&r, c);
	mnl_socket_close(r.nl);
	return err;
}

int
markroute_count(const struct markroute_config *c)
{
	struct count_ctx cc = {.c = c};
	struct rtnl r;
	int err = rtnl_open(&r);

	if (!err) {
		err = count_rules(&r, &cc);
		mnl_socket_close(r.nl);
	}
	return err < 0 ? err : cc.n;
}

int
markroute_check(void)
{
	struct markroute_config none = {0};
	int n = markroute_count(&none);
	int fd, one = 1;

	if (n < 0)
		return n;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Without the privilege this says nothing: greygated has it. */
	if (setsockopt(fd, SOL_IP, IP_TRANSPARENT, &one, sizeof(one)) < 0 &&
	    errno != EPERM) {
		n = -errno;
		close(fd);
		return n == -ENOPROTOOPT ? -EPROTONOSUPPORT : n;
	}
	close(fd);
	return 0;
}

const char *
markroute_explain(int err)
{
	switch (err) {
	case -EPERM:
	case -EACCES:
		return "no permission to change the routing rules: greygated "
		       "needs CAP_NET_ADMIN (run it as root)";
	case -EAFNOSUPPORT:
	case -EOPNOTSUPP:
		return "the kernel has no policy routing "
		       "(CONFIG_IP_MULTIPLE_TABLES): transparent mode needs "
		       "it; use proxy-v2 or xclient";
	case -EINVAL:
	case -ERANGE:
		return "the kernel refused a rule by mark and source port "
		       "(ip rule ... ipproto tcp sport: Linux 4.17): "
		       "transparent mode needs it; use proxy-v2 or xclient";
	case -EPROTONOSUPPORT:
		return "the kernel has no IP_TRANSPARENT: transparent mode "
		       "needs it; use proxy-v2 or xclient";
	case -EEXIST:
		return "such a rule exists and could not be removed";
	case -EADDRINUSE:
		return "another rule (not greygate's: ip rule show) routes by "
		       "this mark or looks up this table: greygate neither "
		       "takes nor removes it; choose another [handoff] mark "
		       "or route_table";
	default:
		return "the routing rules could not be changed";
	}
}
