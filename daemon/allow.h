/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Allow lists: files of CIDRs (one a line, # comments) in a directory,
 * and the entries added at run time with greygatectl, which are kept in
 * a file of their own so that they outlive a restart. */
#ifndef GREYGATE_ALLOW_H
#define GREYGATE_ALLOW_H

#include <stddef.h>
#include <stdint.h>

#include "policy.h"

/* Called for each valid entry; source names where it came from. */
typedef void allow_entry_fn(const char *cidr, const struct grey_client *net,
			    const char *source, void *ctx);

/* allow_load_dir - read every file in dir (sorted by name; names that
 * start with a dot skipped). Bad lines are logged and skipped.
 * Return: entries passed to fn; *nfiles gets the files read. */
int allow_load_dir(const char *dir, allow_entry_fn *fn, void *ctx,
		   size_t *nfiles);

/* A run-time entry. */
struct allow_runtime {
	char cidr[64];
	char comment[128];
	int64_t expires; /* epoch seconds; 0: never */
};

/* allow_runtime_load - read the saved entries, dropping those expired at
 * now. Return: entries in *out (malloc'd, caller frees), or -errno. */
int allow_runtime_load(const char *path, int64_t now,
		       struct allow_runtime **out, size_t *n);

/* allow_runtime_save - write the entries (to a temp file, then renamed
 * over path: a crash leaves the old list or the new one).
 * Return: 0 or -errno. */
int allow_runtime_save(const char *path, const struct allow_runtime *list,
		       size_t n);

#endif
