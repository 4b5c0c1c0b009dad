// SPDX-License-Identifier: GPL-2.0-or-later
/* greygated --store-copy to-redis|to-lmdb: the greylist moved between
 * this gateway's LMDB store (store_dir) and the shared Redis (store),
 * once, with greygated stopped (policy/store_copy.h does the moving).
 * The keys are agreed first, as a gateway's start would: a copy into a
 * Redis whose gateways key clients otherwise would mean nothing. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "copy_store.h"
#include "loop.h"
#include "redis_loop.h"
#include "store_copy.h"
#include "store_redis.h"
#include "timesrc.h"

#define WAIT_MS 5000

struct agreement {
	bool told;
	int err;
	char why[256];
};

static void
on_agreed(int err, const char *why, void *ctx)
{
	struct agreement *a = ctx;

	a->told = true;
	a->err = err;
	snprintf(a->why, sizeof(a->why), "%s", why);
}

static void
wait_until(struct loop *loop, const bool *cond)
{
	uint64_t end = loop_now_ms(loop) + WAIT_MS;

	while (!*cond && loop_now_ms(loop) < end)
		loop_run_once(loop, 50);
}

static int
copy(const struct config *cfg, bool to_redis, struct loop *loop,
     struct rconn *c, struct store *lmdb)
{
	struct agreement agreed = {0};
	struct store_copy_counts n;
	int64_t now = time(NULL);
	bool up = false;
	int r;

	for (uint64_t end = loop_now_ms(loop) + WAIT_MS;
	     !(up = rconn_up(c)) && loop_now_ms(loop) < end;)
		loop_run_once(loop, 50);
	if (!up) {
		fprintf(stderr, "greygated: %s: %s\n", cfg->store,
		        rconn_why(c)[0] ? rconn_why(c) : "no answer");
		return 1;
	}
	r = store_redis_agree(c, "gg:", &cfg->grey, cfg->hostname, on_agreed,
	                      &agreed);
	if (r == 0)
		wait_until(loop, &agreed.told);
	if (r < 0 || !agreed.told || agreed.err < 0) {
		fprintf(stderr, "greygated: %s: %s\n", cfg->store,
		        agreed.why[0] ? agreed.why
		                      : "the keys were not agreed");
		return 1;
	}
	r = to_redis ? store_copy_to_redis(lmdb, loop, c, "gg:", &cfg->grey,
	                                   cfg->hostname, now, &n)
	             : store_copy_from_redis(loop, c, "gg:", lmdb, now,
	                                     cfg->grey.retry_window_sec, &n);
	printf("greygated: copied %" PRIu64 " triplets, %" PRIu64
	       " passes and %" PRIu64 " traps from %s%s to %s%s; %" PRIu64
	       " expired left behind, %" PRIu64 " unreadable, %" PRIu64
	       " failed\n",
	       n.triplets, n.passes, n.traps, to_redis ? "LMDB in " : "",
	       to_redis ? cfg->store_dir : cfg->store,
	       to_redis ? "" : "LMDB in ",
	       to_redis ? cfg->store : cfg->store_dir, n.skipped, n.bad,
	       n.failed);
	if (r < 0) {
		fprintf(stderr, "greygated: the copy stopped: %s\n",
		        strerror(-r));
		return 1;
	}
	return n.failed ? 1 : 0;
}

int
copy_store_main(const struct config *cfg, const char *direction)
{
	const struct store_url *u = &cfg->store_url;
	bool to_redis = !strcmp(direction, "to-redis");
	char password[256] = "", err[512];
	struct rconn_config rc;
	struct store *lmdb;
	struct loop *loop;
	struct rconn *c;
	int r;

	if (!to_redis && strcmp(direction, "to-lmdb") != 0) {
		fprintf(stderr,
		        "greygated: --store-copy to-redis or to-lmdb\n");
		return 2;
	}
	if (!u->redis) {
		fprintf(stderr,
		        "greygated: --store-copy: store = %s: set store "
		        "to the Redis to copy %s\n",
		        cfg->store, to_redis ? "into" : "from");
		return 2;
	}
	if (cfg->store_password_file[0] &&
	    store_password_read(cfg->store_password_file, password,
	                        sizeof(password), err) < 0) {
		fprintf(stderr, "greygated: %s\n", err);
		return 2;
	}
	r = store_open(cfg->store_dir, false, &lmdb);
	if (r < 0) {
		fprintf(stderr, "greygated: store %s: %s\n", cfg->store_dir,
		        r == -EPROTO ? store_open_why() : strerror(-r));
		return 2;
	}
	store_url_connection(u, password, WAIT_MS, &rc);
	loop = loop_new(timesrc_system());
	c = loop ? rconn_new(loop, &rc, NULL, NULL) : NULL;
	explicit_bzero(password, sizeof(password));
	r = c ? copy(cfg, to_redis, loop, c, lmdb) : 1;
	rconn_free(c);
	loop_free(loop);
	store_close(lmdb);
	return r;
}
