// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the nft manager (nftset.h, nftset_commit.h) against the real
 * kernel, in a network namespace of this process's own (unshare: it goes
 * with the process; the machine's own is never touched): the table
 * owned and refused to a second owner, each kind's key length held,
 * elements with their timeouts and comments read back, a refusal named
 * and counted while the rest of its batch is applied, a commit of 50,000
 * elements in one batch of many pages (libnftnl's paged batch), a queue
 * committed before the loop waits, the table gone with its owner, and a
 * persistent table's passes kept for the next owner. Skipped (77) where
 * no namespace can be made (not root). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "own_netns.h"
#include "loop.h"
#include "nftset.h"
#include "nftset_commit.h"
#include "timesrc.h"

static struct nftset_config
config(bool persist)
{
	return (struct nftset_config){.table = "gg_test",
	                              .smtp_port = 25,
	                              .tarpit_port = 2525,
	                              .pass_prefix4 = 24,
	                              .pass_prefix6 = 64,
	                              .persist = persist};
}

static struct nftset_prefix
prefix(const char *text, int bits)
{
	struct nftset_prefix p = {.prefix = (uint8_t)bits};

	if (inet_pton(AF_INET, text, p.bytes) == 1)
		p.family = AF_INET;
	else
		CHECK(inet_pton(AF_INET6, text, p.bytes) == 1 &&
		      (p.family = AF_INET6));
	return p;
}

/* The range [lo, hi] of one family. */
static struct ip_range
range(const char *lo, const char *hi)
{
	struct ip_range r = {.family = strchr(lo, ':') ? AF_INET6 : AF_INET};

	CHECK(inet_pton(r.family, lo, r.lo) == 1);
	CHECK(inet_pton(r.family, hi, r.hi) == 1);
	return r;
}

/* What a list read back. */
struct seen {
	size_t n;
	struct nftset_elem last;
};

static int
count_elem(const struct nftset_elem *e, void *ctx)
{
	struct seen *s = ctx;

	s->n++;
	s->last = *e;
	return 0;
}

static struct seen
list(struct nftset *nft, enum nftset_kind kind)
{
	struct seen s = {0};

	CHECK_INT(nftset_list(nft, kind, count_elem, &s), 0);
	return s;
}

/* What the commit refused. */
struct refusals {
	int n;
	enum nftset_kind kind;
	struct ip_range range;
	int err;
};

static void
on_refused(enum nftset_kind kind, const struct ip_range *range, int err,
           void *ctx)
{
	struct refusals *r = ctx;

	r->n++;
	r->kind = kind;
	r->range = *range;
	r->err = err;
}

/* One owner: a second is refused with a sentence that says why. */
static void
test_table_owned(void)
{
	struct nftset_config cfg = config(false);
	struct nftset *nft, *second = NULL;

	CHECK_INT(nftset_open(&cfg, &nft), 0);
	CHECK_INT(nftset_open(&cfg, &second), -EEXIST);
	CHECK(!second);
	CHECK(strstr(nftset_explain(-EEXIST), "not ours"));
	nftset_close(nft);
	/* its owner gone, the table went with it: a new owner makes it */
	CHECK_INT(nftset_open(&cfg, &nft), 0);
	nftset_close(nft);
}

/* Each set takes keys of its own length; a single address where the
 * pass sets hold networks goes to the trust sets. */
static void
test_key_lengths(void)
{
	struct nftset_config cfg = config(false);
	struct nftset_prefix net = prefix("198.51.100.0", 24);
	struct nftset_prefix one = prefix("198.51.100.7", 32);
	struct nftset_prefix net6 = prefix("2001:db8:1::", 64);
	struct nftset *nft;
	struct seen s;

	CHECK_INT(nftset_open(&cfg, &nft), 0);
	CHECK_INT(nftset_add(nft, NFTSET_PASS, &one, 1000, NULL), -EINVAL);
	CHECK_INT(nftset_add(nft, NFTSET_TRAP, &net, 1000, NULL), -EINVAL);
	CHECK_INT(nftset_add(nft, NFTSET_PASS, &net6, 1000, NULL), 0);
	CHECK_INT(nftset_pass_kind(nft, &net), NFTSET_PASS);
	CHECK_INT(nftset_pass_kind(nft, &one), NFTSET_TRUST);
	net.bytes[3] = 7; /* bits past the prefix: the network is kept */
	CHECK_INT(nftset_add(nft, NFTSET_PASS, &net, 1000, NULL), 0);
	CHECK_INT(nftset_queued(nft), 2);
	CHECK_INT(nftset_commit(nft, NULL, NULL), 0);
	CHECK_INT(nftset_queued(nft), 0);
	s = list(nft, NFTSET_PASS);
	CHECK_INT(s.n, 2);
	nftset_close(nft);
}

/* What was added is read back with its timeout, time left and comment;
 * a delete and a flush take it out again. */
static void
test_elements_read_back(void)
{
	struct nftset_config cfg = config(false);
	struct nftset_prefix net = prefix("203.0.113.0", 24);
	struct nftset_prefix one = prefix("2001:db8::9", 128);
	struct nftset *nft;
	struct seen s;

	CHECK_INT(nftset_open(&cfg, &nft), 0);
	CHECK_INT(nftset_add(nft, NFTSET_PASS, &net, 60000, "retry passed"),
	          0);
	CHECK_INT(nftset_add(nft, NFTSET_TRAP, &one, 0, NULL), 0);
	CHECK_INT(nftset_commit(nft, NULL, NULL), 0);
	s = list(nft, NFTSET_PASS);
	CHECK_INT(s.n, 1);
	CHECK_INT(s.last.prefix.prefix, 24);
	CHECK(!memcmp(s.last.prefix.bytes, net.bytes, 4));
	CHECK_INT(s.last.timeout_ms, 60000);
	CHECK(s.last.expires_ms > 0 && s.last.expires_ms <= 60000);
	CHECK_STR(s.last.comment, "retry passed");
	s = list(nft, NFTSET_TRAP);
	CHECK_INT(s.n, 1);
	CHECK_INT(s.last.prefix.family, AF_INET6);
	CHECK_INT(s.last.timeout_ms, 0);
	CHECK_INT(nftset_del(nft, NFTSET_PASS, &net), 0);
	CHECK_INT(nftset_flush(nft, NFTSET_TRAP), 0);
	CHECK_INT(nftset_commit(nft, NULL, NULL), 0);
	CHECK_INT(list(nft, NFTSET_PASS).n, 0);
	CHECK_INT(list(nft, NFTSET_TRAP).n, 0);
	nftset_close(nft);
}

/* A batch is all or nothing in the kernel: the element it refuses is
 * named (its range, its error) and counted, and the rest of the batch
 * is applied. */
static void
test_refusal_named(void)
{
	struct nftset_config cfg = config(false);
	struct ip_range wide = range("198.51.100.0", "198.51.100.255");
	struct ip_range inside = range("198.51.100.7", "198.51.100.7");
	struct ip_range other = range("203.0.113.0", "203.0.113.9");
	struct refusals r = {0};
	struct nftset *nft;

	CHECK_INT(nftset_open(&cfg, &nft), 0);
	CHECK_INT(nftset_add_range(nft, &wide, 0, NULL), 0);
	CHECK_INT(nftset_add_range(nft, &inside, 0, NULL), 0);
	CHECK_INT(nftset_add_range(nft, &other, 0, NULL), 0);
	CHECK_INT(nftset_commit(nft, on_refused, &r), 1);
	CHECK_INT(r.n, 1);
	CHECK_INT(r.kind, NFTSET_ALLOW);
	CHECK(!memcmp(&r.range, &inside, sizeof(inside)));
	CHECK_INT(r.err, -EEXIST);
	CHECK_INT(list(nft, NFTSET_ALLOW).n, 2);
	CHECK_INT(nftset_changes_failed(nft), 0); /* (the caller counts) */
	CHECK_INT(nftset_note_failed(nft, 1), 1);
	CHECK_INT(nftset_changes_failed(nft), 1);
	nftset_close(nft);
}

/* 50,000 elements go in one batch (many of libnftnl's pages, one
 * sendmsg): every one is there, in one commit the kernel applied at
 * once. */
static void
test_one_batch_of_many_pages(void)
{
	struct nftset_config cfg = config(false);
	struct nftset *nft;
	uint64_t before;

	CHECK_INT(nftset_open(&cfg, &nft), 0);
	before = nftset_batches_sent(nft);
	for (unsigned i = 0; i < 50000; i++) {
		struct nftset_prefix p = prefix("2001:db8:ffff::", 128);

		p.bytes[14] = (uint8_t)(i >> 8);
		p.bytes[15] = (uint8_t)i;
		p.bytes[13] = (uint8_t)(i >> 16);
		CHECK_INT(nftset_add(nft, NFTSET_TRAP, &p, 600000, NULL), 0);
	}
	CHECK_INT(nftset_commit(nft, NULL, NULL), 0);
	CHECK_INT(nftset_batches_sent(nft) - before, 1);
	CHECK_INT(list(nft, NFTSET_TRAP).n, 50000);
	nftset_close(nft);
}

/* What a turn queued goes out before the loop waits (the sets own their
 * commit); a refusal there is counted. */
static void
test_committed_before_the_loop_waits(void)
{
	struct nftset_config cfg = config(false);
	struct nftset_prefix net = prefix("198.51.100.0", 24);
	struct ip_range wide = range("203.0.113.0", "203.0.113.255");
	struct ip_range inside = range("203.0.113.1", "203.0.113.1");
	struct loop *loop = loop_new(timesrc_system());
	struct nftset *nft;

	CHECK(loop);
	CHECK_INT(nftset_open(&cfg, &nft), 0);
	CHECK_INT(nftset_commit_before_wait(loop, nft), 0);
	CHECK_INT(nftset_add(nft, NFTSET_PASS, &net, 60000, NULL), 0);
	CHECK_INT(nftset_add_range(nft, &wide, 0, NULL), 0);
	CHECK_INT(nftset_add_range(nft, &inside, 0, NULL), 0);
	CHECK_INT(list(nft, NFTSET_PASS).n, 0);
	CHECK_INT(loop_run_once(loop, 0), 0);
	CHECK_INT(nftset_queued(nft), 0);
	CHECK_INT(list(nft, NFTSET_PASS).n, 1);
	CHECK_INT(nftset_changes_failed(nft), 1);
	/* a pass the listener must have in the set before the client hears
	 * its verdict goes at once */
	CHECK_INT(nftset_del(nft, NFTSET_PASS, &net), 0);
	nftset_commit_now(nft);
	CHECK_INT(list(nft, NFTSET_PASS).n, 0);
	nftset_commit_before_wait_stop(loop, nft);
	nftset_close(nft);
	loop_free(loop);
}

/* persist: the table outlives its owner (fail closed), and the next
 * owner takes it back with the passes it held, for its store to hold
 * again; an owner without persist refuses the orphan. */
static void
test_persistent_table_taken_back(void)
{
	struct nftset_config cfg = config(true), plain = config(false);
	struct nftset_prefix net = prefix("198.51.100.0", 24);
	const struct nftset_elem *kept;
	struct nftset *nft, *other = NULL;

	CHECK_INT(nftset_open(&cfg, &nft), 0);
	CHECK_INT(nftset_add(nft, NFTSET_PASS, &net, 600000, "kept"), 0);
	CHECK_INT(nftset_commit(nft, NULL, NULL), 0);
	nftset_close(nft); /* (as a killed greygated's socket closes) */
	CHECK_INT(nftset_open(&plain, &other), -EEXIST);
	CHECK_INT(nftset_open(&cfg, &nft), 0);
	CHECK_INT(nftset_kept_passes(nft, &kept), 1);
	CHECK_INT(kept[0].prefix.prefix, 24);
	CHECK(!memcmp(kept[0].prefix.bytes, net.bytes, 4));
	CHECK(kept[0].expires_ms > 0 && kept[0].expires_ms <= 600000);
	CHECK_INT(list(nft, NFTSET_PASS).n, 0); /* (rebuilt empty) */
	nftset_kept_passes_done(nft);
	CHECK_INT(nftset_kept_passes(nft, &kept), 0);
	nftset_close(nft);
	/* (the persistent table stays: this namespace goes with it) */
}

int
main(void)
{
	own_netns_or_skip();
	RUN(test_table_owned);
	RUN(test_key_lengths);
	RUN(test_elements_read_back);
	RUN(test_refusal_named);
	RUN(test_one_batch_of_many_pages);
	RUN(test_committed_before_the_loop_waits);
	RUN(test_persistent_table_taken_back);
	return 0;
}
