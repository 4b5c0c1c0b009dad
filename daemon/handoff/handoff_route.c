// SPDX-License-Identifier: GPL-2.0-or-later
/* The transparent hand-off's way back: the policy route that takes the
 * MTA's answers to the sockets greygated opened from each client's own
 * address (nft/markroute.c installs and removes it), installed at start,
 * said once greygated is up, removed at stop. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "handoff-int.h"
#include "log.h"
#include "markroute.h"

static struct markroute_config
route_config(const struct handoff_settings *cfg)
{
	return (struct markroute_config){.mark = cfg->handoff.mark,
	                                 .table = cfg->handoff.route_table,
	                                 .sport = cfg->smtp_port};
}

int
handoff_route_open(struct handoff_state *hs, char *err)
{
	struct markroute_config rc = route_config(&hs->cfg);
	struct markroute_result res;
	int r;

	if (hs->cfg.handoff.mode != HANDOFF_TRANSPARENT)
		return 0;
	r = markroute_install(&rc, &res);
	if (r < 0) {
		snprintf(err, 512,
		         "[handoff] mode = transparent: the policy route for "
		         "the MTA's answers (ip rule fwmark 0x%x ipproto tcp "
		         "sport %u lookup %u): %s",
		         rc.mark, rc.sport, rc.table, markroute_explain(r));
		return r;
	}
	hs->transparent_routed = true;
	if (res.stale)
		log_warnx("hand-off: removed %u policy rule%s (fwmark 0x%x, "
		          "table %u) a greygated that did not stop cleanly "
		          "left",
		          res.stale, res.stale == 1 ? "" : "s", rc.mark,
		          rc.table);
	/* (said once greygated is up: a refusal to start stays one line) */
	snprintf(hs->route_said, sizeof(hs->route_said),
	         "hand-off: transparent: connections from each client's "
	         "own address (mark 0x%x); the MTA's answers come back by "
	         "ip rule fwmark 0x%x ipproto tcp sport %u lookup %u (IPv4%s)",
	         rc.mark, rc.mark, rc.sport, rc.table,
	         res.ipv6 ? " and IPv6" : " only: no IPv6 here");
	return 0;
}

void
handoff_say_route(struct handoff_state *hs)
{
	if (hs && hs->route_said[0])
		log_info("%s", hs->route_said);
}

void
handoff_route_close(struct handoff_state *hs)
{
	struct markroute_config rc = route_config(&hs->cfg);
	int r;

	if (!hs->transparent_routed)
		return;
	hs->transparent_routed = false;
	r = markroute_remove(&rc);
	if (r < 0)
		log_warnx("hand-off: the policy rule (fwmark 0x%x, table %u) "
		          "could not be removed: %s (the next start removes "
		          "it)",
		          rc.mark, rc.table, strerror(-r));
}
