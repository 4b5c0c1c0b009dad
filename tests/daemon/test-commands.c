// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of greygatectl's door as a service, through commands.h only:
 * made with its links (a real decider over a real LMDB store, the allow
 * lists, the housekeeping; no kernel sets, as greygated without a
 * gateway), asked over its real unix socket the way greygatectl asks
 * (arguments ended by NULs, a newline). Each command's answer and what
 * it did to the services behind it: allow and disallow, list, forget,
 * release (of a triplet waiting, and a refusal of one that does not),
 * the report and its reset, status from the root's figures, reload
 * through the root; every refusal says why, and a request that holds a
 * control character is refused whole. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "config_parts.h"
#include "check.h"
#include "commands.h"
#include "decider_rig.h"
#include "json_check.h"
#include "log.h"
#include "metrics.h"
#include "control_client.h"

static struct housekeeping_settings hk_part; /* (its part) */
static struct allow_settings allow_part;     /* (theirs) */

static struct decider_rig rig;
static struct allow_lists *allow;
static struct housekeeping *hk;
static struct metrics_figures *figures;
static struct commands *commands;
static unsigned reloads, figures_read;

/* The root's two functions, as the commands see them. */
static void
root_figures(void *root, struct metrics_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	s->now = loop_wall_sec(rig.loop);
	s->cfg = &rig.cfg;
	s->decided = *grey_get_counters(decider_grey(rig.decider));
	s->delays = grey_get_delay_histogram(decider_grey(rig.decider));
	figures_read++;
}

/* (a reload's: the root gives the commands their new part, as
 * gateway_reload does) */
static int
root_reload(void *root, char *err)
{
	struct command_settings part;

	reloads++;
	if (reloads == 1) {
		rig.cfg.grey.pass_ttl_sec = 7 * 86400;
		config_command_part(&rig.cfg, &part);
		commands_reconfigure(commands, &part);
	}
	if (reloads > 1) {
		snprintf(err, 512, "%s:3: not a key", rig.cfg.source.path);
		return -EINVAL;
	}
	return 0;
}

static void
setup(void)
{
	char err[512] = "";
	struct control_access access = {(gid_t)-1, (uid_t)-1, "nobody"};

	decider_rig_open(&rig, "commands", timesrc_system());
	rig.cfg.source.path = "/etc/greygate/greygate.conf";
	snprintf(rig.cfg.allow_dir, sizeof(rig.cfg.allow_dir), "%s/allow.d",
	         rig.dir);
	snprintf(rig.cfg.control_socket, sizeof(rig.cfg.control_socket),
	         "%s/ctl/control.sock", rig.dir);
	snprintf(rig.cfg.hostname, sizeof(rig.cfg.hostname), "mx1.test");
	figures = metrics_figures_new(loop_wall_sec(rig.loop));
	CHECK(figures);
	config_housekeeping_part(&rig.cfg, &hk_part);
	hk = housekeeping_open(&(struct housekeeping_links){
	        rig.loop, rig.store, rig.decider, figures}, &hk_part, false);
	CHECK(hk);
	config_allow_part(&rig.cfg, &allow_part);
	allow = allow_lists_open(&(struct allow_links){
	        rig.loop, rig.decider, NULL, rig.records}, &allow_part);
	CHECK(allow);
	CHECK_INT(allow_lists_reload(allow), 0);
	housekeeping_start(hk, rig.records, allow);
	reloads = figures_read = 0;
	struct command_links links = {
	        .figures = root_figures,
	        .reload = root_reload,
	        .root = NULL,
	        .loop = rig.loop,
	        .decider = rig.decider,
	        .records = rig.records,
	        .nft = NULL,
	        .allow = allow,
	        .hk = hk,
	};
	config_command_part(&rig.cfg, &links.cfg);
	if (commands_open(&links, &access, &commands, err) < 0) {
		fprintf(stderr, "commands_open: %s\n", err);
		exit(1);
	}
}

static void
teardown(void)
{
	commands_close(commands);
	housekeeping_stop(hk);
	allow_lists_close(allow);
	housekeeping_close(hk);
	metrics_figures_free(figures);
	decider_rig_close(&rig);
}

#define ask(...) control_ask(rig.loop, rig.cfg.control_socket, __VA_ARGS__)

