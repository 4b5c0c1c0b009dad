// SPDX-License-Identifier: GPL-2.0-or-later
/* The gateway's allow lists: the files and the run-time entries
 * (greygatectl allow, and those other gateways made, from a shared
 * store) merged into the policy and the kernel's sets in one batch;
 * run-time entries past their end dropped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allow_lists.h"
#include "grey_store.h"
#include "log.h"
#include "nftset_commit.h"

/* The allow lists as they are now. */
struct allow_lists {
	struct allow_links links; /* what they change (allow_lists.h) */
	struct allow_settings cfg; /* its own (allow_lists_reconfigure) */
	/* the merged ranges the kernel and the policy hold */
	struct allow_range *ranges;
	size_t nallow, files;
	uint64_t generation; /* changes with every reload */
	/* greygatectl allow's entries (and other gateways'), and their
	 * file in store_dir */
	struct allow_runtime *runtime;
	size_t nruntime;
	char runtime_path[300];
};

struct allow_lists *
allow_lists_open(const struct allow_links *links,
                 const struct allow_settings *s)
{
	struct allow_lists *al = calloc(1, sizeof(*al));
	int r;

	if (!al)
		return NULL;
	al->links = *links;
	al->cfg = *s;
	snprintf(al->runtime_path, sizeof(al->runtime_path),
	         "%s/" ALLOW_RUNTIME_FILE, s->store_dir);
	r = allow_runtime_load(al->runtime_path, loop_wall_sec(links->loop),
	                       &al->runtime, &al->nruntime);
	if (r < 0)
		log_warnx("allow: %s: %s", al->runtime_path, strerror(-r));
	return al;
}

void
allow_lists_reconfigure(struct allow_lists *al,
                        const struct allow_settings *s)
{
	snprintf(al->cfg.allow_dir, sizeof(al->cfg.allow_dir), "%s",
	         s->allow_dir);
}

void
allow_lists_close(struct allow_lists *al)
{
	if (!al)
		return;
	free(al->ranges);
	free(al->runtime);
	free(al);
}

const struct allow_range *
allow_lists_ranges(const struct allow_lists *al, size_t *n,
                   uint64_t *generation)
{
	*n = al ? al->nallow : 0;
	if (generation)
		*generation = al ? al->generation : 0;
	return al ? al->ranges : NULL;
}

const struct allow_runtime *
allow_lists_runtime_entries(const struct allow_lists *al, size_t *n)
{
	*n = al ? al->nruntime : 0;
	return al ? al->runtime : NULL;
}

/* Run-time entries past their end are dropped from the list (the kernel
 * already dropped them from the sets). Return: true if any was. */
bool
allow_lists_expire(struct allow_lists *al, int64_t now)
{
	size_t kept = 0;

	for (size_t i = 0; i < al->nruntime; i++)
		if (!al->runtime[i].expires || al->runtime[i].expires > now)
			al->runtime[kept++] = al->runtime[i];
	if (kept == al->nruntime)
		return false;
	al->nruntime = kept;
	if (allow_runtime_save(al->runtime_path, al->runtime, kept) < 0)
		log_warn("allow: saving %s", al->runtime_path);
	return true;
}

/* Reads the files and the run-time entries again, merges them, and puts
 * the ranges in the policy and (one batch: the flush and every element
 * land together, so no allowed bank meets the tarpit in between) in the
 * kernel. On failure the lists in place stay. */
