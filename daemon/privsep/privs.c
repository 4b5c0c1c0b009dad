// SPDX-License-Identifier: GPL-2.0-or-later
/* Capabilities of the parent, and systemd's readiness protocol (a
 * datagram to $NOTIFY_SOCKET; no libsystemd needed for one line). */
#include <errno.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "privs.h"

static const cap_value_t kept[] = {
	CAP_NET_ADMIN, CAP_NET_RAW, CAP_SETUID, CAP_SETGID, CAP_KILL,
};

static bool
is_kept(cap_value_t c, int nkept)
{
	for (int i = 0; i < nkept; i++)
		if (kept[i] == c)
			return true;
	return false;
}

int
privs_drop_parent(bool gateway)
{
	int nkept = gateway ? (int)(sizeof(kept) / sizeof(*kept)) : 0;
	cap_t caps;
	int r = 0;

	/* An unprivileged policy door has nothing to drop. */
	if (!gateway && geteuid() != 0)
		return 0;
	caps = cap_init();
	if (!caps)
		return -ENOMEM;
	for (cap_value_t c = 0; c <= CAP_LAST_CAP; c++)
		if (!is_kept(c, nkept) && cap_drop_bound(c) < 0 &&
		    errno != EINVAL) {
			r = -errno;
			break;
		}
	if (r == 0 && nkept &&
	    (cap_set_flag(caps, CAP_PERMITTED, nkept, kept, CAP_SET) < 0 ||
	     cap_set_flag(caps, CAP_EFFECTIVE, nkept, kept, CAP_SET) < 0))
		r = -errno;
	if (r == 0 && cap_set_proc(caps) < 0)
		r = -errno;
	cap_free(caps);
	return r;
}

void
privs_notify_ready(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	socklen_t len;
	int fd;

	if (!path || !path[0] || strlen(path) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, strlen(path));
	/* "@name" is an abstract socket: a leading NUL. */
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = 0;
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, "READY=1", 7, 0, (struct sockaddr *)&sa, len) < 0)
		log_warn("systemd notify socket %s", path);
	close(fd);
}
