/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inside policy/ only: the LMDB store's file checks. */
#ifndef GREYGATE_STORE_LMDB_H
#define GREYGATE_STORE_LMDB_H

#include <lmdb.h>

/*
 * lmdb_check_before_open - data.mdb in dir, if there, is not empty and
 * holds at least its two header pages (an empty file would silently
 * become an empty greylist). Return: 0, or -EPROTO with why set (128).
 */
int lmdb_check_before_open(const char *dir, char *why);

/*
 * lmdb_check_opened - the opened file is as long as its header says
 * (LMDB maps past the end and dies of SIGBUS there), and every page of
 * every table and of the free list is reachable and well formed: a walk
 * of all of it, with SIGBUS and SIGSEGV caught for its duration only, so
 * that nothing later trusts a tree that points outside the file.
 * Return: 0, or -EPROTO with why set (128 bytes).
 */
int lmdb_check_opened(MDB_env *env, const char *dir, char *why);

#endif
