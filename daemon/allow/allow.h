/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Allow lists: files of CIDRs (one a line, # comments) in a directory,
 * and the entries added at run time with greygatectl, kept in a file of
 * their own so that they outlive a restart. Every entry goes into one
 * set, which is merged into the fewest ranges before anything uses it:
 * overlapping or adjacent entries become one range (an interval set in
 * the kernel refuses an overlap, and used to lose it silently), and each
 * range keeps the names of the files and comments it came from. */
#ifndef GREYGATE_ALLOW_H
#define GREYGATE_ALLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iprange.h"

/* An nft element comment holds 128 bytes with its NUL. */
#define ALLOW_COMMENT_MAX 128

/* The entries as they were read, before merging. */
struct allow_set {
	struct allow_entry *entries;
	size_t n, cap;
	char **sources; /* each source's name once (a file's path, a comment) */
	size_t nsources, sources_cap;
	size_t files; /* files read by allow_set_load_dir */
};

/* A merged range: what the kernel's allow set and the policy get. */
struct allow_range {
	struct ip_range range; /* first: ip_range_find can search these */
	int64_t expires;       /* epoch seconds; 0: never */
	char comment[ALLOW_COMMENT_MAX]; /* its sources, for nft list */
};

void allow_set_init(struct allow_set *set);
void allow_set_free(struct allow_set *set);

/* allow_set_add - one entry. @source: where it came from (copied once
 * per distinct name); @expires: epoch seconds, 0 for never.
 * Return: 0 or -ENOMEM. */
int allow_set_add(struct allow_set *set, const struct ip_range *range,
		  int64_t expires, const char *source);

/* allow_set_load_dir - every file in dir (sorted by name; names that
 * start with a dot skipped), lines read whole however long. A line that
 * is not an address or CIDR is logged with file:line and skipped.
 * Return: entries added. */
int allow_set_load_dir(struct allow_set *set, const char *dir);

/*
 * allow_set_merge - the entries live at now, merged: sorted by family
 * then address, overlapping and adjacent ones joined. A range lasts as
 * long as the longest-lived of its entries (greygated merges again when
 * a shorter one ends). Its comment names its sources, cut at a UTF-8
 * character's edge, with '"' and control characters replaced (nft's
 * printed ruleset must read back).
 * @out: malloc'd array (caller frees); NULL when empty
 * Return: 0 or -ENOMEM.
 */
int allow_set_merge(const struct allow_set *set, int64_t now,
		    struct allow_range **out, size_t *n);

struct grey;

/* allow_ranges_to_policy - give the policy the merged ranges (their
 * addresses only). Return: 0 or -errno. */
int allow_ranges_to_policy(struct grey *grey, const struct allow_range *ranges,
			   size_t n);

/* allow_load_to_policy - the files in dir, merged, into the policy (a
 * replay or a simulation: no run-time entries, no kernel).
 * Return: ranges, or -errno. */
int allow_load_to_policy(struct grey *grey, const char *dir);

/* A run-time entry. */
struct allow_runtime {
	char cidr[64];
	char comment[ALLOW_COMMENT_MAX];
	int64_t expires; /* epoch seconds; 0: never */
};

/* The longest ttl a run-time entry may have: ten years. */
#define ALLOW_TTL_MAX_SEC (3650u * 86400)

/* allow_text_ok - printable text only (UTF-8 allowed, no control
 * characters): what a comment or an argument from greygatectl may hold. */
bool allow_text_ok(const char *text);

/* allow_runtime_load - read the saved entries, dropping those expired at
 * now; a line with a bad CIDR, a bad or far-off expiry, or control
 * characters is logged and skipped.
 * Return: entries in *out (malloc'd, caller frees), or -errno. */
int allow_runtime_load(const char *path, int64_t now,
		       struct allow_runtime **out, size_t *n);

/* The saved list's file, in store_dir. */
#define ALLOW_RUNTIME_FILE "allow-runtime.txt"

/* allow_runtime_put - e into the list (*n entries, grown as needed): it
 * takes the place of the entry for the same CIDR (canonical form), if
 * any. Return: 1 (changed), 0 (the same was there), -ENOMEM. */
int allow_runtime_put(struct allow_runtime **list, size_t *n,
		      const struct allow_runtime *e);

/* allow_runtime_remove - the entry for cidr (canonical form) out of the
 * list. Return: 1 (removed), 0 (it was not there). */
int allow_runtime_remove(struct allow_runtime *list, size_t *n,
			 const char *cidr);

/* allow_runtime_save - write the entries to a new file (created, never
 * followed through a link), sync it, rename it over path and sync the
 * folder: a crash leaves the old list or the new one.
 * Return: 0 or -errno. */
int allow_runtime_save(const char *path, const struct allow_runtime *list,
		       size_t n);

#endif
