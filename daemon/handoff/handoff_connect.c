// SPDX-License-Identifier: GPL-2.0-or-later
/* A hand-off's connection to the MTA opened, non-blocking: from greygate's
 * source address, or (transparent) bound to the client's own with
 * IP_TRANSPARENT and a mark its answers are routed back by; to the
 * hand-off address, or where the client connected to. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "handoff-int.h"
#include "log.h"
#include "markroute.h"

/* The client's address and port, and where it connected to, as greygated
 * read them from the session's socket (sessions.h; never from what the
 * child says). A destination the kernel could not tell is the hand-off
 * address. */
void
handoff_endpoints(struct handoff *h, const struct session_ends *ends)
{
	const struct handoff_config *hc = &h->hs->cfg.handoff;
	const void *addr;

	h->client = ends->client;
	h->dst = ends->dst;
	if (!h->dst.ss_family && hc->addr.ss_family == h->client.ss_family)
		memcpy(&h->dst, &hc->addr, hc->addr_len);
	addr = h->client.ss_family == AF_INET
		       ? (const void *)&((struct sockaddr_in *)&h->client)
				 ->sin_addr
		       : (const void *)&((struct sockaddr_in6 *)&h->client)
				 ->sin6_addr;
	if (!inet_ntop(h->client.ss_family, addr, h->client_text,
		       sizeof(h->client_text)))
		snprintf(h->client_text, sizeof(h->client_text), "?");
}

/* A hand-off that could not even start: said, counted, undone.
 * Return: -err, for handoff_begin's caller (who sends the plain
 * verdict). */
static int
not_started(struct handoff *h, const char *where, int err)
{
	struct handoff_state *hs = h->hs;
	bool probe = h->probe;

	if (probe) {
		char why[192];

		snprintf(why, sizeof(why), "%s: %s", where, strerror(err));
		handoff_probe_failed(hs, why);
	} else {
		log_warnx("%s: hand-off %s: %s; the client hears 451 and "
		          "comes back",
		          h->client_text, where, strerror(err));
		hs->handoffs_failed++;
	}
	if (h->fd >= 0)
		close(h->fd);
	free(h);
	if (probe)
		handoff_probe_ended(hs);
	return -err;
}

void
handoff_endpoint_text(const struct sockaddr_storage *ss, char *out,
		      size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	bool v4 = ss->ss_family == AF_INET;

	inet_ntop(ss->ss_family,
		  v4 ? (const void *)&((const struct sockaddr_in *)ss)->sin_addr
		     : (const void *)&((const struct sockaddr_in6 *)ss)
			       ->sin6_addr,
		  ip, sizeof(ip));
	snprintf(out, len, v4 ? "%s:%u" : "[%s]:%u", ip, sockaddr_port(ss));
}

/* A transparent hand-off's socket: the client's own address, the mark
 * the way back is keyed on (markroute.h). The port is the kernel's, but
 * never the client's own session's: that tuple, to the same address,
 * is the connection the tarpit holds. Return: 0 or -errno. */
