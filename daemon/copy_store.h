/* SPDX-License-Identifier: GPL-2.0-or-later */
/* greygated --store-copy (see copy_store.c). */
#ifndef GREYGATE_COPY_STORE_H
#define GREYGATE_COPY_STORE_H

struct config;

/* copy_store_main - direction "to-redis" or "to-lmdb" between store_dir
 * and store; prints what was copied. Return: the exit code. */
int copy_store_main(const struct config *cfg, const char *direction);

#endif
