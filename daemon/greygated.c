// SPDX-License-Identifier: GPL-2.0-or-later
/* greygated: the gateway daemon's entry point. Reads the config, opens
 * every part (see gateway.c), and runs the event loop until SIGTERM or
 * SIGINT; SIGHUP reloads the config and the allow lists. With --replay it
 * runs the sensor and the policy over a capture instead (replay.c). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "child.h"
#include "config.h"
#include "build_features.h"
#include "copy_store.h"
#include "gateway.h"
#include "log.h"
#include "loop.h"
#include "metrics_http.h"
#include "policy_lists.h"
#include "privs.h"
#include "replay.h"

#ifndef GREYGATE_VERSION
#define GREYGATE_VERSION "unknown"
#endif

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: greygated [--config FILE] [--foreground] "
		"[--log-level warn|info|debug]\n"
		"       greygated [--config FILE] --check-config\n"
		"       greygated [--config FILE] --store-copy to-redis|to-lmdb\n"
		"       greygated [--config FILE] --replay FILE.pcap --dry-run "
		"[--json | --events json] [--svg FILE]\n"
		"       greygated --version\n"
		"The config defaults to " CONFIG_DEFAULT_PATH
		"; without it every key has its default.\n");
}

/* Descriptors greygated keeps for itself beside the policy door's
 * connections: the store, nft, the control socket, Redis, the child. */
#define FD_RESERVE 256

/* Every tarpit connection is a descriptor, and a session handed to the
 * MTA two; every policy door connection one: make room for max_conns of
 * each and the rest (the soft limit is often 1024). A door that cannot
 * fit the limit (the hard one, where it cannot be raised) is lowered to
 * what fits, and said: when descriptors run out, Postfix's requests meet
 * a listener that cannot accept. checking: only said (--check-config).
 * Return: 0, or -EMFILE (not even one door connection fits). */
static int
fit_fd_limit(struct config *cfg, bool checking,
             void (*say)(const char *text, void *ctx), void *ctx)
{
	struct rlimit rl;
	rlim_t want = (cfg->gateway ? (rlim_t)cfg->tarpit.max_conns * 3 : 0) +
	              (cfg->policy.listen[0] ? cfg->policy.max_conns : 0) +
	              1024;
	rlim_t have;
	char text[256];

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	have = rl.rlim_cur;
	if (have < want) {
		have = want < rl.rlim_max ? want : rl.rlim_max;
		if (!checking) {
			rl.rlim_cur = have;
			if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
				getrlimit(RLIMIT_NOFILE, &rl);
			have = rl.rlim_cur;
		}
	}
	if (have < want && cfg->gateway) {
		snprintf(text, sizeof(text),
		         "only %llu file descriptors (RLIMIT_NOFILE): fewer "
		         "than [tarpit] max_connections = %u connections can "
		         "be open",
		         (unsigned long long)have, cfg->tarpit.max_conns);
		say(text, ctx);
	}
	if (cfg->policy.listen[0] &&
	    (rlim_t)cfg->policy.max_conns + FD_RESERVE > have) {
		uint32_t fit = have > FD_RESERVE ? (uint32_t)(have - FD_RESERVE)
		                                 : 0;

		if (!fit)
			return -EMFILE;
		snprintf(text, sizeof(text),
		         "[policy] max_connections = %u cannot fit %llu file "
		         "descriptors (RLIMIT_NOFILE): %u instead",
		         cfg->policy.max_conns, (unsigned long long)have, fit);
		say(text, ctx);
		cfg->policy.max_conns = fit;
	}
	return 0;
}

static void
say_fd_limit(const char *text, void *ctx)
{
	log_warnx("%s", text);
}

/* Odd settings: --check-config shows them at once; otherwise they are
 * kept until the log is set up and said through it, time-stamped (or to
 * syslog) like every other line (issue 32). */
#define CONFIG_WARNINGS_MAX 32
static char *config_warnings[CONFIG_WARNINGS_MAX];
static size_t nconfig_warnings;
static bool config_warnings_now; /* --check-config */

