/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Lua scripts sent to Redis by their SHA1 (EVALSHA) instead of their
 * text each time (EVAL): greygate's decision script is over 2 KB and
 * goes with every decision, so a backlog written back after an outage
 * was mostly the same script again and again.
 *
 * A script's SHA1 is learnt from Redis itself (one SCRIPT LOAD, the
 * first time the script is used); until it answers, the script goes
 * whole. A Redis that lacks the script (restarted, SCRIPT FLUSH, another
 * Redis) answers NOSCRIPT: that command is sent again whole, which puts
 * the script back into Redis's cache, so the next EVALSHA finds it. A
 * command sent again is answered after those sent meanwhile: greygate's
 * scripts merge and do not depend on each other's order. */
#ifndef GREYGATE_REDIS_SCRIPT_H
#define GREYGATE_REDIS_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>

#include "redis_loop.h"

struct redis_script {
	const char *text;
	char sha[41]; /* as Redis said it; "" until then */
	bool loading; /* a SCRIPT LOAD is on its way */
};

#define REDIS_SCRIPT(t)                                                        \
	{                                                                      \
		.text = (t)                                                    \
	}

/*
 * redis_script_eval - run s with argv (its words after the script:
 * numkeys, keys, arguments; lens NULL for C strings); fn gets the
 * script's answer, as rconn_command's.
 * Return: 0, or -ENOTCONN (down: fn is not called), -ENOMEM or -E2BIG
 * (more than 32 words).
 */
int redis_script_eval(struct rconn *c, struct redis_script *s,
                      rconn_reply_fn *fn, void *ctx, int argc,
                      const char **argv, const size_t *lens);

#endif
