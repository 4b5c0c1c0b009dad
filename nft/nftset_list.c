// SPDX-License-Identifier: GPL-2.0-or-later
/* The sets read back from the kernel (nftset.h): each element of a set,
 * with its comment and the time it has left, ranges joined back from
 * an interval set's elements; the pass sets' elements of a persistent
 * table kept from before its rebuild. */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/set.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "internal.h"
#include "nftset-int.h"

struct raw_elem {
	uint8_t key[16];
	bool is_end;
	uint64_t timeout_ms, expires_ms;
	char comment[128];
};

struct dump {
	struct raw_elem *elems;
	size_t n, alloc;
	size_t keylen;
};

static void
elem_comment(struct nftnl_set_elem *e, char *out, size_t len)
{
	uint32_t ulen = 0;
	const uint8_t *ud = nftnl_set_elem_get(e, NFTNL_SET_ELEM_USERDATA, &ulen);

	out[0] = 0;
	/* TLVs: type (1 byte), length (1 byte), value. */
	for (uint32_t i = 0; ud && i + 2 <= ulen;) {
		uint8_t type = ud[i], l = ud[i + 1];

		if (i + 2u + l > ulen)
			break;
		if (type == NFTNL_UDATA_SET_ELEM_COMMENT && l > 0) {
			size_t n = l < len ? l : len - 1;

			memcpy(out, ud + i + 2, n);
			out[n] = 0;
			return;
		}
		i += 2u + l;
	}
}

static int
on_dump_msg(const struct nlmsghdr *nlh, void *ctx)
{
	struct dump *d = ctx;
	struct nftnl_set *s = nftnl_set_alloc();
	struct nftnl_set_elems_iter *it;
	struct nftnl_set_elem *e;

	if (!s)
		return MNL_CB_ERROR;
	if (nftnl_set_elems_nlmsg_parse(nlh, s) < 0) {
		nftnl_set_free(s);
		return MNL_CB_ERROR;
	}
	it = nftnl_set_elems_iter_create(s);
	/* iter_next returns the element it stands on, then moves on. */
	while (it && (e = nftnl_set_elems_iter_next(it))) {
		struct raw_elem *re;
		uint32_t klen = 0;
		const void *key = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &klen);

		if (!key || klen != d->keylen)
			continue;
		if (d->n == d->alloc) {
			size_t na = d->alloc ? d->alloc * 2 : 64;
			struct raw_elem *g = realloc(d->elems, na * sizeof(*g));

			if (!g)
				break;
			d->elems = g;
			d->alloc = na;
		}
		re = &d->elems[d->n++];
		memset(re, 0, sizeof(*re));
		memcpy(re->key, key, klen);
		re->is_end = nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_FLAGS) &&
			     (nftnl_set_elem_get_u32(e, NFTNL_SET_ELEM_FLAGS) &
			      NFT_SET_ELEM_INTERVAL_END);
		if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_TIMEOUT))
			re->timeout_ms =
				nftnl_set_elem_get_u64(e, NFTNL_SET_ELEM_TIMEOUT);
		if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_EXPIRATION))
			re->expires_ms = nftnl_set_elem_get_u64(
				e, NFTNL_SET_ELEM_EXPIRATION);
		elem_comment(e, re->comment, sizeof(re->comment));
	}
	if (it)
		nftnl_set_elems_iter_destroy(it);
	nftnl_set_free(s);
	return MNL_CB_OK;
}

static size_t dump_keylen;

static int
cmp_raw(const void *a, const void *b)
{
	const struct raw_elem *x = a, *y = b;
	int c = memcmp(x->key, y->key, dump_keylen);

	/* An end and a start at the same key: the end first. */
	return c ? c : (int)y->is_end - (int)x->is_end;
}

/* The range of the interval [start, end) (to the top when end is NULL). */
static void
interval_of(int family, const uint8_t *start, const uint8_t *end,
	    struct ip_range *out)
{
	size_t len = family == AF_INET ? 4 : 16;

