// SPDX-License-Identifier: GPL-2.0-or-later
/* smtp-floor: the least an SMTP responder can do, for the tarpit's
 * benchmark to be measured against: one epoll loop, accept, a banner, one
 * canned reply per line by its first letters (RCPT gets a 451), close at
 * QUIT. No timeouts, no caps, no parsing beyond that.
 *   smtp-floor PORT                                              */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

struct conn {
	int fd;
	size_t len;
	char buf[512];
};

static void
reply(struct conn *c, const char *line)
{
	static const char ok[] = "250 ok\r\n", ehlo[] = "250 floor\r\n",
			  rcpt[] = "451 4.7.1 try again later\r\n",
			  bye[] = "221 bye\r\n";
	const char *r = ok;

	if (!strncasecmp(line, "EHLO", 4) || !strncasecmp(line, "HELO", 4))
		r = ehlo;
	else if (!strncasecmp(line, "RCPT", 4))
		r = rcpt;
	else if (!strncasecmp(line, "QUIT", 4))
		r = bye;
	send(c->fd, r, strlen(r), MSG_NOSIGNAL | MSG_DONTWAIT);
	if (r == bye) {
		close(c->fd);
		c->fd = -1;
	}
}

int
main(int argc, char **argv)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	struct epoll_event ev = {.events = EPOLLIN}, evs[256];
	int lfd, ep, one = 1;

	if (argc != 2)
		return 2;
	sa.sin_port = htons((uint16_t)atoi(argv[1]));
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(lfd, 65535) < 0) {
		perror("smtp-floor");
		return 1;
	}
	ep = epoll_create1(0);
	ev.data.ptr = NULL;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	for (;;) {
		int n = epoll_wait(ep, evs, 256, -1);

		for (int i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			ssize_t got;

			if (!c) {
				int fd;

				while ((fd = accept4(lfd, NULL, NULL,
						     SOCK_NONBLOCK)) >= 0) {
					c = calloc(1, sizeof(*c));
					c->fd = fd;
					ev.data.ptr = c;
					epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
					send(fd, "220 floor ESMTP\r\n", 17,
					     MSG_NOSIGNAL | MSG_DONTWAIT);
				}
				continue;
			}
			got = recv(c->fd, c->buf + c->len,
				   sizeof(c->buf) - c->len, 0);
			if (got <= 0) {
				close(c->fd);
				free(c);
				continue;
			}
			c->len += (size_t)got;
			for (char *nl; c->fd >= 0 &&
				       (nl = memchr(c->buf, '\n', c->len));) {
				size_t used = (size_t)(nl - c->buf) + 1;

				*nl = 0;
				reply(c, c->buf);
				memmove(c->buf, c->buf + used, c->len - used);
				c->len -= used;
			}
			if (c->fd < 0)
				free(c);
			else if (c->len == sizeof(c->buf))
				c->len = 0;
		}
	}
}
