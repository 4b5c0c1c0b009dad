// SPDX-License-Identifier: GPL-2.0-or-later
/* The nft manager's handle: the owning netlink socket, the queue of element
 * operations and its batched commit, and reading sets back. Elements are
 * intervals (a prefix is [network, broadcast+1)), sent as a start and an
 * end element in one message so a refusal names one prefix. Never
 * NLM_F_EXCL on elements: re-adding refreshes, and a batch is
 * all-or-nothing. */
#include <arpa/inet.h>
#include <errno.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "internal.h"
#include "nftset-int.h"

#define ELEMS_PER_MSG 64 /* elements sharing one netlink message */
/* Well under the room a batch keeps for one message (nft/batch.c). */
#define MSG_BYTES_MAX 12000
#define SOCKET_BUFFER (8 << 20)

const char *
nftset_explain(int err)
{
	switch (err) {
	case -EEXIST:
		return "a table of that name already exists and is not ours: "
		       "another greygated owns it, or it was left by hand "
		       "(nft list tables; remove a stale one with nft delete "
		       "table inet NAME, or set another table name)";
	case -EPERM:
	case -EACCES:
		return "no permission to change nftables: greygated needs "
		       "CAP_NET_ADMIN (run it as root)";
	case -EPROTONOSUPPORT:
	case -EAFNOSUPPORT:
		return "the kernel has no nf_tables: load it (modprobe "
		       "nf_tables) or use a kernel built with it";
	case -EOPNOTSUPP:
	case -ENOENT:
		return "the kernel lacks a feature greygate needs (owned "
		       "tables: Linux 5.12; persist: Linux 6.9; timeouts in "
		       "sets; nat redirect for inet): load nft_redir, nft_nat, "
		       "nft_ct, nft_objref, or use a newer kernel, or turn "
		       "persist off";
	default:
		return "nftables refused greygate's table";
	}
}

static int
socket_open(struct mnl_socket **out)
{
	struct mnl_socket *nl = mnl_socket_open(NETLINK_NETFILTER);
	int one = 1, size = SOCKET_BUFFER, fd, r;

	if (!nl)
		return -errno;
	fd = mnl_socket_get_fd(nl);
	/* Acks without the echoed request, and room for thousands. */
	mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		r = -errno;
		mnl_socket_close(nl);
		return r;
	}
	*out = nl;
	return 0;
}

static void
first_error(size_t index, int err, void *ctx)
{
	int *first = ctx;

	if (!*first)
		*first = err;
}

struct table_info {
	bool found;
	uint32_t flags;
	bool owned;
};

static int
on_table(const struct nlmsghdr *nlh, void *ctx)
{
	struct table_info *ti = ctx;
	struct nftnl_table *t = nftnl_table_alloc();

	if (!t)
		return MNL_CB_ERROR;
	if (nftnl_table_nlmsg_parse(nlh, t) == 0) {
		ti->found = true;
		if (nftnl_table_is_set(t, NFTNL_TABLE_FLAGS))
			ti->flags = nftnl_table_get_u32(t, NFTNL_TABLE_FLAGS);
		ti->owned = nftnl_table_is_set(t, NFTNL_TABLE_OWNER);
	}
	nftnl_table_free(t);
	return MNL_CB_OK;
}

/* Asks for the table by name: is it there, with which flags, does a live
 * socket own it. Return: 0 (see ti->found) or -errno (-EPERM: no
 * CAP_NET_ADMIN). An owned table refuses NEWTABLE from any other socket
 * with EPERM, so this tells "taken" from "not allowed". */