static void
warn_config(const char *text, void *ctx)
{
	if (!config_warnings_now && nconfig_warnings < CONFIG_WARNINGS_MAX &&
	    asprintf(&config_warnings[nconfig_warnings], "%s: %s",
	             (const char *)ctx, text) >= 0) {
		nconfig_warnings++;
		return;
	}
	fprintf(stderr, "greygated: %s: warning: %s\n", (const char *)ctx,
		text);
}

/* The config's warnings kept so far, said through the log now set up. */
static void
say_config_warnings(void)
{
	for (size_t i = 0; i < nconfig_warnings; i++) {
		log_warnx("%s", config_warnings[i]);
		free(config_warnings[i]);
	}
	nconfig_warnings = 0;
}

static void
warn_list_line(const char *file, int line, const char *why, void *ctx)
{
	fprintf(stderr, "greygated: %s:%d: warning: skipped: %s\n", file, line,
		why);
}

/* --check-config reads postgrey's whitelist files as the door would:
 * one it cannot read is an error, a bad line a warning. */
static int
check_policy_lists(const struct config *cfg, char *err)
{
	struct policy_lists *lists;
	int r;

	if (!cfg->policy.listen[0])
		return 0;
	r = policy_lists_load(cfg->policy.whitelist_clients,
			      cfg->policy.whitelist_recipients, warn_list_line,
			      NULL, &lists, err);
	if (r == 0)
		policy_lists_free(lists);
	return r;
}

static void
on_stop_signal(struct loop *loop, int signo, void *ctx)
{
	log_info("signal %d: shutting down", signo);
	loop_quit(loop, 0);
}

static void
on_hup(struct loop *loop, int signo, void *ctx)
{
	char err[512];

	log_info("SIGHUP: reloading the config and the allow lists");
	gateway_reload(ctx, err);
}

/* What the command line asked for. */
struct start {
	const char *path;
	bool path_given, foreground, check, dry_run;
	const char *store_copy; /* --store-copy URL */
	int level;              /* --log-level, or -1 */
	struct replay_opts replay;
};

/* The command line read into st. Return: -1 (refused, said: exit 2),
 * 0 (go on), or 1 (done: --version, --keys, --help). */
