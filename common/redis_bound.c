// SPDX-License-Identifier: GPL-2.0-or-later
/* A bound on a Redis reply's size (see redis_bound.h): hiredis's own
 * object functions, counted first. */
#include "redis_bound.h"

/* What a reply's element costs in memory beside its bytes (hiredis's
 * redisReply and the pointer to it). */
#define ELEMENT_COST 64

/* hiredis's functions (the same for every reader). */
static redisReplyObjectFunctions *hiredis_fns;

static bool
grows(const redisReadTask *task, size_t by)
{
	struct redis_bound *b = task->privdata;

	b->size += ELEMENT_COST + by;
	if (b->size > b->max)
		b->over = true;
	return !b->over;
}

static void *
bounded_string(const redisReadTask *task, char *str, size_t len)
{
	return grows(task, len) ? hiredis_fns->createString(task, str, len)
	                        : NULL;
}

static void *
bounded_array(const redisReadTask *task, int elements)
{
	return grows(task, elements > 0 ? (size_t)elements * sizeof(void *)
	                                : 0)
	               ? hiredis_fns->createArray(task, elements)
	               : NULL;
}

static void *
bounded_integer(const redisReadTask *task, long long value)
{
	return grows(task, 0) ? hiredis_fns->createInteger(task, value) : NULL;
}

static void *
bounded_nil(const redisReadTask *task)
{
	return grows(task, 0) ? hiredis_fns->createNil(task) : NULL;
}

static void
bounded_free(void *reply)
{
	hiredis_fns->freeObject(reply);
}

static redisReplyObjectFunctions bounded_fns = {
        bounded_string, bounded_array, bounded_integer, bounded_nil,
        bounded_free};

void
redis_bound_attach(redisReader *r, struct redis_bound *b)
{
	if (!hiredis_fns)
		hiredis_fns = r->fn;
	b->size = 0;
	b->over = false;
	r->privdata = b;
	r->fn = &bounded_fns;
}

void
redis_bound_next(struct redis_bound *b)
{
	b->size = 0;
}

bool
redis_bound_passed(const redisReader *r, struct redis_bound *b)
{
	if (r->len - r->pos > b->max)
		b->over = true;
	return b->over;
}
