// SPDX-License-Identifier: GPL-2.0-or-later
/* greygated: the gateway daemon's entry point. Parses the command line,
 * sets up logging and the event loop, and runs until SIGTERM or SIGINT. */
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "log.h"
#include "loop.h"

#ifndef GREYGATE_VERSION
#define GREYGATE_VERSION "unknown"
#endif

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: greygated [--foreground] [--log-level warn|info|debug]\n"
		"       greygated --version\n");
}

static void
on_stop_signal(struct loop *loop, int signo, void *ctx)
{
	log_info("signal %d: shutting down", signo);
	loop_quit(loop, 0);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"foreground", no_argument, NULL, 'f'},
		{"log-level", required_argument, NULL, 'l'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int level = LOG_LEVEL_INFO, c, code;
	bool foreground = false;
	struct loop *loop;

	while ((c = getopt_long(argc, argv, "fl:Vh", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			foreground = true;
			break;
		case 'l':
			level = log_level_parse(optarg);
			if (level < 0) {
				fprintf(stderr, "greygated: bad log level "
						"'%s'\n", optarg);
				return 2;
			}
			break;
		case 'V':
			printf("greygated %s\n", GREYGATE_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	log_init("greygated", !foreground, (enum log_level)level);

	loop = loop_new(timesrc_system());
	if (!loop)
		fatal("event loop");
	if (loop_add_signal(loop, SIGTERM, on_stop_signal, NULL) < 0 ||
	    loop_add_signal(loop, SIGINT, on_stop_signal, NULL) < 0)
		fatalx("cannot watch signals");

	log_info("greygated %s up (pid %d)", GREYGATE_VERSION, (int)getpid());
	log_warnx("not built yet: sensor, policy, nft manager, tarpit; "
		  "nothing is greylisted and no firewall rule is made");
	code = loop_run(loop);
	loop_free(loop);
	log_info("stopped");
	return code < 0 ? 1 : code;
}