static int
read_args(int argc, char **argv, struct start *st)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"foreground", no_argument, NULL, 'f'},
		{"check-config", no_argument, NULL, 'C'},
		{"log-level", required_argument, NULL, 'l'},
		{"replay", required_argument, NULL, 'r'},
		{"dry-run", no_argument, NULL, 'n'},
		{"events", required_argument, NULL, 'e'},
		{"json", no_argument, NULL, 'j'},
		{"svg", required_argument, NULL, 's'},
		{"version", no_argument, NULL, 'V'},
		{"keys", no_argument, NULL, 'K'},
		{"store-copy", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	*st = (struct start){.path = CONFIG_DEFAULT_PATH, .level = -1};
	while ((c = getopt_long(argc, argv, "c:fCl:Vh", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			st->replay.file = optarg;
			break;
		case 'n':
			st->dry_run = true;
			break;
		case 'e':
			if (strcmp(optarg, "json") != 0) {
				fprintf(stderr, "greygated: --events: only "
						"json is known\n");
				return -1;
			}
			st->replay.output = REPLAY_EVENTS_JSON;
			break;
		case 'j':
			if (st->replay.output != REPLAY_EVENTS_JSON)
				st->replay.output = REPLAY_REPORT_JSON;
			break;
		case 's':
			st->replay.svg = optarg;
			break;
		case 'c':
			st->path = optarg;
			st->path_given = true;
			break;
		case 'f':
			st->foreground = true;
			break;
		case 'C':
			st->check = true;
			break;
		case 'l':
			st->level = log_level_parse(optarg);
			if (st->level < 0) {
				fprintf(stderr, "greygated: bad log level "
						"'%s'\n", optarg);
				return -1;
			}
			break;
		case 'V':
			printf("greygated %s (%s)\n", GREYGATE_VERSION,
			       build_features);
			return 1;
		case 'K':
			config_list_keys(stdout);
			return 1;
		case 'S':
			st->store_copy = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return -1;
	}
	if (!st->replay.file && (st->replay.output || st->replay.svg)) {
		fprintf(stderr, "greygated: --json, --events and --svg are for "
				"--replay\n");
		return -1;
	}
	if (!st->replay.file != !st->dry_run) {
		fprintf(stderr, "greygated: --replay FILE and --dry-run go "
				"together (a replay never touches the "
				"kernel)\n");
		return -1;
	}
	return 0;
}

/* [greylist] privacy's key: checked here (--check-config, --replay);
 * read (or made) at start by the gateway once its store's folder is
 * there; a copy moves the store's keys as they are, hashed or not.
 * Return: 0, or -1 (said). */
static int
check_privacy_key(struct config *cfg, const struct start *st, char *err)
{
	char key_path[256];
	bool made;
	int r;

	if (!(st->check || st->replay.file) || !cfg->grey.privacy)
		return 0;
	r = config_privacy_key(cfg, false, &made, key_path, err);
	if (r == -ENOENT && st->check) {
		printf("greygated: [greylist] privacy: %s does not exist "
		       "yet: greygated makes it at start (copy it to "
		       "every gateway sharing a store)\n",
		       key_path);
	} else if (r < 0) {
		fprintf(stderr, "greygated: [greylist] privacy: %s\n", err);
		return -1;
	} else if (st->check) {
		char fp[PRIVACY_FINGERPRINT_SIZE];

		privacy_fingerprint(cfg->grey.privacy_key, fp);
		printf("greygated: [greylist] privacy: senders and "
		       "recipients stored as keyed hashes (key %s, "
		       "fingerprint %s)\n",
		       key_path, fp);
	}
	return 0;
}

/* --check-config: what start would refuse, refused; what it will do,
 * said. Return: the exit status. */
static int
run_check(struct config *cfg, const struct start *st, char *err)
{
	if (fit_fd_limit(cfg, true, warn_config, (void *)st->path) < 0) {
		fprintf(stderr, "greygated: %s: file descriptors: too "
		        "few for the policy door\n", st->path);
		return 2;
	}
	if (check_policy_lists(cfg, err) < 0) {
		fprintf(stderr, "greygated: [policy] %s\n", err);
		return 2;
	}
	if (cfg->handoff.setting == HANDOFF_TRANSPARENT)
		printf("greygated: [handoff] mode = transparent needs "
		       "CAP_NET_ADMIN (root), policy routing by mark "
		       "and port, IP_TRANSPARENT and nft route chains "
		       "with ct mark (policy routing found here; "
		       "the rest is tried at start); greygated adds "
		       "ip rule fwmark 0x%x "
		       "ipproto tcp sport %u lookup %u at start and "
		       "removes it at exit\n",
		       cfg->handoff.mark, cfg->nft.smtp_port,
		       cfg->handoff.route_table);
	if (cfg->handoff.setting == HANDOFF_AUTO)
		printf("greygated: [handoff] mode = auto: %s%s\n",
		       cfg->handoff.auto_on ? "" : "off: ",
		       cfg->handoff.auto_why);
	printf("greygated: %s: ok\n", st->path);
	return 0;
}

/* The gateway (or the policy door alone), until a stop signal. Return:
 * the exit status. */
static int
run_gateway(struct config *cfg, const struct start *st, char *err)
{
	struct gateway *gw;
	struct loop *loop;
	int code;

	/* In the foreground, logs go to stderr; otherwise to syslog (mail). */
	log_init("greygated", !st->foreground, (enum log_level)cfg->log_level);
	say_config_warnings();
	if (fit_fd_limit(cfg, false, say_fd_limit, NULL) < 0) {
		log_warnx("cannot start: file descriptors: too few for the "
		          "policy door (RLIMIT_NOFILE)");
		return 2;
	}
	loop = loop_new(timesrc_system());
	if (!loop)
		fatal("event loop");
	if (loop_add_signal(loop, SIGTERM, on_stop_signal, NULL) < 0 ||
	    loop_add_signal(loop, SIGINT, on_stop_signal, NULL) < 0)
		fatalx("cannot watch signals");
	signal(SIGPIPE, SIG_IGN);
	if (gateway_open(cfg, loop, &gw, err) < 0) {
		log_warnx("cannot start: %s", err);
		loop_free(loop);
		return 2;
	}
	loop_add_signal(loop, SIGHUP, on_hup, gw);
	/* Everything is open: keep only what running needs. */
	if (privs_drop_parent(cfg->gateway) < 0)
		log_warn("cannot drop capabilities (running with all of "
			 "root's)");
	/* (once up: a refusal to start stays one line) */
	if (cfg->handoff.setting == HANDOFF_AUTO && cfg->handoff.auto_on)
		log_info("hand-off: auto: %s", cfg->handoff.auto_why);
	else if (cfg->handoff.setting == HANDOFF_AUTO && cfg->gateway)
		log_warnx("hand-off: auto: off: %s; a passing attempt hears "
			  "451 and retries", cfg->handoff.auto_why);
	if (cfg->gateway)
		log_info("greygated %s up: capturing on %s (ring %u KiB), "
			 "tarpit on port %u, table inet %s, delay %us",
			 GREYGATE_VERSION, cfg->interface,
			 cfg->capture_buffer / 1024, cfg->nft.tarpit_port,
			 cfg->table, cfg->grey.delay_sec);
	else
		log_info("greygated %s up: the policy door alone on %s (no "
			 "capture, no table, no tarpit), delay %us",
			 GREYGATE_VERSION, cfg->policy.listen,
			 cfg->grey.delay_sec);
	privs_notify_ready();
	code = loop_run(loop);
	gateway_close(gw);
	loop_free(loop);
	log_info("stopped");
	return code < 0 ? 1 : code;
}

/* A short dispatch by mode (issue 58): the child and the metrics
 * listener (greygated starts them itself), then the admin's: a copy of
 * the store, a check of the settings, a replay, the gateway. */
int
main(int argc, char **argv)
{
	static struct config cfg;
	struct start st;
	char err[512] = "";
	int r;

	/* The unprivileged child, started by greygated itself (child.h). It
	 * ends at once, the kernel closing all it holds: what would run at
	 * exit may not under its seccomp filter (a sanitizer's build checks
	 * for leaks there, by ptrace: every child of such a build ended by
	 * SIGSYS). */
	if (argc == 2 && !strcmp(argv[1], "--child"))
		syscall(SYS_exit_group, child_main());
	/* The metrics listener, started by greygated too (metrics_http.h). */
	if (argc == 3 && !strcmp(argv[1], "--metrics-http"))
		return metrics_http_main(argv[2]);
	r = read_args(argc, argv, &st);
	if (r != 0)
		return r < 0 ? 2 : 0;
	config_defaults(&cfg);
	config_warnings_now = st.check;
	if (config_load(&cfg, st.path, !st.path_given, warn_config,
	                (void *)st.path, err) < 0 ||
	    (!st.replay.file && config_check_system(&cfg, err) < 0) ||
	    config_resolve_auto(&cfg, err) < 0) {
		fprintf(stderr, "greygated: %s\n", err);
		return 2;
	}
	if (check_privacy_key(&cfg, &st, err) < 0)
		return 2;
	if (st.store_copy) {
		log_init("greygated", false, LOG_LEVEL_WARN);
		say_config_warnings();
		return copy_store_main(&cfg, st.store_copy);
	}
	if (st.check)
		return run_check(&cfg, &st, err);
	if (st.level >= 0)
		cfg.log_level = st.level;
	if (st.replay.file) {
		log_init("greygated", false, LOG_LEVEL_WARN);
		say_config_warnings();
		return replay_run(&cfg, &st.replay);
	}
	return run_gateway(&cfg, &st, err);
}
