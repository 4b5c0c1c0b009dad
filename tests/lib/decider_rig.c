// SPDX-License-Identifier: GPL-2.0-or-later
/* A decider as greygated wires it, for the daemon's unit tests (see
 * decider_rig.h). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "decider_rig.h"

void
decider_rig_open(struct decider_rig *r, const char *name,
                 const struct timesrc *clock)
{
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
	r->decider = decider_new(r->loop, &r->cfg);
	CHECK(r->decider);
	CHECK_INT(decider_open(r->decider, r->store), 0);
	decider_use_records(r->decider, r->records);
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

struct grey_decision
decider_rig_attempt(struct decider_rig *r, const char *addr,
                    const char *sender, const char *rcpt)
{
	struct grey_attempt a = {.kind = GREY_ATTEMPT_RCPT,
	                         .helo = "c.test",
	                         .sender = sender,
	                         .rcpt = rcpt,
	                         .path = GREY_PATH_TARPIT};
	struct grey_decision d;

	a.client.family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	CHECK_INT(inet_pton(a.client.family, addr, a.client.bytes), 1);
	CHECK_INT(decider_decide(r->decider, &a, &d), 0);
	return d;
}
