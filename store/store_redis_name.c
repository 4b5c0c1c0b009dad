// SPDX-License-Identifier: GPL-2.0-or-later
/* A gateway's name in the shared store (see store_redis.h): every
 * gateway claims PREFIXgateway:NAME for itself every half minute, with
 * an end of its own; finding another instance's claim there means two
 * gateways share one name. */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_loop.h"
#include "redis_script.h"
#include "store_redis.h"

/* KEYS: the name's key. ARGV: this instance, seconds the claim lasts.
 * Returns OK, or the other instance that holds the name. */
static const char claim_script[] =
        "local holder = redis.call('GET', KEYS[1])\n"
        "if holder and holder ~= ARGV[1] then return holder end\n"
        "redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])\n"
        "return {ok = 'OK'}\n";
static struct redis_script claim_cached = REDIS_SCRIPT(claim_script);

struct claim {
	store_redis_claimed_fn *done;
	void *ctx;
};

static void
on_claimed(struct redisReply *reply, void *ctx)
{
	struct claim *cl = ctx;

	if (!reply)
		cl->done(-EIO, NULL, cl->ctx);
	else if (reply->type == REDIS_REPLY_STATUS)
		cl->done(0, NULL, cl->ctx);
	else if (reply->type == REDIS_REPLY_STRING)
		cl->done(-EEXIST, reply->str, cl->ctx);
	else
		cl->done(-EPROTO, NULL, cl->ctx);
	free(cl);
}

int
store_redis_claim_name(struct rconn *c, const char *prefix, const char *gateway,
                       const char *instance, unsigned ttl_sec,
                       store_redis_claimed_fn *done, void *ctx)
{
	char key[STORE_REDIS_KEY_MAX], ttl[16];
	const char *argv[] = {"1", key, instance, ttl};
	struct claim *cl;
	int n = snprintf(key, sizeof(key), "%sgateway:%s", prefix, gateway);
	int r;

	if (n < 0 || (size_t)n >= sizeof(key))
		return -ENAMETOOLONG;
	snprintf(ttl, sizeof(ttl), "%u", ttl_sec);
	cl = malloc(sizeof(*cl));
	if (!cl)
		return -ENOMEM;
	*cl = (struct claim){done, ctx};
	r = redis_script_eval(c, &claim_cached, on_claimed, cl, 4, argv, NULL);
	if (r < 0)
		free(cl);
	return r;
}
