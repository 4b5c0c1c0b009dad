// SPDX-License-Identifier: GPL-2.0-or-later
/* A decider as greygated wires it, for the daemon's unit tests (see
 * decider_rig.h). */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config_parts.h"
#include "check.h"
#include "decider_rig.h"
#include "redis_server.h"
#include "shared.h"
#include "store_url.h"

void
decider_rig_open(struct decider_rig *r, const char *name,
                 const struct timesrc *clock)
{
	struct decider_settings part;

	memset(r, 0, sizeof(*r));
	snprintf(r->dir, sizeof(r->dir), "/tmp/gg-%.32s-XXXXXX", name);
	CHECK(mkdtemp(r->dir));
	config_defaults(&r->cfg);
	snprintf(r->cfg.store_dir, sizeof(r->cfg.store_dir), "%s", r->dir);
	r->loop = loop_new(clock);
	CHECK(r->loop);
	CHECK_INT(store_open(r->dir, false, &r->store), 0);
	r->records = grey_store_lmdb_new(r->store);
	CHECK(r->records);
	config_decider_part(&r->cfg, &part);
	r->decider = decider_new(r->loop, &part);
	CHECK(r->decider);
	CHECK_INT(decider_open(r->decider, r->store), 0);
	decider_use_records(r->decider, r->records);
}

void
decider_rig_reconfigure(struct decider_rig *r)
{
	struct decider_settings part;

	config_decider_part(&r->cfg, &part);
	decider_reconfigure(r->decider, &part);
}

void
decider_rig_close(struct decider_rig *r)
{
	char cmd[128];

	grey_store_free(r->records);
	decider_free(r->decider);
	store_close(r->store);
	loop_free(r->loop);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", r->dir);
	CHECK_INT(system(cmd), 0);
}

void
decider_rig_use_redis(struct decider_rig *r, const char *sock,
                      const char *hostname)
{
	struct shared_settings part;
	char err[512] = "", path[128];
	const char *why = NULL;
	struct grey_store_status st;
	FILE *f;

	snprintf(r->cfg.store, sizeof(r->cfg.store), "redis+unix://%s", sock);
	CHECK_INT(store_url_parse(r->cfg.store, &r->cfg.store_url, &why), 0);
	snprintf(path, sizeof(path), "%.100s/redis.pass", r->dir);
	CHECK((f = fopen(path, "w")));
	fputs(REDIS_TEST_PASSWORD "\n", f);
	fclose(f);
	CHECK_INT(chmod(path, 0600), 0);
	snprintf(r->cfg.store_password_file, sizeof(r->cfg.store_password_file),
	         "%s", path);
	snprintf(r->cfg.hostname, sizeof(r->cfg.hostname), "%s", hostname);
	grey_store_free(r->records);
	r->records = NULL;
	config_shared_part(&r->cfg, &part);
	if (shared_open(r->loop, &part, &(struct shared_allow_source){0},
	                &r->records, err) < 0) {
		fprintf(stderr, "shared_open: %s\n", err);
		exit(1);
	}
	CHECK(r->records);
	decider_use_records(r->decider, r->records);
	grey_store_get_status(r->records, &st);
	CHECK(st.remote);
	CHECK(st.up);
}

struct told {
	bool told;
	int r;
	struct grey_decision d;
};

static void
on_decided(int r, const struct grey_attempt *a, const struct grey_decision *d,
           void *ctx)
{
	struct told *t = ctx;

	t->told = true;
	t->r = r;
	if (d)
		t->d = *d;
}

struct grey_decision
decider_wait(struct loop *loop, struct decider *decider, struct grey_attempt *a,
             bool log)
{
	struct told t = {0};

	/* (a shared store answers later: the loop turns meanwhile) */
	decider_decide_async(decider, a, log, on_decided, &t);
	LOOP_UNTIL(loop, t.told, 5000);
	CHECK(t.told);
	CHECK_INT(t.r, 0);
	return t.d;
}

struct grey_decision
decider_rig_attempt(struct decider_rig *r, const char *addr,
                    const char *sender, const char *rcpt)
{
	struct grey_attempt a = {.kind = GREY_ATTEMPT_RCPT,
	                         .helo = "c.test",
	                         .sender = sender,
	                         .rcpt = rcpt,
	                         .path = GREY_PATH_TARPIT};

	a.client.family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	CHECK_INT(inet_pton(a.client.family, addr, a.client.bytes), 1);
	return decider_wait(r->loop, r->decider, &a, true);
}