/* The answer's first line is "ok", and the rest holds want. */
static void
check_ok(const char *answer, const char *want)
{
	if (strncmp(answer, "ok\n", 3) || !strstr(answer, want)) {
		fprintf(stderr, "answer: %s\nwanted ok with: %s\n", answer,
		        want);
		CHECK(false);
	}
}

static void
check_error(const char *answer, const char *want)
{
	if (strncmp(answer, "error: ", 7) || !strstr(answer, want)) {
		fprintf(stderr, "answer: %s\nwanted an error with: %s\n",
		        answer, want);
		CHECK(false);
	}
}

/* A first attempt from addr, through the decider as the tarpit asks. */
static struct grey_decision
attempt(const char *addr, const char *sender, const char *rcpt)
{
	return decider_rig_attempt(&rig, addr, sender, rcpt);
}

static void
test_allow_disallow_list(void)
{
	setup();
	check_ok(ask("allow", "198.51.100.0/24", "--ttl", "1h", "--comment",
	             "bank", NULL),
	         "allowed 198.51.100.0/24 for 1h");
	CHECK_INT(attempt("198.51.100.7", "a@example.com", "b@example.org")
	                  .action,
	          GREY_ALLOWED);
	check_ok(ask("list", "allow", NULL), "198.51.100.0/24");
	check_ok(ask("list", "allow", "--json", NULL), "bank");
	check_error(ask("allow", "not-a-net", NULL),
	            "'not-a-net' is not an address or CIDR");
	check_error(ask("allow", "198.51.100.0/24", "--ttl", "soon", NULL),
	            "--ttl soon: want seconds");
	check_error(ask("allow", "198.51.100.0/24", "--ttl", "3651d", NULL),
	            "at most");
	check_error(ask("allow", NULL), "allow what?");
	check_error(ask("disallow", "192.0.2.0/24", NULL),
	            "no such run-time entry");
	check_ok(ask("disallow", "198.51.100.0/24", NULL),
	         "disallowed 198.51.100.0/24");
	CHECK_INT(attempt("198.51.100.8", "a@example.com", "b@example.org")
	                  .action,
	          GREY_GREYLIST);
	teardown();
}

/* A triplet waits: list grey shows it; release of another triplet is
 * refused, of it lets the client pass; forget drops it all. */
static void
test_release_forget(void)
{
	const char *a;

	setup();
	CHECK_INT(attempt("203.0.113.9", "alice@example.com", "bob@example.org")
	                  .action,
	          GREY_GREYLIST);
	a = ask("list", "grey", NULL);
	check_ok(a, "alice@example.com");
	check_ok(a, "bob@example.org");
	check_ok(ask("list", "grey", "--from", "ALICE", NULL),
	         "alice@example.com");
	CHECK(!strstr(ask("list", "grey", "--from", "carol", NULL),
	              "alice@example.com"));
	check_error(ask("release", "203.0.113.9", "--from",
	                "mallory@example.net", "--to", "bob@example.org", NULL),
	            "no triplet mallory@example.net -> bob@example.org waits");
	check_error(ask("release", "203.0.113.9", "--from", "alice@example.com",
	                NULL),
	            "--from and --to go together");
	check_error(ask("release", "203.0.113.0/16", NULL),
	            "wider than greylisting's key");
	check_ok(ask("release", "203.0.113.9", "--from", "alice@example.com",
	             "--to", "bob@example.org", NULL),
	         "released 203.0.113.9 (key 203.0.113.0/24): it passes now");
	CHECK_INT(
	        attempt("203.0.113.10", "carol@example.com", "dave@example.org")
	                .action,
	        GREY_PASS);
	check_ok(ask("list", "pass", NULL), "203.0.113.0/24");
	check_ok(ask("forget", "203.0.113.9", NULL),
	         "forgot 203.0.113.9 (key 203.0.113.0/24)");
	CHECK_INT(
	        attempt("203.0.113.11", "carol@example.com", "dave@example.org")
	                .action,
	        GREY_GREYLIST);
	check_error(ask("forget", "nonsense", NULL),
	            "'nonsense' is not an address or CIDR");
	teardown();
}

