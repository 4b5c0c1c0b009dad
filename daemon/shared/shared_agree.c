// SPDX-License-Identifier: GPL-2.0-or-later
/* greygated on a shared store: its agreement with the store (the site's
 * settings compared and written where absent, asked again every
 * SHARED_AGREE_EVERY_SEC; what an agreement found: emptied, taken over,
 * yielding) and this gateway's name in it (an instance id kept in
 * store_dir, claimed every SHARED_CLAIM_EVERY_SEC). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "log.h"
#include "redis_loop.h"
#include "shared-int.h"
#include "store_redis.h"

/* --- this gateway's name --- */

#define CLAIM_TTL_SEC 90
#define CLASH_SAY_AGAIN_SEC 3600

/* This gateway's instance: an id kept in store_dir, so that a restart
 * is the same gateway (a new one, if it cannot be kept). */
void
shared_instance_id(const char *dir, char out[17])
{
	char path[4200], text[17] = "";
	uint8_t raw[8] = {0};
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/instance-id", dir);
	f = fopen(path, "re");
	if (f) {
		bool ok = fscanf(f, "%16[0-9a-f]", text) == 1 &&
		          strlen(text) == 16;

		fclose(f);
		if (ok) {
			memcpy(out, text, 17);
			return;
		}
	}
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		snprintf(out, 17, "%016llx", (unsigned long long)getpid());
	else
		for (size_t i = 0; i < sizeof(raw); i++)
			snprintf(out + 2 * i, 3, "%02x", raw[i]);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	          0644);
	if (fd < 0 || write(fd, out, 16) != 16 || write(fd, "\n", 1) != 1)
		log_warnx("store: %s cannot be written: a restart will count "
		          "as another gateway for a minute and a half",
		          path);
	if (fd >= 0)
		close(fd);
}

static void
on_claimed(int err, const char *other, void *ctx)
{
	struct shared *sh = ctx;
	int64_t now = loop_wall_sec(sh->loop);

	if (err == -EEXIST) {
		if (!sh->name_clash ||
		    now - sh->clash_said >= CLASH_SAY_AGAIN_SEC) {
			sh->clash_said = now;
			log_warnx("store: another gateway (instance %.16s) "
			          "uses the name %s in the shared store: give "
			          "each gateway a hostname of its own, or the "
			          "site's report and the stream's figures mix "
			          "them up",
			          other, sh->cfg.hostname);
		}
		sh->name_clash = true;
	} else if (err == 0 && sh->name_clash) {
		sh->name_clash = false;
		log_info("store: the name %s is this gateway's alone again",
		         sh->cfg.hostname);
	}
}

void
shared_claim_name(struct shared *sh)
{
	sh->claimed_at = loop_wall_sec(sh->loop);
	store_redis_claim_name(sh->c, SHARED_PREFIX, sh->cfg.hostname,
	                       sh->instance, CLAIM_TTL_SEC, on_claimed, sh);
}

/* --- the site's settings --- */

static void on_agreed(const struct store_redis_agreement *a, void *ctx);

/* The settings compared with the store's (and written where absent). */
void
shared_agree(struct shared *sh)
{
	int r;

	if (sh->agreeing || sh->closing || !rconn_up(sh->c))
		return;
	sh->agreed_asked = loop_wall_sec(sh->loop);
	r = store_redis_agree(sh->c, SHARED_PREFIX, &sh->cfg.grey,
	                      sh->cfg.hostname, sh->site_since, on_agreed,
	                      sh);
	if (r == 0) {
		sh->agreeing = true;
		return;
	}
	snprintf(sh->last_error, sizeof(sh->last_error),
	         "cannot ask for the settings: %s", strerror(-r));
	loop_timer_arm(sh->loop, &sh->agree_again,
	               loop_now_ms(sh->loop) + SHARED_AGREE_RETRY_MS);
}

void
shared_on_agree_again(struct loop *loop, struct loop_timer *t, void *ctx)
{
	shared_agree(ctx);
}

void
shared_say_disagreed(struct shared *sh)
{
	sh->disagreed_said = loop_wall_sec(sh->loop);
	log_warnx("store: %s; this gateway yields: it writes nothing to the "
	          "shared store and decides from what it knows here until "
	          "its settings agree (correct them and restart it)",
	          sh->last_error);
}

/* Agreed (again): whatever waited for it goes. */
static void
agreed_now(struct shared *sh, const struct store_redis_agreement *a)
{
	bool emptied = sh->store_created && a->created_at != sh->store_created;
	bool was = sh->agreed;

	sh->store_created = a->created_at;
	sh->site_since = a->since;
	if (a->took_over)
		log_warnx("store: the shared store held other settings, "
		          "written by a gateway that agreed later than this "
		          "site: this site's are back, and that gateway yields");
	if (emptied)
		log_warnx("store: Redis at %s was emptied since this gateway "
		          "last agreed (its settings were gone; %s): %zu "
		          "pass(es) known here, the triplets greylisted here "
		          "lately and the run-time allow list are written "
		          "back",
		          sh->cfg.store,
		          a->created ? "written back from here"
		                     : "written back by another gateway",
		          shared_passes_count(sh->passes));
	if (sh->disagreed) {
		sh->disagreed = false;
		log_info("store: this gateway's settings agree with the shared "
		         "store's again");
	}
	sh->agreed = true;
	sh->last_error[0] = 0;
	if (emptied) {
		sh->report_unsent = true;
		shared_restore_passes(sh);
	}
	if (was && !emptied) {
		shared_pump(sh);
		return;
	}
	sh->report_unsent = true; /* (a Redis restarted empty lost it) */
	if (sh->down_since)
		log_info("store: Redis at %s is back after %" PRId64 " s",
		         sh->cfg.store,
		         loop_wall_sec(sh->loop) - sh->down_since);
	else if (!sh->opening && !was)
		log_info("store: connected to Redis at %s", sh->cfg.store);
	sh->down_since = 0;
	shared_claim_name(sh);
	shared_send_waiting(sh);
	shared_send_waiting_allows(sh);
	shared_share_allow_list(sh);
	shared_follow_agreed(sh);
}

static void
on_agreed(const struct store_redis_agreement *a, void *ctx)
{
	struct shared *sh = ctx;

	sh->agreeing = false;
	if (a->err == -EIO)
		return; /* the connection went: agreed at the next */
	if (a->err == -EAGAIN) {
		/* Redis is up but says no (still loading its data): asked
		 * again on the same connection, not waited out. */
		snprintf(sh->last_error, sizeof(sh->last_error), "%s", a->why);
		if (!sh->answer_said && !sh->opening)
			log_warnx("store: Redis at %s: %s: asked again every "
			          "%u ms",
			          sh->cfg.store, a->why, SHARED_AGREE_RETRY_MS);
		sh->answer_said = true;
		if (sh->agreed) {
			sh->agreed = false;
			shared_say_down(sh);
		}
		loop_timer_arm(sh->loop, &sh->agree_again,
		               loop_now_ms(sh->loop) + SHARED_AGREE_RETRY_MS);
		return;
	}
	sh->answer_said = false;
	if (a->err < 0) {
		/* A running gateway never stops for what another wrote: it
		 * yields (writes nothing) and says so, every minute. */
		bool was_said = sh->disagreed;

		snprintf(sh->last_error, sizeof(sh->last_error), "%s", a->why);
		sh->disagreed = true;
		sh->agreed = false;
		if (!sh->opening && !was_said)
			shared_say_disagreed(sh);
		return;
	}
	agreed_now(sh, a);
}

