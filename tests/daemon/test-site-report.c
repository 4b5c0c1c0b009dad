// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the site's report (daemon/control/site_report.h) as greygatectl asks
 * it: two gateways (each a real decider over LMDB, its records on one
 * real redis-server, each on its own loop) decide and share their
 * figures; "report --site" at the first sums both (its own as counted
 * now, the other's as written), names each gateway's share, and says so
 * in text, JSON (read back by python3's parser) and SVG; a gateway that
 * has not written yet is not there; a store not shared says its report
 * is the site's; a Redis gone is said. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_parts.h"
#include "check.h"
#include "commands.h"
#include "control_client.h"
#include "decider_rig.h"
#include "json_check.h"
#include "log.h"
#include "redis_server.h"

static struct housekeeping_settings hk_part; /* (its part) */
static struct allow_settings allow_part;     /* (theirs) */

static struct redis_server server;
static struct decider_rig mx1, mx2;
static struct metrics_figures *figures;
static struct housekeeping *hk;
static struct allow_lists *allow;
static struct commands *commands;

static void
root_figures(void *root, struct metrics_snapshot *s)
{
	memset(s, 0, sizeof(*s));
}

static int
root_reload(void *root, char *err)
{
	return 0;
}

/* greygatectl's door at the rig r. */
static void
open_door(struct decider_rig *r)
{
	struct control_access access = {(gid_t)-1, (uid_t)-1, "nobody"};
	char err[512] = "";

	snprintf(r->cfg.control_socket, sizeof(r->cfg.control_socket),
	         "%.80s/ctl.sock", r->dir);
	figures = metrics_figures_new(loop_wall_sec(r->loop));
	config_housekeeping_part(&r->cfg, &hk_part);
	hk = housekeeping_open(&(struct housekeeping_links){
	        r->loop, r->store, r->decider, figures}, &hk_part, false);
	CHECK(hk);
	config_allow_part(&r->cfg, &allow_part);
	allow = allow_lists_open(&(struct allow_links){
	        r->loop, r->decider, NULL, r->records}, &allow_part);
	CHECK(allow);
	struct command_links links = {
	        .figures = root_figures,
	        .reload = root_reload,
	        .root = NULL,
	        .loop = r->loop,
	        .decider = r->decider,
	        .records = r->records,
	        .nft = NULL,
	        .allow = allow,
	        .hk = hk,
	};
	config_command_part(&r->cfg, &links.cfg);
	if (commands_open(&links, &access, &commands, err) < 0) {
		fprintf(stderr, "commands_open: %s\n", err);
		exit(1);
	}
}

static void
close_door(void)
{
	commands_close(commands);
	allow_lists_close(allow);
	housekeeping_close(hk);
	metrics_figures_free(figures);
}

/* Both loops turn for ms (each gateway's writes reach Redis). */
static void
turn_both(int ms)
{
	for (int t = 0; t < ms / 10; t++) {
		loop_run_once(mx1.loop, 5);
		loop_run_once(mx2.loop, 5);
	}
}

static void
share(struct decider_rig *r)
{
	grey_store_share_report(r->records, decider_grey(r->decider),
	                        loop_wall_sec(r->loop) - 60, true);
}

static void
test_two_gateways(void)
{
	const char *a;

	redis_server_start_or_skip(&server);
	decider_rig_open(&mx1, "site-mx1", timesrc_system());
	decider_rig_open(&mx2, "site-mx2", timesrc_system());
	decider_rig_use_redis(&mx1, server.sock, "mx1.test");
	decider_rig_use_redis(&mx2, server.sock, "mx2.test");
	open_door(&mx1);

	/* mx2 has written nothing yet: the site is mx1 alone */
	decider_rig_attempt(&mx1, "198.51.100.7", "a@s.test", "b@example.org");
	turn_both(200);
	a = control_ask(mx1.loop, mx1.cfg.control_socket, "report", "--site",
	                NULL);
	CHECK(!strncmp(a, "ok\n", 3));
	CHECK(strstr(a, "site of 1 gateway, "));

	for (int i = 0; i < 3; i++)
		decider_rig_attempt(&mx2, "203.0.113.9", "c@s.test",
		                    i ? "e@example.org" : "d@example.org");
	share(&mx2);
	decider_rig_attempt(&mx1, "198.51.100.8", "f@s.test", "g@example.org");
	turn_both(300);
	a = control_ask(mx1.loop, mx1.cfg.control_socket, "report", "--site",
	                NULL);
	CHECK(strstr(a, "site of 2 gateways, "));
	CHECK(strstr(a, "mx1.test"));
	CHECK(strstr(a, "mx2.test"));
	a = control_ask(mx1.loop, mx1.cfg.control_socket, "report", "--site",
	                "--json", NULL);
	CHECK(!strncmp(a, "ok\n", 3));
	/* mx1's own as counted now (2), mx2's as written (3) */
	json_check(a + 3,
	           "assert r['funnel']['attempts'] == 5, r['funnel']\n"
	           "g = {x['name']: x['attempts'] for x in r['gateways']}\n"
	           "assert g == {'mx1.test': 2, 'mx2.test': 3}, g");
	a = control_ask(mx1.loop, mx1.cfg.control_socket, "report", "--site",
	                "--svg", NULL);
	CHECK(strstr(a, "<svg"));
	CHECK(strstr(a, "</svg>"));

	/* Redis gone: said */
	redis_server_stop(&server);
	turn_both(300);
	a = control_ask(mx1.loop, mx1.cfg.control_socket, "report", "--site",
	                NULL);
	CHECK(!strncmp(a, "error: report --site: ", 22));
	close_door();
	decider_rig_close(&mx1);
	decider_rig_close(&mx2);
}

/* On this gateway's own LMDB, its report is the site's. */
static void
test_not_shared(void)
{
	const char *a;

	decider_rig_open(&mx1, "site-lmdb", timesrc_system());
	open_door(&mx1);
	a = control_ask(mx1.loop, mx1.cfg.control_socket, "report", "--site",
	                NULL);
	CHECK(strstr(a, "error: report --site: this gateway's store is not "
	                "shared (store = lmdb): its report is the site's"));
	close_door();
	decider_rig_close(&mx1);
}

int
main(void)
{
	log_init("test-site-report", false, LOG_LEVEL_WARN);
	RUN(test_not_shared);
	RUN(test_two_gateways);
	return 0;
}
