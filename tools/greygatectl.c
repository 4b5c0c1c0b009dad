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

static int
send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads the whole answer into a malloc'd string. */
static char *
read_all(int fd, size_t *len)
{
	size_t cap = 65536;
	char *buf = malloc(cap);

	*len = 0;
	while (buf) {
		ssize_t n;

		if (*len + 1 == cap) {
			char *bigger = realloc(buf, cap * 2);

			if (!bigger)
				break;
			buf = bigger;
			cap *= 2;
		}
		n = read(fd, buf + *len, cap - *len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (n == 0) {
			buf[*len] = 0;
			return buf;
		}
		*len += (size_t)n;
	}
	free(buf);
	return NULL;
}

int
ctl_ask(const char *sock_path, const char *req, size_t req_len, char **body)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char *answer, *nl;
	size_t len;
	int fd;

	if (strlen(sock_path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "greygatectl: socket path too long\n");
		return 2;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "greygatectl: %s: %s (is greygated running? "
				"are you root or in the greygate-admin group?)\n",
			sock_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 2;
	}
	if (send_all(fd, req, req_len) < 0 || !(answer = read_all(fd, &len))) {
		fprintf(stderr, "greygatectl: %s: %s\n", sock_path,
			strerror(errno));
		close(fd);
		return 2;
	}
	close(fd);
	nl = strchr(answer, '\n');
	if (strncmp(answer, "ok\n", 3) != 0) {
		if (nl)
			*nl = 0;
		fprintf(stderr, "greygatectl: %s\n",
			len ? answer : "greygated closed the connection");
		free(answer);
		return 1;
	}
	memmove(answer, nl + 1, len - (size_t)(nl + 1 - answer) + 1);
	*body = answer;
	return 0;
}

int
main(int argc, char **argv)
{
	const char *sock_path = getenv("GREYGATE_SOCKET");
	const char *svg_file = NULL;
	char req[REQUEST_MAX], *body;
	size_t req_len = 0;
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
	if (rc != 0)
		return rc;
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
