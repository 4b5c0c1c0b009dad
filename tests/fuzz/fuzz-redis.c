// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer target for what greygate reads from Redis: any bytes as a
 * connection's replies, read by hiredis's reader under greygate's bound
 * on a reply's size (1 MiB here), each reply given to every reader of
 * greygate's records: a pass or trap, a triplet, the settings'
 * agreement, a stream entry (and the entries of an XREAD's nesting). */
#include <hiredis/hiredis.h>
#include <stdint.h>
#include <stdlib.h>

#include "redis_bound.h"
#include "store_redis.h"

static void
read_all(const redisReply *r, int depth)
{
	static const char ours[STORE_REDIS_AGREED][24] = {
	        "24", "64", "300", "172800", "3024000", "off"};
	struct store_client c;
	struct store_triplet t;
	struct store_redis_event ev;
	struct store_redis_agreement a;

	store_redis_parse_client(r, &c);
	store_redis_parse_triplet(r, &t);
	store_redis_read_agreement(r, ours, &a);
	store_redis_parse_event(r, &ev);
	if (r->type != REDIS_REPLY_ARRAY || depth > 3)
		return;
	for (size_t i = 0; i < r->elements; i++)
		read_all(r->element[i], depth + 1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct redis_bound bound = {.max = 1u << 20};
	redisReader *r = redisReaderCreate();
	void *reply;

	if (!r)
		return 0;
	redis_bound_attach(r, &bound);
	if (redisReaderFeed(r, (const char *)data, size) == REDIS_OK)
		while (!redis_bound_passed(r, &bound) &&
		       redisReaderGetReply(r, &reply) == REDIS_OK && reply) {
			read_all(reply, 0);
			freeReplyObject(reply);
			redis_bound_next(&bound);
		}
	redisReaderFree(r);
	return 0;
}
