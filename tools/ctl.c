// SPDX-License-Identifier: GPL-2.0-or-later
/* One request to greygated's control socket and its whole answer
 * (ctl.h): what greygatectl's commands and its live view ask with. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"

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
