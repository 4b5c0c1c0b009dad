// SPDX-License-Identifier: GPL-2.0-or-later
/* The gateway's allow lists: the files and the run-time entries
 * (greygatectl allow, and those other gateways made, from a shared
 * store) merged into the policy and the kernel's sets in one batch;
 * run-time entries past their end dropped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway-int.h"
#include "grey_store.h"
#include "log.h"

/* The allow lists as they are now (gw->allow). */
struct allow_state {
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

int
gateway_allow_open(struct gateway *gw)
{
	struct allow_state *a = calloc(1, sizeof(*a));
	int r;

	if (!a)
		return -ENOMEM;
	gw->allow = a;
	snprintf(a->runtime_path, sizeof(a->runtime_path),
	         "%s/" ALLOW_RUNTIME_FILE, gw->cfg->store_dir);
	r = allow_runtime_load(a->runtime_path, loop_wall_sec(gw->loop),
	                       &a->runtime, &a->nruntime);
	if (r < 0)
		log_warnx("allow: %s: %s", a->runtime_path, strerror(-r));
	return 0;
}

void
gateway_allow_close(struct gateway *gw)
{
	if (!gw->allow)
		return;
	free(gw->allow->ranges);
	free(gw->allow->runtime);
	free(gw->allow);
	gw->allow = NULL;
}

const struct allow_range *
gateway_allow_ranges(const struct gateway *gw, size_t *n,
                     uint64_t *generation)
{
	*n = gw->allow ? gw->allow->nallow : 0;
	if (generation)
		*generation = gw->allow ? gw->allow->generation : 0;
	return gw->allow ? gw->allow->ranges : NULL;
}

const struct allow_runtime *
gateway_allow_runtime_entries(const struct gateway *gw, size_t *n)
{
	*n = gw->allow ? gw->allow->nruntime : 0;
	return gw->allow ? gw->allow->runtime : NULL;
}

/* Run-time entries past their end are dropped from the list (the kernel
 * already dropped them from the sets). Return: true if any was. */
bool
gateway_allow_expire(struct gateway *gw, int64_t now)
{
	size_t kept = 0;

	for (size_t i = 0; i < gw->allow->nruntime; i++)
		if (!gw->allow->runtime[i].expires || gw->allow->runtime[i].expires > now)
			gw->allow->runtime[kept++] = gw->allow->runtime[i];
	if (kept == gw->allow->nruntime)
		return false;
	gw->allow->nruntime = kept;
	if (allow_runtime_save(gw->allow->runtime_path, gw->allow->runtime, kept) < 0)
		log_warn("allow: saving %s", gw->allow->runtime_path);
	return true;
}

/* Reads the files and the run-time entries again, merges them, and puts
 * the ranges in the policy and (one batch: the flush and every element
 * land together, so no allowed bank meets the tarpit in between) in the
 * kernel. On failure the lists in place stay. */
int
gateway_allow_reload(struct gateway *gw)
{
	int64_t now = loop_wall_sec(gw->loop);
	struct allow_range *ranges;
	struct allow_set set;
	size_t n, from_files;
	int total, r;

	allow_set_init(&set);
	total = allow_set_load_dir(&set, gw->cfg->allow_dir);
	from_files = set.files;
	gateway_allow_expire(gw, now);
	for (size_t i = 0; i < gw->allow->nruntime; i++) {
		const struct allow_runtime *e = &gw->allow->runtime[i];
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
		r = allow_ranges_to_policy(decider_grey(gw->decider), ranges, n);
	if (r < 0) {
		log_warnx("allow lists: %s: the lists in place stay",
		          strerror(-r));
		free(ranges);
		return r;
	}
	if (gw->nft && (r = nftset_flush(gw->nft, NFTSET_ALLOW)) < 0)
		decider_set_failed(gw->decider, "allow", "the allow sets' old entries",
		                   r);
	for (size_t i = 0; i < n && gw->nft; i++) {
		char text[IP_RANGE_TEXT_MAX];

		r = nftset_add_range(gw->nft, &ranges[i].range,
		                     ranges[i].expires
		                             ? (uint64_t)(ranges[i].expires -
		                                          now) *
		                                       1000
		                             : 0,
		                     ranges[i].comment);
		if (r < 0)
			decider_set_failed(
			        gw->decider, "allow",
			        ip_range_format(&ranges[i].range, text), r);
	}
	decider_commit(gw->decider);
	free(gw->allow->ranges);
	gw->allow->ranges = ranges;
	gw->allow->nallow = n;
	gw->allow->files = from_files;
	gw->allow->generation++;
	log_info("allow lists: %d entries from %zu files in %s, %zu from "
	         "greygatectl: %zu ranges once merged",
	         total, from_files, gw->cfg->allow_dir, gw->allow->nruntime, n);
	return 0;
}

/* The run-time list changed: with apply, saved and in the sets now.
 * Return: 1, or -errno. */
static int
changed(struct gateway *gw, bool apply)
{
	int r = apply ? gateway_allow_apply(gw) : 0;

	return r < 0 ? r : 1;
}

int
gateway_allow_put(struct gateway *gw, const struct allow_runtime *e, bool apply)
{
	int r = allow_runtime_put(&gw->allow->runtime, &gw->allow->nruntime, e);

	if (r <= 0)
		return r; /* (unchanged: its own, back from the shared store) */
	return changed(gw, apply);
}

int
gateway_allow_apply(struct gateway *gw)
{
	int r = allow_runtime_save(gw->allow->runtime_path, gw->allow->runtime, gw->allow->nruntime);

	if (r < 0)
		return r;
	/* A new ttl or comment for an entry already there: the set's
	 * element is replaced, so reload all in one batch. */
	return gateway_allow_reload(gw);
}

int
gateway_allow_remove(struct gateway *gw, const struct grey_client *net,
                     bool apply)
{
	char cidr[64];

	grey_client_format(net, cidr, sizeof(cidr));
	if (!allow_runtime_remove(gw->allow->runtime, &gw->allow->nruntime,
	                          cidr))
		return 0;
	return changed(gw, apply);
}

int
gateway_disallow_runtime(struct gateway *gw, const char *cidr, const char *by)
{
	struct grey_client net;
	char canonical[64];
	int r;

	if (grey_cidr_parse(cidr, &net) < 0)
		return -EINVAL;
	r = gateway_allow_remove(gw, &net, true);
	if (r <= 0)
		return r < 0 ? r : -ENOENT;
	grey_client_format(&net, canonical, sizeof(canonical));
	log_info("action=disallow, client=%s, by=%s", canonical, by);
	/* Every gateway sharing the store removes it too. */
	grey_store_share_allow(gw->records, &net, GREY_ALLOW_REMOVED, "");
	return 0;
}

int
gateway_allow_runtime(struct gateway *gw, const char *cidr, uint32_t ttl_sec,
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
	e.expires = ttl_sec ? (int64_t)loop_wall_sec(gw->loop) + ttl_sec : 0;
	r = gateway_allow_put(gw, &e, false);
	if (r < 0)
		return r;
	r = gateway_allow_apply(gw);
	if (r < 0)
		return r;
	log_info("action=allow, client=%s, ttl=%u, comment=%s", e.cidr, ttl_sec,
	         e.comment);
	/* Every gateway sharing the store allows it too. */
	grey_store_share_allow(gw->records, &net, e.expires, e.comment);
	return 0;
}