	memset(out, 0, sizeof(*out));
	out->family = (uint8_t)family;
	memcpy(out->lo, start, len);
	if (!end) {
		memset(out->hi, 0xff, len);
		return;
	}
	/* end - 1 */
	memcpy(out->hi, end, len);
	for (size_t i = len; i-- > 0;)
		if (out->hi[i]-- != 0)
			break;
}

static int
list_one(struct nftset *nft, enum nftset_kind kind, int family,
	 nftset_elem_fn *fn, void *ctx)
{
	static char buf[1 << 16];
	struct dump d = {.keylen = family == AF_INET ? 4 : 16};
	struct nftnl_set *s = nftnl_set_alloc();
	struct nlmsghdr *nlh;
	uint32_t seq = (uint32_t)time(NULL);
	int r = 0;

	if (!s)
		return -ENOMEM;
	nftnl_set_set_str(s, NFTNL_SET_TABLE, nft->table);
	nftnl_set_set_str(s, NFTNL_SET_NAME, nftset_set_name(kind, family));
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETSETELEM, NFPROTO_INET,
				    NLM_F_DUMP | NLM_F_ACK, seq);
	nftnl_set_elems_nlmsg_build_payload(nlh, s);
	nftnl_set_free(s);
	r = nftset_dump(nft, buf, sizeof(buf), nlh, on_dump_msg, &d);
	if (r < 0)
		goto out;
	dump_keylen = d.keylen;
	if (d.n) /* an empty set: no array, and qsort wants one */
		qsort(d.elems, d.n, sizeof(*d.elems), cmp_raw);
	for (size_t i = 0; i < d.n && r == 0; i++) {
		struct nftset_elem out = {0};
		const struct raw_elem *st = &d.elems[i];
		const uint8_t *end = NULL;

		if (st->is_end)
			continue;
		if (i + 1 < d.n && d.elems[i + 1].is_end)
			end = d.elems[i + 1].key;
		out.prefix.family = (uint8_t)family;
		memcpy(out.prefix.bytes, st->key, d.keylen);
		if (kind == NFTSET_ALLOW) {
			interval_of(family, st->key, end, &out.range);
			out.prefix.prefix =
				(uint8_t)(ip_range_prefix(&out.range) < 0
						  ? 0
						  : ip_range_prefix(&out.range));
		} else {
			out.prefix.prefix =
				(uint8_t)nftset_key_bits(nft, kind, family);
			ip_range_of_prefix(family, st->key, out.prefix.prefix,
					   &out.range);
		}
		out.timeout_ms = st->timeout_ms;
		out.expires_ms = st->expires_ms;
		memcpy(out.comment, st->comment, sizeof(out.comment));
		r = fn(&out, ctx);
	}
out:
	free(d.elems);
	return r;
}

int
nftset_dump(struct nftset *nft, char *buf, size_t len,
            const struct nlmsghdr *nlh, mnl_cb_t cb, void *ctx)
{
	uint32_t seq = nlh->nlmsg_seq, portid = mnl_socket_get_portid(nft->nl);
	ssize_t n;
	int r;

	if (mnl_socket_sendto(nft->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		n = mnl_socket_recvfrom(nft->nl, buf, len);
		if (n < 0)
			return -errno;
		r = mnl_cb_run(buf, (size_t)n, seq, portid, cb, ctx);
	} while (r > 0);
	return r < 0 ? -errno : 0;
}

int
nftset_list(struct nftset *nft, enum nftset_kind kind, nftset_elem_fn *fn,
	    void *ctx)
{
	int r;

	if (kind >= NFTSET_KINDS)
		return -EINVAL;
	r = list_one(nft, kind, AF_INET, fn, ctx);
	if (r == 0)
		r = list_one(nft, kind, AF_INET6, fn, ctx);
	return r;
}

size_t
nftset_kept_passes(const struct nftset *nft, const struct nftset_elem **out)
{
	*out = nft->kept;
	return nft->nkept;
}

void
nftset_kept_passes_done(struct nftset *nft)
{
	free(nft->kept);
	nft->kept = NULL;
	nft->nkept = nft->kept_alloc = 0;
}
