// SPDX-License-Identifier: GPL-2.0-or-later
/* The sets' commit, and what fails on the way (nftset_commit.h). */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "iprange.h"
#include "log.h"
#include "nftset_commit.h"


/* What a client sees when a change of the kind's set does not reach the
 * kernel. */
static const char *
consequence(const char *what)
{
	if (!strcmp(what, "pass") || !strcmp(what, "trusted pass"))
		return "it meets the tarpit again until one of its attempts "
		       "puts it back";
	if (!strcmp(what, "trap"))
		return "it is greylisted, not trapped, until it is trapped "
		       "again";
	if (!strcmp(what, "forget"))
		return "it stays passed until its element times out";
	return "that network is greylisted until the next reload or "
	       "allow puts it back";
}

void
nftset_say_failed(uint64_t so_far, const char *what, const char *key, int err)
{
	if (so_far % 100 != 1)
		return;
	log_warnx("nft: %s of %s did not reach the kernel's set (%s): %s "
	          "(%" PRIu64 " set change(s) failed so far)",
	          what, key, strerror(-err), consequence(what), so_far);
}

void
nftset_failed(struct nftset *nft, const char *what, const char *key, int err)
{
	if (nft)
		nftset_say_failed(nftset_note_failed(nft, 1), what, key, err);
}

static void
on_refused(enum nftset_kind kind, const struct ip_range *range, int err,
           void *ctx)
{
	char text[IP_RANGE_TEXT_MAX];

	nftset_failed(ctx,
	            kind == NFTSET_PASS    ? "pass"
	            : kind == NFTSET_TRAP  ? "trap"
	            : kind == NFTSET_TRUST ? "trusted pass"
	                                   : "allow",
	            ip_range_format(range, text), err);
}

void
nftset_commit_now(struct nftset *nft)
{
	size_t queued;
	int r;

	if (!nft || !(queued = nftset_queued(nft)))
		return;
	r = nftset_commit(nft, on_refused, nft);
	if (r < 0) {
		nftset_note_failed(nft, queued);
		log_warnx("nft: %zu set change(s) not sent (%s): the passed "
		          "clients among them meet the tarpit again until one "
		          "of their attempts puts them back",
		          queued, strerror(-r));
	}
}

static void
commit_hook(void *nft)
{
	nftset_commit_now(nft);
}

int
nftset_commit_before_wait(struct loop *loop, struct nftset *nft)
{
	return loop_before_wait(loop, commit_hook, nft);
}

void
nftset_commit_before_wait_stop(struct loop *loop, struct nftset *nft)
{
	loop_before_wait_stop(loop, commit_hook, nft);
}