static int
table_info(struct mnl_socket *nl, const char *name, struct table_info *ti)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nftnl_table *t = nftnl_table_alloc();
	uint32_t seq = (uint32_t)time(NULL);
	struct nlmsghdr *nlh;
	ssize_t n;
	int r;

	memset(ti, 0, sizeof(*ti));
	if (!t)
		return -ENOMEM;
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, name);
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETTABLE, NFPROTO_INET,
				    NLM_F_ACK, seq);
	nftnl_table_nlmsg_build_payload(nlh, t);
	nftnl_table_free(t);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		r = mnl_cb_run(buf, (size_t)n, seq, mnl_socket_get_portid(nl),
			       on_table, ti);
	} while (r > 0);
	if (r < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* One element of a pass set kept for nftset_kept_passes (only those of
 * the key length configured now: a set of another pass_prefix is not
 * what this greygated's passes are). */
static bool
host_bits_clear(const struct nftset_prefix *p)
{
	size_t len = p->family == AF_INET ? 4 : 16;

	for (size_t bit = p->prefix; bit < len * 8; bit++)
		if (p->bytes[bit / 8] & (0x80u >> (bit % 8)))
			return false;
	return true;
}

static int
keep_elem(const struct nftset_elem *e, void *ctx)
{
	struct nftset *nft = ctx;

	if (!e->expires_ms || !host_bits_clear(&e->prefix))
		return 0;
	if (nft->nkept == nft->kept_alloc) {
		size_t n = nft->kept_alloc ? nft->kept_alloc * 2 : 64;
		struct nftset_elem *grown = realloc(nft->kept, n * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		nft->kept = grown;
		nft->kept_alloc = n;
	}
	nft->kept[nft->nkept++] = *e;
	return 0;
}

int
nftset_open(const struct nftset_config *cfg, struct nftset **out)
{
	struct nftset *nft = calloc(1, sizeof(*nft));
	struct nft_batch *b = NULL;
	struct table_info ti;
	bool takeover;
	int r, err = 0;

	if (!nft)
		return -ENOMEM;
	nft->cfg = *cfg;
	if (!nft->cfg.pass_prefix4)
		nft->cfg.pass_prefix4 = 24;
	if (!nft->cfg.pass_prefix6)
		nft->cfg.pass_prefix6 = 64;
	if (strlen(cfg->table) >= sizeof(nft->table) ||
	    nft->cfg.pass_prefix4 > 32 || nft->cfg.pass_prefix6 > 128) {
		r = -ENAMETOOLONG;
		goto fail;
	}
	strcpy(nft->table, cfg->table);
	nft->cfg.table = nft->table;
	r = socket_open(&nft->nl);
	if (r)
		goto fail;
	r = table_info(nft->nl, nft->table, &ti);
	if (r)
		goto fail;
	/* Ours to take back only if a persistent greygate table lost its
	 * owner (greygated died with persist on). */
	takeover = ti.found && nft->cfg.persist && !ti.owned &&
		   (ti.flags & NFT_TABLE_F_PERSIST);
	if (ti.found && !takeover) {
		r = -EEXIST;
		goto fail;
	}
	/* What the dead owner had passed: the store may lack some of it
	 * (writes it could not save), and the rebuild below empties the
	 * sets. Best effort: a table unreadable here is rebuilt all the
	 * same, from the store alone. */
	if (takeover && nftset_list(nft, NFTSET_PASS, keep_elem, nft) < 0)
		nft->nkept = 0;
	b = nft_batch_new();
	if (!b) {
		r = -ENOMEM;
		goto fail;
	}
	r = nft_ruleset_build(b, &nft->cfg, takeover);
	if (r)
		goto fail;
	r = nft_batch_send(nft->nl, b, first_error, &err);
	if (r > 0)
		r = err;
	if (r)
		goto fail;
	nft_batch_free(b);
	*out = nft;
	return 0;
fail:
	nft_batch_free(b);
	if (nft->nl)
		mnl_socket_close(nft->nl);
	free(nft->kept);
	free(nft);
	return r;
}

static void
ops_clear(struct nftset *nft)
{
	for (size_t i = 0; i < nft->nops; i++)
		free(nft->ops[i].comment);
	nft->nops = 0;
}

void
nftset_close(struct nftset *nft)
{
	if (!nft)
		return;
	ops_clear(nft);
	free(nft->ops);
	free(nft->kept);
	mnl_socket_close(nft->nl);
	free(nft);
}

static int
queue_op(struct nftset *nft, const struct op *op)
{
	if (nft->nops == nft->ops_alloc) {
		size_t n = nft->ops_alloc ? nft->ops_alloc * 2 : 64;
		struct op *grown = realloc(nft->ops, n * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		nft->ops = grown;
		nft->ops_alloc = n;
	}
	nft->ops[nft->nops++] = *op;
	return 0;
}

/* The key length a set takes: any (allow), the pass length, full (trap).
 * Returns -1 for "any". */
int
nftset_key_bits(const struct nftset *nft, enum nftset_kind kind, int family)
{
	if (kind == NFTSET_ALLOW)
		return -1;
	if (kind == NFTSET_PASS)
		return family == AF_INET ? nft->cfg.pass_prefix4
					 : nft->cfg.pass_prefix6;
	return family == AF_INET ? 32 : 128;
}

enum nftset_kind
nftset_pass_kind(const struct nftset *nft, const struct nftset_prefix *prefix)
{
	int whole = prefix->family == AF_INET ? 32 : 128;

	return prefix->prefix == whole &&
	               nftset_key_bits(nft, NFTSET_PASS, prefix->family) < whole
	               ? NFTSET_TRUST
	               : NFTSET_PASS;
}

static bool
prefix_valid(const struct nftset *nft, enum nftset_kind kind,
	     const struct nftset_prefix *p)
{
	int want;

	if (kind >= NFTSET_KINDS ||
	    !((p->family == AF_INET && p->prefix <= 32) ||
	      (p->family == AF_INET6 && p->prefix <= 128)))
		return false;
	want = nftset_key_bits(nft, kind, p->family);
	return want < 0 || p->prefix == want;
}

/* An op on the allow set's interval [range->lo, range->hi]. */
static void
interval_op(struct op *op, const struct ip_range *range)
{
	op->kind = NFTSET_ALLOW;
	op->range = *range;
	op->prefix.family = range->family;
	memcpy(op->prefix.bytes, range->lo, 16);
	op->prefix.prefix = (uint8_t)(ip_range_prefix(range) < 0
					      ? 0
					      : ip_range_prefix(range));
	/* No end past the family's last address: the interval runs to the
	 * top. */
	op->has_end = ip_addr_next(range->family, range->hi, op->end);
}

static int
queue_add(struct nftset *nft, struct op *op, uint64_t timeout_ms,
	  const char *comment)
{
	int r;

	op->type = OP_ADD;
	op->timeout_ms = timeout_ms;
	if (comment && !(op->comment = strdup(comment)))
		return -ENOMEM;
	r = queue_op(nft, op);
	if (r)
		free(op->comment);
	return r;
}

int
nftset_add_range(struct nftset *nft, const struct ip_range *range,
		 uint64_t timeout_ms, const char *comment)
{
	struct op op = {0};

	if ((range->family != AF_INET && range->family != AF_INET6) ||
	    ip_addr_cmp(range->family, range->lo, range->hi) > 0)
		return -EINVAL;
	interval_op(&op, range);
	return queue_add(nft, &op, timeout_ms, comment);
}

/* The op for prefix in kind's set (allow: as an interval). */
static int
prefix_op(const struct nftset *nft, enum nftset_kind kind,
	  const struct nftset_prefix *prefix, struct op *op)
{
	memset(op, 0, sizeof(*op));
	if (!prefix_valid(nft, kind, prefix))
		return -EINVAL;
	ip_range_of_prefix(prefix->family, prefix->bytes, prefix->prefix,
			   &op->range);
	if (kind == NFTSET_ALLOW) {
		interval_op(op, &op->range);
		return 0;
	}
	op->kind = kind;
	op->prefix = *prefix;
	return 0;
}

int
nftset_add(struct nftset *nft, enum nftset_kind kind,
	   const struct nftset_prefix *prefix, uint64_t timeout_ms,
	   const char *comment)
{
	struct op op;
	int r = prefix_op(nft, kind, prefix, &op);

	return r < 0 ? r : queue_add(nft, &op, timeout_ms, comment);
}

int
nftset_del(struct nftset *nft, enum nftset_kind kind,
	   const struct nftset_prefix *prefix)
{
	struct op op;
	int r = prefix_op(nft, kind, prefix, &op);

	if (r < 0)
		return r;
	op.type = OP_DEL;
	return queue_op(nft, &op);
}

int
nftset_flush(struct nftset *nft, enum nftset_kind kind)
{
	struct op op = {.type = OP_FLUSH, .kind = kind};

	if (kind >= NFTSET_KINDS)
		return -EINVAL;
	op.prefix.family = AF_INET;
	if (queue_op(nft, &op))
		return -ENOMEM;
	op.prefix.family = AF_INET6;
	return queue_op(nft, &op);
}

uint64_t
nftset_note_failed(struct nftset *nft, uint64_t n)
{
	return nft->changes_failed += n;
}

uint64_t
nftset_changes_failed(const struct nftset *nft)
{
	return nft ? nft->changes_failed : 0;
}

size_t
nftset_queued(const struct nftset *nft)
{
	return nft->nops;
}

static struct nftnl_set_elem *
elem_new(const uint8_t *key, size_t len, uint32_t flags, uint64_t timeout_ms,
	 const char *comment)
{
	struct nftnl_set_elem *e = nftnl_set_elem_alloc();

	if (!e)
		return NULL;
	nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, key, (uint32_t)len);
	if (flags)
		nftnl_set_elem_set_u32(e, NFTNL_SET_ELEM_FLAGS, flags);
	if (timeout_ms) {
		/* Both, so that re-adding restarts the element's clock. */
		nftnl_set_elem_set_u64(e, NFTNL_SET_ELEM_TIMEOUT, timeout_ms);
		nftnl_set_elem_set_u64(e, NFTNL_SET_ELEM_EXPIRATION, timeout_ms);
	}
	if (comment) {
		struct nftnl_udata_buf *ud = nftnl_udata_buf_alloc(256);

		if (ud && nftnl_udata_put_strz(ud, NFTNL_UDATA_SET_ELEM_COMMENT,
					       comment))
			nftnl_set_elem_set(e, NFTNL_SET_ELEM_USERDATA,
					   nftnl_udata_buf_data(ud),
					   nftnl_udata_buf_len(ud));
		nftnl_udata_buf_free(ud);
	}
	return e;
}

/* Adds op's element(s) to s. */
static int
add_elems(struct nftnl_set *s, const struct op *op)
{
	size_t len = op->prefix.family == AF_INET ? 4 : 16;
	struct nftnl_set_elem *e =
		elem_new(op->prefix.bytes, len, 0,
			 op->type == OP_ADD ? op->timeout_ms : 0, op->comment);

	if (!e)
		return -ENOMEM;
	nftnl_set_elem_add(s, e);
	/* Only the allow sets hold intervals: the others take the key
	 * alone. The kernel takes no timeout on an interval's end: the
	 * start element's covers both. */
	if (op->kind == NFTSET_ALLOW && op->has_end) {
		e = elem_new(op->end, len, NFT_SET_ELEM_INTERVAL_END, 0, NULL);
		if (!e)
			return -ENOMEM;
		nftnl_set_elem_add(s, e);
	}
	return 0;
}

/* One message for ops[idx[0..n)], all of one type, kind and family. */
static int
put_msg(struct nftset *nft, struct nft_batch *b, const struct op *ops,
	const size_t *idx, size_t n)
{
	const struct op *op = &ops[idx[0]];
	struct nftnl_set *s = nftnl_set_alloc();
	uint16_t type = op->type == OP_ADD ? NFT_MSG_NEWSETELEM
					   : NFT_MSG_DELSETELEM;
	uint16_t flags = op->type == OP_ADD ? NLM_F_CREATE : 0;
	struct nlmsghdr *nlh;
	uint32_t seq;
	char *buf;
	int r = 0;

	if (!s)
		return -ENOMEM;
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
	nftnl_set_set_str(s, NFTNL_SET_TABLE, nft->table);
	nftnl_set_set_str(s, NFTNL_SET_NAME,
			  nftset_set_name(op->kind, op->prefix.family));
	for (size_t i = 0; i < n && r == 0 && op->type != OP_FLUSH; i++)
		r = add_elems(s, &ops[idx[i]]);
	if (r == 0) {
		buf = nft_batch_msg(b, &seq, NULL);
		r = -ENOMEM;
		if (buf) {
			nlh = nftnl_nlmsg_build_hdr(buf, type, NFPROTO_INET,
						    flags | NLM_F_ACK, seq);
			nftnl_set_elems_nlmsg_build_payload(nlh, s);
			r = nft_batch_done(b);
		}
	}
	nftnl_set_free(s);
	return r;
}

/* A generous bound on the bytes op's elements take in a message. */
static size_t
op_bytes(const struct op *op)
{
	return 160 + (op->comment ? strlen(op->comment) + 16 : 0);
}

/* Can ops a and b share one message? */
static bool
same_msg(const struct op *a, const struct op *b)
{
	return a->type == b->type && a->type != OP_FLUSH &&
	       a->kind == b->kind && a->prefix.family == b->prefix.family;
}

struct commit_state {
	const struct op *ops;  /* this chunk's ops */
	size_t *idx;           /* ops of each message, in message order */
	size_t *msg_first;     /* message number -> its first entry in idx */
	size_t *msg_len;       /* message number -> how many ops */
	bool *refused;         /* per op: not to be sent again */
	bool *alone;           /* per op: send in a message of its own */
	nftset_fail_fn *fail;
	void *ctx;
	int failed;            /* refusals reported to fail() */
};

static void
on_refused(size_t msg, int err, void *ctx)
{
	struct commit_state *st = ctx;
	const struct op *op;
	size_t i;

	if (st->msg_len[msg] > 1) {
		/* Which element? Send each alone to find out. */
		for (size_t k = 0; k < st->msg_len[msg]; k++)
			st->alone[st->idx[st->msg_first[msg] + k]] = true;
		return;
	}
	i = st->idx[st->msg_first[msg]];
	op = &st->ops[i];
	if (st->refused[i])
		return;
	st->refused[i] = true;
	/* Deleting what is already gone is what was wanted. An overlap in
	 * an interval set (EEXIST) is not: the kernel keeps one of the two,
	 * so the caller merges first, and is told if it did not. */
	if (op->type == OP_DEL && err == -ENOENT)
		return;
	st->failed++;
	if (st->fail)
		st->fail(op->kind, &op->range, err, st->ctx);
}

/* Builds one batch of the ops not refused: runs of alike ops share a
 * message (up to ELEMS_PER_MSG), ops marked alone get one each. */
static int
build_batch(struct nftset *nft, struct nft_batch *b, struct commit_state *st,
	    size_t n)
{
	size_t nidx = 0, nmsg = 0;
	int r = 0;

	for (size_t i = 0; i < n && r == 0;) {
		size_t first = nidx, bytes;

		if (st->refused[i]) {
			i++;
			continue;
		}
		bytes = op_bytes(&st->ops[i]);
		st->idx[nidx++] = i++;
		while (!st->alone[st->idx[first]] && i < n &&
		       nidx - first < ELEMS_PER_MSG && !st->refused[i] &&
		       !st->alone[i] &&
		       bytes + op_bytes(&st->ops[i]) < MSG_BYTES_MAX &&
		       same_msg(&st->ops[st->idx[first]], &st->ops[i])) {
			bytes += op_bytes(&st->ops[i]);
			st->idx[nidx++] = i++;
		}
		st->msg_first[nmsg] = first;
		st->msg_len[nmsg] = nidx - first;
		nmsg++;
		r = put_msg(nft, b, st->ops, st->idx + first, nidx - first);
	}
	return r;
}

/* Sends ops[0..n) as one batch; while the kernel refuses some, sends the
 * rest again without them. */
static int
commit_chunk(struct nftset *nft, const struct op *ops, size_t n,
	     nftset_fail_fn *fail, void *ctx)
{
	struct commit_state st = {
		ops,	 calloc(n, sizeof(size_t)), calloc(n, sizeof(size_t)),
		calloc(n, sizeof(size_t)), calloc(n, sizeof(bool)),
		calloc(n, sizeof(bool)), fail, ctx, 0};
	int r = -ENOMEM;

	if (!st.idx || !st.msg_first || !st.msg_len || !st.refused ||
	    !st.alone)
		goto out;
	/* Each round either applies the batch or learns something: a
	 * refused op, or which messages to split. */
	for (int attempt = 0; attempt < 16; attempt++) {
		struct nft_batch *b = nft_batch_new();

		r = b ? build_batch(nft, b, &st, n) : -ENOMEM;
		if (r == 0 && nft_batch_count(b)) {
			nft->batches++;
			r = nft_batch_send(nft->nl, b, on_refused, &st);
		}
		nft_batch_free(b);
		if (r <= 0)
			break;
	}
out:
	free(st.idx);
	free(st.msg_first);
	free(st.msg_len);
	free(st.refused);
	free(st.alone);
	return r < 0 ? r : st.failed;
}

int
nftset_commit(struct nftset *nft, nftset_fail_fn *fail, void *ctx)
{
	/* One batch, whatever its length: a reload of the allow lists
	 * (their flush and every new element) must land at once. */
	int r = nft->nops ? commit_chunk(nft, nft->ops, nft->nops, fail, ctx)
			  : 0;

	ops_clear(nft);
	return r;
}

uint64_t
nftset_batches_sent(const struct nftset *nft)
{
	return nft->batches;
}
