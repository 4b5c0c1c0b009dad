/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The allow lists as a service (allow_lists.c): the files and the
 * run-time entries (greygatectl allow, and those other gateways made,
 * from a shared store) merged into the policy and the kernel's sets in
 * one batch; run-time entries past their end dropped. */
#ifndef GREYGATE_ALLOW_LISTS_H
#define GREYGATE_ALLOW_LISTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allow.h"
#include "decide.h"
#include "loop.h"

struct allow_lists;
struct grey_store;

/* What the lists change, all borrowed: the policy and the commit through
 * the decider, the sets (NULL: none, as without a gateway), the store
 * other gateways hear run-time entries from. */
struct allow_links {
	struct loop *loop;
	struct decider *decider;
	struct nftset *nft;
	struct grey_store *records;
};

/* The allow lists' part of the settings (config_allow_part). */
struct allow_settings {
	char allow_dir[256]; /* [gateway] allow_dir: the lists' files */
	char store_dir[256]; /* [gateway] store_dir: the run-time entries */
};

/* allow_lists_open - the lists' state, with the run-time entries saved
 * in store_dir read (a file that cannot be read is said, and the list
 * starts empty); nothing in the policy or the sets until
 * allow_lists_reload. s copied (allow_lists_reconfigure brings a
 * reload's). Return: NULL (ENOMEM). */
struct allow_lists *allow_lists_open(const struct allow_links *links,
                                     const struct allow_settings *s);

/* allow_lists_reconfigure - a reload's settings: allow_dir, read by the
 * next allow_lists_reload (store_dir needs a restart). */
void allow_lists_reconfigure(struct allow_lists *al,
                             const struct allow_settings *s);

/* allow_lists_close - and freed (NULL is fine). */
void allow_lists_close(struct allow_lists *al);

/* allow_lists_ranges - the merged ranges the kernel and the policy hold
 * now (*n of them), and the lists' generation (changes with every
 * reload; generation may be NULL). Valid until the next reload. NULL al:
 * none. */
const struct allow_range *allow_lists_ranges(const struct allow_lists *al,
                                             size_t *n, uint64_t *generation);

/* allow_lists_runtime_entries - greygatectl allow's entries (and other
 * gateways'), *n of them. Valid until the next change. */
const struct allow_runtime *
allow_lists_runtime_entries(const struct allow_lists *al, size_t *n);

/* allow_lists_runtime - add (or replace) a run-time allow entry, save
 * the list and put it in the sets, and tell every gateway that shares
 * the store. ttl_sec 0: no end.
 * Return: 0, -EINVAL (not a CIDR), -ERANGE (ttl past ALLOW_TTL_MAX_SEC),
 * -EILSEQ (control characters in the comment), or -errno. */
int allow_lists_runtime(struct allow_lists *al, const char *cidr,
                        uint32_t ttl_sec, const char *comment);

/* allow_lists_disallow - remove a run-time allow entry (made here or by
 * another gateway on the store), save the list, take it out of the sets,
 * and tell every gateway that shares the store. Entries of the allow
 * files are not touched. by: who asked (the log line's by=).
 * Return: 0, -EINVAL (not a CIDR), -ENOENT (no such run-time entry), or
 * -errno. */
int allow_lists_disallow(struct allow_lists *al, const char *cidr,
                         const char *by);

/* allow_lists_remove - net's run-time entry out of the list; with apply,
 * saved and out of the sets at once. Not told to the shared store.
 * Return: 1 (removed), 0 (absent), or -errno. */
int allow_lists_remove(struct allow_lists *al, const struct grey_client *net,
                       bool apply);

/* allow_lists_put - a run-time allow entry (its cidr canonical) into the
 * list; with apply, saved and in the sets at once (else by
 * allow_lists_apply, once for many). Not told to the shared store.
 * Return: 1 (changed), 0 (the same entry is there), or -errno. */
int allow_lists_put(struct allow_lists *al, const struct allow_runtime *e,
                    bool apply);

/* allow_lists_apply - save the run-time list and reload the lists into
 * the policy and the sets. Return: 0 or -errno. */
int allow_lists_apply(struct allow_lists *al);

/* allow_lists_reload - read the files and the run-time entries again,
 * merge them, and put the ranges in the policy and (one batch) in the
 * kernel; on failure the lists in place stay. Return: 0 or -errno. */
int allow_lists_reload(struct allow_lists *al);

/* allow_lists_expire - drop run-time entries past their end (saved).
 * Return: true if any was. */
bool allow_lists_expire(struct allow_lists *al, int64_t now);

#endif