int
allow_lists_reload(struct allow_lists *al)
{
	int64_t now = loop_wall_sec(al->links.loop);
	struct allow_range *ranges;
	struct allow_set set;
	size_t n, from_files;
	int total, r;

	allow_set_init(&set);
	total = allow_set_load_dir(&set, al->cfg.allow_dir);
	from_files = set.files;
	allow_lists_expire(al, now);
	for (size_t i = 0; i < al->nruntime; i++) {
		const struct allow_runtime *e = &al->runtime[i];
		struct grey_client net;
		struct ip_range range;

		if (grey_cidr_parse(e->cidr, &net) < 0)
			continue;
		ip_range_of_prefix(net.family, net.bytes, net.prefix, &range);
		if (allow_set_add(&set, &range, e->expires,
		                  e->comment[0] ? e->comment
		                                : "greygatectl allow") < 0)
			break;
	}
	r = allow_set_merge(&set, now, &ranges, &n);
	allow_set_free(&set);
	if (r == 0)
		r = allow_ranges_to_policy(decider_grey(al->links.decider),
		                           ranges, n);
	if (r < 0) {
		log_warnx("allow lists: %s: the lists in place stay",
		          strerror(-r));
		free(ranges);
		return r;
	}
	if (al->links.nft &&
	    (r = nftset_flush(al->links.nft, NFTSET_ALLOW)) < 0)
		nftset_failed(al->links.nft, "allow",
		            "the allow sets' old entries", r);
	for (size_t i = 0; i < n && al->links.nft; i++) {
		char text[IP_RANGE_TEXT_MAX];

		r = nftset_add_range(
		        al->links.nft, &ranges[i].range,
		        ranges[i].expires
		                ? (uint64_t)(ranges[i].expires - now) * 1000
		                : 0,
		        ranges[i].comment);
		if (r < 0)
			nftset_failed(al->links.nft, "allow",
			            ip_range_format(&ranges[i].range, text), r);
	}
	/* (at once: at start the loop has not turned yet) */
	nftset_commit_now(al->links.nft);
	free(al->ranges);
	al->ranges = ranges;
	al->nallow = n;
	al->files = from_files;
	al->generation++;
	log_info("allow lists: %d entries from %zu files in %s, %zu from "
	         "greygatectl: %zu ranges once merged",
	         total, from_files, al->cfg.allow_dir, al->nruntime, n);
	return 0;
}

/* The run-time list changed: with apply, saved and in the sets now.
 * Return: 1, or -errno. */
static int
changed(struct allow_lists *al, bool apply)
{
	int r = apply ? allow_lists_apply(al) : 0;

	return r < 0 ? r : 1;
}

int
allow_lists_put(struct allow_lists *al, const struct allow_runtime *e,
                bool apply)
{
	int r = allow_runtime_put(&al->runtime, &al->nruntime, e);

	if (r <= 0)
		return r; /* (unchanged: its own, back from the shared store) */
	return changed(al, apply);
}

int
allow_lists_apply(struct allow_lists *al)
{
	int r = allow_runtime_save(al->runtime_path, al->runtime, al->nruntime);

	if (r < 0)
		return r;
	/* A new ttl or comment for an entry already there: the set's
	 * element is replaced, so reload all in one batch. */
	return allow_lists_reload(al);
}

int
allow_lists_remove(struct allow_lists *al, const struct grey_client *net,
                   bool apply)
{
	char cidr[64];

	grey_client_format(net, cidr, sizeof(cidr));
	if (!allow_runtime_remove(al->runtime, &al->nruntime, cidr))
		return 0;
	return changed(al, apply);
}

int
allow_lists_disallow(struct allow_lists *al, const char *cidr, const char *by)
{
	struct grey_client net;
	char canonical[64];
	int r;

	if (grey_cidr_parse(cidr, &net) < 0)
		return -EINVAL;
	r = allow_lists_remove(al, &net, true);
	if (r <= 0)
		return r < 0 ? r : -ENOENT;
	grey_client_format(&net, canonical, sizeof(canonical));
	log_info("action=disallow, client=%s, by=%s", canonical, by);
	/* Every gateway sharing the store removes it too. */
	grey_store_share_allow(al->links.records, &net, GREY_ALLOW_REMOVED, "");
	return 0;
}

int
allow_lists_runtime(struct allow_lists *al, const char *cidr, uint32_t ttl_sec,
                    const char *comment)
{
	struct grey_client net;
	struct allow_runtime e = {0};
	int r;

	if (grey_cidr_parse(cidr, &net) < 0)
		return -EINVAL;
	if (ttl_sec > ALLOW_TTL_MAX_SEC)
		return -ERANGE;
	if (comment &&
	    (!allow_text_ok(comment) || strlen(comment) >= sizeof(e.comment)))
		return -EILSEQ;
	/* Stored in canonical form, so the same net given twice is one. */
	grey_client_format(&net, e.cidr, sizeof(e.cidr));
	snprintf(e.comment, sizeof(e.comment), "%s", comment ? comment : "");
	e.expires =
	        ttl_sec ? (int64_t)loop_wall_sec(al->links.loop) + ttl_sec : 0;
	r = allow_lists_put(al, &e, false);
	if (r < 0)
		return r;
	r = allow_lists_apply(al);
	if (r < 0)
		return r;
	log_info("action=allow, client=%s, ttl=%u, comment=%s", e.cidr, ttl_sec,
	         e.comment);
	/* Every gateway sharing the store allows it too. */
	grey_store_share_allow(al->links.records, &net, e.expires, e.comment);
	return 0;
}