static int
bind_as_client(struct handoff *h)
{
	const struct handoff_config *hc = &h->hs->cfg.handoff;
	struct sockaddr_storage src = h->client;
	socklen_t len = sockaddr_len(&src);
	bool v4 = src.ss_family == AF_INET;
	int one = 1;

	((struct sockaddr_in *)&src)->sin_port = 0;
	for (int tries = 0; tries < 3; tries++) {
		struct sockaddr_storage got;
		socklen_t got_len = sizeof(got);

		if (setsockopt(h->fd, v4 ? SOL_IP : SOL_IPV6,
		               v4 ? IP_TRANSPARENT : IPV6_TRANSPARENT, &one,
		               sizeof(one)) < 0 ||
		    setsockopt(h->fd, SOL_SOCKET, SO_MARK, &hc->mark,
		               sizeof(hc->mark)) < 0 ||
		    bind(h->fd, (struct sockaddr *)&src, len) < 0 ||
		    getsockname(h->fd, (struct sockaddr *)&got, &got_len) < 0)
			return -errno;
		if (sockaddr_port(&got) != sockaddr_port(&h->client))
			return 0;
		close(h->fd);
		h->fd = socket(src.ss_family,
		               SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (h->fd < 0)
			return -errno;
	}
	return -EADDRINUSE;
}

/* Where h connects: the hand-off address; in transparent mode where the
 * client itself was going (the MTA's port, here or behind a router), so
 * an IPv6 client is handed over IPv6 whatever the address says; but only
 * to the port greygate's own rule redirects (smtp_port): greygated,
 * which may connect from any address, connects to no other (NULL). */
static const struct sockaddr_storage *
destination(const struct handoff *h)
{
	const struct handoff_config *hc = &h->hs->cfg.handoff;

	if (h->probe)
		return handoff_probe_address(h->hs);
	if (hc->mode != HANDOFF_TRANSPARENT || !sockaddr_port(&h->dst))
		return &hc->addr;
	if (sockaddr_port(&h->dst) != h->hs->cfg.smtp_port)
		return NULL;
	return &h->dst;
}

/* Its own end is on a port of the kernel's choosing, never one of the
 * tarpit's: a socket on a tarpit port is taken for a session's own when
 * the child sends it up (sessions.h), and this one goes down to the
 * child. Return: 0 or -EADDRINUSE. */
static int
not_on_tarpit_port(const struct handoff *h)
{
	const struct handoff_settings *cfg = &h->hs->cfg;
	struct sockaddr_storage got;
	socklen_t len = sizeof(got);
	uint16_t port;

	if (getsockname(h->fd, (struct sockaddr *)&got, &len) < 0)
		return -errno;
	port = sockaddr_port(&got);
	return port == cfg->tarpit_port ||
			       (cfg->trap_port && port == cfg->trap_port)
		       ? -EADDRINUSE
		       : 0;
}

/* h's connection to the MTA, under way on the loop with its deadline.
 * Return: 0, or -errno (h freed, said unless it is a probe). */
int
handoff_open_connection(struct handoff *h)
{
	struct handoff_state *hs = h->hs;
	const struct handoff_config *hc = &hs->cfg.handoff;
	const struct sockaddr_storage *to = destination(h);
	char where[128];
	int r;

	if (!to) {
		snprintf(where, sizeof(where),
			 "refused: the client was going to port %u, not to "
			 "smtp_port %u (the port greygate redirects)",
			 sockaddr_port(&h->dst), hs->cfg.smtp_port);
		return not_started(h, where, EPERM);
	}
	if (hc->mode == HANDOFF_TRANSPARENT && !h->probe &&
	    h->client.ss_family != to->ss_family)
		return not_started(h, "to an MTA of the other family",
		                   EAFNOSUPPORT);
	h->fd = socket(to->ss_family,
	               SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->fd < 0)
		return not_started(h, "socket", errno);
	if (hc->mode == HANDOFF_TRANSPARENT && !h->probe) {
		r = bind_as_client(h);
		if (r < 0)
			return not_started(h, "from the client's address", -r);
	}
	/* From a source of its own, when set: an MTA that trusts a PROXY
	 * header by the connecting address (Exim's hosts_proxy) then trusts
	 * greygate alone, not every local client. */
	if (hc->source[0] &&
	    bind(h->fd, (const struct sockaddr *)&hc->source_addr,
	         hc->addr_len) < 0) {
		snprintf(where, sizeof(where), "from %s", hc->source);
		return not_started(h, where, errno);
	}
	if (connect(h->fd, (const struct sockaddr *)to, sockaddr_len(to)) < 0 &&
	    errno != EINPROGRESS) {
		int err = errno;

		snprintf(where, sizeof(where), "to %s",
		         to == &hc->addr ? hc->address : "the MTA's port");
		return not_started(h, where, err);
	}
	r = not_on_tarpit_port(h);
	if (r < 0)
		return not_started(h, "from a tarpit port", -r);
	r = loop_add_fd(hs->loop, h->fd, EPOLLOUT, handoff_on_mta, h);
	if (r < 0)
		return not_started(h, "watch", -r);
	loop_timer_init(&h->deadline, handoff_on_deadline, h);
	loop_timer_arm(hs->loop, &h->deadline,
	               loop_now_ms(hs->loop) + hc->timeout_ms);
	h->next = hs->handoffs;
	hs->handoffs = h;
	return 0;
}

