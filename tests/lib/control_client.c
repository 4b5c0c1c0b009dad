// SPDX-License-Identifier: GPL-2.0-or-later
/* greygatectl's side of the control socket, for the tests (see
 * control_client.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"
#include "control.h"
#include "control_client.h"
#include "redis_server.h"

static struct {
	int fd;
	size_t len;
	bool ended;
	char text[4 << 20]; /* (a long listing) */
} got;

static bool
read_some(void)
{
	ssize_t n;

	while ((n = read(got.fd, got.text + got.len,
	                 sizeof(got.text) - 1 - got.len)) > 0)
		got.len += (size_t)n;
	if (n == 0)
		got.ended = true;
	got.text[got.len] = '\0';
	return got.ended;
}

const char *
control_ask(struct loop *loop, const char *path, const char *first, ...)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char req[CONTROL_REQUEST_MAX];
	size_t len = 0;
	va_list ap;

	va_start(ap, first);
	for (const char *a = first; a; a = va_arg(ap, const char *)) {
		CHECK(len + strlen(a) + 2 < sizeof(req));
		memcpy(req + len, a, strlen(a) + 1);
		len += strlen(a) + 1;
	}
	va_end(ap);
	req[len++] = '\n';
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	got.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	CHECK(got.fd >= 0);
	CHECK_INT(connect(got.fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CHECK(write(got.fd, req, len) == (ssize_t)len);
	got.len = 0;
	got.ended = false;
	LOOP_UNTIL(loop, read_some(), 5000);
	CHECK(got.ended);
	close(got.fd);
	return got.text;
}