/* The report counts what the decider decided; --reset starts it again. */
static void
test_report_reset(void)
{
	setup();
	attempt("198.51.100.7", "a@example.com", "b@example.org");
	attempt("198.51.100.8", "c@example.com", "b@example.org");
	check_ok(ask("report", "--json", NULL), "\"attempts\"");
	CHECK_INT(grey_get_counters(decider_grey(rig.decider))->attempts, 2);
	check_ok(ask("report", "--reset", NULL),
	         "report reset: counting starts again");
	CHECK_INT(grey_get_counters(decider_grey(rig.decider))->attempts, 0);
	check_error(ask("report", "--site", "--reset", NULL),
	            "each gateway resets its own");
	teardown();
}

/* status and metrics read the root's figures at the time of asking;
 * reload goes through the root, and says its refusal. */
static void
test_status_reload(void)
{
	setup();
	attempt("198.51.100.7", "a@example.com", "b@example.org");
	check_ok(ask("status", "--json", NULL), "{");
	check_ok(ask("metrics", NULL), "greygate_");
	CHECK_INT(figures_read, 2);
	check_ok(ask("reload", NULL), "reloaded /etc/greygate/greygate.conf");
	check_error(ask("reload", NULL), "greygate.conf:3: not a key");
	CHECK_INT(reloads, 2);
	/* the reload's pass_ttl is the commands' own from then on */
	attempt("203.0.113.9", "alice@example.com", "bob@example.org");
	check_ok(ask("release", "203.0.113.9", "--from", "alice@example.com",
	             "--to", "bob@example.org", NULL),
	         "it passes now, for 604800 s");
	teardown();
}

/* Nothing a request holds may end a line early in the log or the saved
 * list: a control character refuses it whole; so do an unknown command
 * and an argument it does not take. */
static void
test_refusals(void)
{
	size_t n;

	setup();
	check_error(ask("allow", "198.51.100.0/24", "--comment", "a\rb", NULL),
	            "argument 4 holds a control character");
	allow_lists_runtime_entries(allow, &n);
	CHECK_INT(n, 0);
	check_error(ask("launch", NULL), "unknown command 'launch'");
	check_error(ask("allow", "198.51.100.0/24", "--nope", NULL),
	            "unexpected argument '--nope'");
	teardown();
}

/* A listing longer than a piece comes whole (as JSON, read back by
 * python3's parser); each list says what it holds; what is not a list,
 * or a filter of another list than grey, is refused. */
static void
test_lists(void)
{
	char sender[64];
	const char *a;

	setup();
	for (int i = 0; i < 2500; i++) {
		snprintf(sender, sizeof(sender), "s%04d@many.test", i);
		decider_rig_attempt(&rig, "203.0.113.20", sender,
		                    "bob@example.org");
	}
	a = ask("list", "grey", "--json", NULL);
	CHECK(!strncmp(a, "ok\n", 3));
	json_check(a + 3, "assert len(r) == 2500, len(r)\n"
	                  "s = {x['sender'] for x in r}\n"
	                  "assert len(s) == 2500 and 's0042@many.test' in s");
	a = ask("list", "grey", "--from", "s0042", NULL);
	CHECK(strstr(a, "s0042@many.test"));
	CHECK(!strstr(a, "s0043@many.test"));

	CHECK_INT(grey_trap_add(decider_grey(rig.decider), "trap@example.org"),
	          0);
	CHECK_INT(
	        attempt("192.0.2.66", "x@spam.test", "trap@example.org").action,
	        GREY_TRAP);
	a = ask("list", "trap", NULL);
	CHECK(strstr(a, "192.0.2.66"));
	CHECK(!strstr(ask("list", "pass", NULL), "192.0.2.66"));
	check_ok(ask("release", "203.0.113.20", NULL), "released");
	a = ask("list", "pass", "--json", NULL);
	CHECK(strstr(a, "203.0.113.0/24"));
	CHECK(!strstr(ask("list", "pass", NULL), "192.0.2."));

	check_error(ask("list", "everything", NULL),
	            "list what? grey, pass, allow or trap");
	check_error(ask("list", "pass", "--from", "x", NULL),
	            "--from and --to are for list grey");
	teardown();
}

int
main(void)
{
	log_init("test-commands", false, LOG_LEVEL_WARN);
	RUN(test_allow_disallow_list);
	RUN(test_release_forget);
	RUN(test_report_reset);
	RUN(test_status_reload);
	RUN(test_refusals);
	RUN(test_lists);
	return 0;
}
