/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The kernel's pass and trap sets as listeners: they follow the
 * greylist's store and the decider (follow_sets.c), and at the start the
 * store takes back the passes a kept table held (adopt_kept.c). */
#ifndef GREYGATE_FOLLOW_SETS_H
#define GREYGATE_FOLLOW_SETS_H

#include "allow_lists.h"
#include "decide.h"
#include "loop.h"
#include "nftset.h"

struct grey_store;
struct sets_follower;

/* What the sets follow and change, all borrowed: the sets (NULL: none,
 * the policy door alone: nothing is held), the decider (a listener of
 * its; its commit), the greylist's store (a listener of its), the allow
 * lists (other gateways' run-time entries). */
struct set_links {
	struct loop *loop;
	struct decider *decider;
	struct nftset *nft;
	struct grey_store *records;
	struct allow_lists *allow;
};

/* sets_follow_store - the sets follow the store: what it holds at once
 * (or as it comes), then what this gateway decides and what other
 * gateways change. *out lives while the store and the decider may tell
 * it (free it after both).
 * Return: 0, or -errno (the store could not be read; *out is set all the
 * same, to be freed). */
int sets_follow_store(const struct set_links *l, struct sets_follower **out);

/* sets_prefix_of - a client key as the sets' prefix. */
void sets_prefix_of(const struct grey_client *c, struct nftset_prefix *p);

/* sets_follower_free - NULL is fine. */
void sets_follower_free(struct sets_follower *f);

/* sets_adopt_kept - the passes the persistent table a dead greygated
 * left still held, written back into the store where it lacks them and
 * put back in the sets (said in one log line when done).
 * Return: 0 (under way, or nothing kept) or -ENOMEM (said). */
int sets_adopt_kept(const struct set_links *l);

#endif
