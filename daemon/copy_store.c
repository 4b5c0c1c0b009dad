// SPDX-License-Identifier: GPL-2.0-or-later
/* greygated --store-copy to-redis|to-lmdb: the greylist moved between
 * this gateway's LMDB store (store_dir) and the shared Redis (store),
 * once, with greygated stopped (store/store_copy.h does the moving),
 * and the run-time allow list (store_dir's allow-runtime.txt, or the
 * PREFIXallow: keys).
 * The keys are agreed first, as a gateway's start would: a copy into a
 * Redis whose gateways key clients otherwise would mean nothing. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "allow.h"
#include "config.h"
#include "copy_store.h"
#include "grey_store.h"
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
on_agreed(const struct store_redis_agreement *ag, void *ctx)
{
	struct agreement *a = ctx;

	a->told = true;
	a->err = ag->err;
	snprintf(a->why, sizeof(a->why), "%s", ag->why);
}

static void
wait_until(struct loop *loop, const bool *cond)
{
	uint64_t end = loop_now_ms(loop) + WAIT_MS;

	while (!*cond && loop_now_ms(loop) < end)
		loop_run_once(loop, 50);
}

/* --- the run-time allow list (greygatectl allow) --- */

struct allow_copy {
	struct allow_runtime *list; /* to-lmdb: the local list, merged */
	size_t n;
	unsigned waiting;
	uint64_t copied, failed;
	bool walked;
	int walk_err;
};

static void
on_allow_sent(int err, void *ctx)
{
	struct allow_copy *ac = ctx;

	ac->waiting--;
	if (err < 0)
		ac->failed++;
	else
		ac->copied++;
}

static void
on_allow_found(const struct grey_client *net, int64_t expires,
               const char *comment, void *ctx)
{
	struct allow_copy *ac = ctx;
	struct allow_runtime e = {.expires = expires};

	if (!allow_text_ok(comment) || strlen(comment) >= sizeof(e.comment)) {
		ac->failed++;
		return;
	}
	grey_client_format(net, e.cidr, sizeof(e.cidr));
	/* a removal's mark (greygatectl disallow): removed here too */
	if (expires == GREY_ALLOW_REMOVED) {
		allow_runtime_remove(ac->list, &ac->n, e.cidr);
		return;
	}
	snprintf(e.comment, sizeof(e.comment), "%s", comment);
	if (allow_runtime_put(&ac->list, &ac->n, &e) < 0)
		ac->failed++;
	else
		ac->copied++;
}

static void
on_allows_walked(int err, const struct store_redis_scan_counts *n, void *ctx)
{
	struct allow_copy *ac = ctx;

	ac->walked = true;
	ac->walk_err = err;
	ac->failed += n->bad;
}

/* The entries of store_dir's list into Redis (each on the stream too,
 * for the running gateways), or Redis's into that list (one for the
 * same network replaced). Return: 0 or -errno; ac counts. */
static int
copy_allows(const struct config *cfg, bool to_redis, struct loop *loop,
            struct rconn *c, int64_t now, struct allow_copy *ac)
{
	char path[sizeof(cfg->store_dir) + sizeof(ALLOW_RUNTIME_FILE) + 1];
	int r;

	snprintf(path, sizeof(path), "%s/" ALLOW_RUNTIME_FILE,
	         cfg->store_dir);
	r = allow_runtime_load(path, now, &ac->list, &ac->n);
	if (r < 0)
		return r;
	if (to_redis) {
		for (size_t i = 0; i < ac->n; i++) {
			struct grey_client net;

			if (grey_cidr_parse(ac->list[i].cidr, &net) < 0 ||
			    store_redis_allow(c, "gg:", &net,
			                      ac->list[i].expires,
			                      ac->list[i].comment,
			                      cfg->hostname, on_allow_sent,
			                      ac) < 0) {
				ac->failed++;
				continue;
			}
			ac->waiting++;
		}
		for (uint64_t end = loop_now_ms(loop) + WAIT_MS;
		     ac->waiting && loop_now_ms(loop) < end;)
			loop_run_once(loop, 50);
		ac->failed += ac->waiting;
		return 0;
	}
	r = store_redis_scan_allows(c, "gg:", on_allow_found,
	                            on_allows_walked, ac);
	if (r < 0)
		return r;
	wait_until(loop, &ac->walked);
	if (!ac->walked || ac->walk_err < 0)
		return -EIO;
	return allow_runtime_save(path, ac->list, ac->n);
}

static int
copy(const struct config *cfg, bool to_redis, struct loop *loop,
     struct rconn *c, struct store *lmdb)
{
	struct allow_copy allows = {0};
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
	r = store_redis_agree(c, "gg:", &cfg->grey, cfg->hostname, 0,
	                      on_agreed, &agreed);
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
	if (r == 0) {
		r = copy_allows(cfg, to_redis, loop, c, now, &allows);
		free(allows.list);
	}
	printf("greygated: copied %" PRIu64 " triplets, %" PRIu64
	       " passes, %" PRIu64 " traps and %" PRIu64
	       " run-time allow entries from %s%s to %s%s; %" PRIu64
	       " expired left behind, %" PRIu64 " unreadable, %" PRIu64
	       " failed\n",
	       n.triplets, n.passes, n.traps, allows.copied,
	       to_redis ? "LMDB in " : "",
	       to_redis ? cfg->store_dir : cfg->store,
	       to_redis ? "" : "LMDB in ",
	       to_redis ? cfg->store : cfg->store_dir, n.skipped, n.bad,
	       n.failed + allows.failed);
	if (r < 0) {
		fprintf(stderr, "greygated: the copy stopped: %s\n",
		        strerror(-r));
		return 1;
	}
	return n.failed || allows.failed ? 1 : 0;
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
