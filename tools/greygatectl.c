// SPDX-License-Identifier: GPL-2.0-or-later
/* greygatectl: asks a running greygated over its control socket. It only
 * speaks the socket's protocol (daemon/control/control.h); greygated does the
 * work and the formatting (but for top's rates: tools/ctl_top.c). */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"

#define DEFAULT_SOCKET "/run/greygate/control.sock"
#define REQUEST_MAX 4096

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: greygatectl [--socket PATH] COMMAND [ARGS]\n"
		"  status [--json]                 uptime, child, sets, "
		"counters\n"
		"  check                           what is wrong: one line a "
		"check, OK, WARN or\n"
		"                                  FAIL (exit 0, 1, 2)\n"
		"  metrics                         the same for Prometheus "
		"(text format)\n"
		"  list grey|pass|allow|trap [--json]\n"
		"  list grey [--from TEXT] [--to TEXT]\n"
		"                                  the triplets whose sender, "
		"recipient holds TEXT\n"
		"  allow CIDR [--ttl T] [--comment C]\n"
		"                                  allow a net now (and after "
		"restarts)\n"
		"  disallow CIDR                   remove a run-time allow "
		"entry (every gateway)\n"
		"  release CLIENT [--from S --to R]\n"
		"                                  it passes now (with S and R: "
		"if that triplet waits)\n"
		"  forget CLIENT                   drop its pass, trap and "
		"triplets\n"
		"  reload                          the config and allow lists\n"
		"  report [--json | --svg FILE]    the funnel and the delays\n"
		"  report --site [--json | --svg FILE]\n"
		"                                  every gateway's on a shared "
		"store, summed\n"
		"  report --reset                  count from zero from now on\n"
		"  top [--interval SEC] [--count N]\n"
		"                                  a live view: figures and "
		"rates every second\n"
		"The socket defaults to $GREYGATE_SOCKET or " DEFAULT_SOCKET
		".\n");
}

int
main(int argc, char **argv)
{
	const char *sock_path = getenv("GREYGATE_SOCKET");
	const char *svg_file = NULL;
	char req[REQUEST_MAX], *body;
	size_t req_len = 0;
	bool check;
	int i, rc;

	if (!sock_path)
		sock_path = DEFAULT_SOCKET;
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--socket") && i + 1 < argc) {
			sock_path = argv[++i];
		} else if (!strcmp(argv[i], "-h") ||
			   !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (i == argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[i], "top"))
		return ctl_top(sock_path, argc - i - 1, argv + i + 1);
	check = !strcmp(argv[i], "check");
	/* The request: each argument NUL-ended, then a newline. */
	for (; i < argc; i++) {
		const char *arg = argv[i];
		size_t n = strlen(arg);

		if (!strcmp(arg, "--svg")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "greygatectl: --svg needs a "
						"file\n");
				return 2;
			}
			svg_file = argv[++i];
		}
		if (strchr(arg, '\n') || req_len + n + 2 > sizeof(req)) {
			fprintf(stderr, "greygatectl: argument too long or "
					"holding a newline\n");
			return 2;
		}
		memcpy(req + req_len, arg, n + 1);
		req_len += n + 1;
	}
	req[req_len++] = '\n';
	rc = ctl_ask(sock_path, req, req_len, &body);
	if (rc != 0 && check) {
		/* (ctl_ask said why on stderr: 2 no greygated, 1 refused) */
		printf("FAIL greygated: %s %s: nothing else can be checked\n",
		       rc == 2 ? "no answer on" : "refused check on (a greygated "
		                                  "older than greygatectl?)",
		       sock_path);
		return 2;
	}
	if (rc != 0)
		return rc;
	if (check)
		rc = strstr(body, "\nFAIL ") || !strncmp(body, "FAIL ", 5) ? 2
		     : strstr(body, "\nWARN ") || !strncmp(body, "WARN ", 5)
		             ? 1
		             : 0;
	if (svg_file) {
		FILE *f = fopen(svg_file, "w");

		if (!f || fputs(body, f) < 0 || fclose(f) != 0) {
			fprintf(stderr, "greygatectl: %s: %s\n", svg_file,
				strerror(errno));
			rc = 1;
		}
	} else {
		fputs(body, stdout);
	}
	free(body);
	return rc;
}
