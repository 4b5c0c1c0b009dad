/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A bound on the size of a Redis reply as hiredis reads it: hiredis
 * builds a reply as big as what it is sent (Redis's, or whatever is on
 * the way). A reader given a bound makes its objects through functions
 * that count each reply's bytes and elements first and refuse past the
 * bound (the reader then fails, and its connection with it); the bytes
 * buffered and not yet parsed count too (a single bulk string is
 * buffered whole before it is made an object). */
#ifndef GREYGATE_REDIS_BOUND_H
#define GREYGATE_REDIS_BOUND_H

#include <hiredis/read.h>
#include <stdbool.h>
#include <stddef.h>

struct redis_bound {
	size_t max;  /* a reply's size in memory, at most */
	size_t size; /* of the reply being read, so far */
	bool over;   /* the bound was passed */
};

/* redis_bound_attach - r makes its objects through b (kept by the caller
 * as long as r). */
void redis_bound_attach(redisReader *r, struct redis_bound *b);

/* redis_bound_next - a reply was read whole: the next counts from 0. */
void redis_bound_next(struct redis_bound *b);

/* redis_bound_passed - passed already, or the bytes r holds unparsed are
 * past it. */
bool redis_bound_passed(const redisReader *r, struct redis_bound *b);

#endif
