// SPDX-License-Identifier: GPL-2.0-or-later
/* The hand-off's first steps, in greygated (see handoff.h): one
 * non-blocking connection to the MTA per passing session, driven by the
 * loop: connect, then the PROXY v2 header, or greeting, EHLO and
 * XCLIENT; then the verdict goes down to the child with it. The
 * connection itself is opened in handoff_connect.c. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "handoff-int.h"
#include "ipc.h"
#include "log.h"
#include "smtp_reply.h"

/* The MTA's EHLO is asked this often (what the tarpit's EHLO lists). */
#define PROBE_EVERY_MS (10 * 60 * 1000)
/* auto, while the MTA does not answer: the hand-off waits for it */
#define PROBE_AUTO_RETRY_MS (10 * 1000)

struct handoff_state *
handoff_state_new(struct loop *loop, const struct handoff_settings *cfg)
{
	struct handoff_state *hs = calloc(1, sizeof(struct handoff_state));

	if (hs) {
		hs->loop = loop;
		hs->cfg = *cfg;
	}
	return hs;
}

void
handoff_reconfigure(struct handoff_state *hs,
                    const struct handoff_settings *cfg)
{
	/* (the mode and the address need a restart: the reload kept them) */
	hs->cfg = *cfg;
}

void
handoff_set_child(struct handoff_state *hs, const struct handoff_child *child)
{
	hs->child = *child;
}

void
handoff_state_free(struct handoff_state *s)
{
	free(s);
}

void
handoff_get_counts(const struct handoff_state *hs, uint64_t *started,
                   uint64_t *failed)
{
	*started = hs->handoffs_started;
	*failed = hs->handoffs_failed;
}

static void
unlink_handoff(struct handoff *h)
{
	struct handoff **pp = &h->hs->handoffs;

	while (*pp && *pp != h)
		pp = &(*pp)->next;
	if (*pp)
		*pp = h->next;
	loop_timer_cancel(h->hs->loop, &h->deadline);
	loop_del_fd(h->hs->loop, h->fd);
}

/* The session's hand-off is over (the verdict goes down now): another
 * may begin. */
static void
handing_over(struct handoff *h)
{
	h->hs->child.handed(h->hs->child.ctx, h->session);
}

/* The MTA knows the client: the connection goes down with the verdict. */
static void
finish(struct handoff *h, bool greeted)
{
	struct handoff_state *hs = h->hs;

	handing_over(h);
	unlink_handoff(h);
	h->v.handoff_fd = h->fd;
	h->v.greeted = greeted;
	hs->child.send_verdict(hs->child.ctx, h->session, h->question, &h->v);
	free(h);
}

/* The MTA's address as the log says it: the one configured, or the one
 * auto learnt (MTA_WHERE_MAX bytes at buf). */
#define MTA_WHERE_MAX (INET6_ADDRSTRLEN + 8)
static const char *
mta_where(const struct handoff_state *hs, char *buf)
{
	const struct sockaddr_storage *at = handoff_probe_address(hs);

	if (hs->cfg.handoff.address[0] || !at)
		return hs->cfg.handoff.address[0] ? hs->cfg.handoff.address
						   : "(not yet known)";
	handoff_endpoint_text(at, buf, MTA_WHERE_MAX);
	return buf;
}

/* The MTA cannot be asked: said once (until it can be again); the
 * tarpit's EHLO stays as it was. */
void
handoff_probe_failed(struct handoff_state *hs, const char *why)
{
	char where[MTA_WHERE_MAX];

	if (hs->mta_probe_failing)
		return;
	hs->mta_probe_failing = true;
	log_warnx("hand-off: the MTA at %s cannot be asked its EHLO: %s; "
		  "passing clients hear 451 until it can (the tarpit's EHLO "
		  "is unchanged)",
		  mta_where(hs, where), why);
}

/* What the MTA's EHLO reply (in[0..len)) offers: the tarpit's EHLO lists
 * the part of its own it shares, told to the child when it changes. */
static void
learn_ehlo(struct handoff_state *hs, const char *in, size_t len)
{
	char caps[sizeof(hs->mta_caps)], where[MTA_WHERE_MAX];
	bool starttls;

	handoff_common_caps(hs->cfg.capabilities, in, len, caps,
			    sizeof(caps), &starttls);
	if (hs->mta_probe_failing)
		log_info("hand-off: the MTA at %s answers again",
			 mta_where(hs, where));
	hs->mta_probe_failing = false;
	if (hs->mta_known && !strcmp(caps, hs->mta_caps) &&
	    starttls == hs->mta_starttls)
		return;
	snprintf(hs->mta_caps, sizeof(hs->mta_caps), "%s", caps);
	hs->mta_starttls = starttls;
	hs->mta_known = true;
	log_info("hand-off: the MTA at %s offers STARTTLS: %s; the tarpit's "
		 "EHLO lists: %s%s",
		 mta_where(hs, where), starttls ? "yes" : "no",
		 caps[0] ? caps : "(nothing)",
		 starttls && hs->cfg.offer_starttls ? ", STARTTLS" : "");
	handoff_send_caps(hs);
}

void
handoff_send_caps(struct handoff_state *hs)
{
	if (hs->mta_known)
		hs->child.caps_changed(hs->child.ctx);
}

void
handoff_fill_caps(const struct handoff_state *hs, struct ipc_record *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->version = IPC_VERSION;
	rec->type = IPC_CAPS;
	snprintf(rec->u.caps.capabilities, sizeof(rec->u.caps.capabilities),
		 "%s", hs->mta_caps);
	rec->u.caps.starttls =
		hs->mta_starttls && hs->cfg.offer_starttls;
}

/* The verdict without a connection: the client hears the plain 451 and
 * retries, on the fast path now. */
static void
fail(struct handoff *h, const char *why)
{
	struct handoff_state *hs = h->hs;
	char where[MTA_WHERE_MAX];

	unlink_handoff(h);
	close(h->fd);
	if (h->probe) {
		handoff_probe_failed(hs, why);
		free(h);
		handoff_probe_ended(hs);
		return;
	}
	hs->handoffs_failed++;
	log_warnx("%s: hand-off to %s: %s; the client hears 451 and comes "
	          "back",
	          h->client_text, mta_where(hs, where), why);
	handing_over(h);
	h->v.handoff_fd = -1;
	hs->child.send_verdict(hs->child.ctx, h->session, h->question, &h->v);
	free(h);
}

static bool
send_all(struct handoff *h, const char *buf, size_t len)
{
	/* Greygated's few short lines to its own MTA go in one piece on a
	 * connection just made, or not at all. */
	return send(h->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) ==
	       (ssize_t)len;
}

/* Return: false when it failed (h is gone). */
static bool
send_xclient(struct handoff *h)
{
	char helo[512], addr[INET6_ADDRSTRLEN], line[1100];
	const struct sockaddr *c = (const struct sockaddr *)&h->client;
	unsigned port;
	int n;

	if (c->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)c;

		inet_ntop(AF_INET, &in->sin_addr, addr, sizeof(addr));
		port = ntohs(in->sin_port);
	} else {
		const struct sockaddr_in6 *in6 = (const void *)c;

		inet_ntop(AF_INET6, &in6->sin6_addr, addr, sizeof(addr));
		port = ntohs(in6->sin6_port);
	}
	if (!h->helo[0] || handoff_xtext(h->helo, helo, sizeof(helo)) < 0)
		snprintf(helo, sizeof(helo), "[UNAVAILABLE]");
	/* ADDR last: once it is sent, Postfix may take no more XCLIENT. A
	 * long HELO goes in a command of its own (512 bytes a line). */
	n = snprintf(line, sizeof(line),
	             "XCLIENT HELO=%s PROTO=ESMTP NAME=[UNAVAILABLE] "
	             "ADDR=%s%s PORT=%u\r\n",
	             helo, c->sa_family == AF_INET6 ? "IPV6:" : "", addr, port);
	if (n > 0 && n <= 512) {
		h->xclient_replies = 1;
	} else {
		char first[600];
		int m = snprintf(first, sizeof(first),
		                 "XCLIENT HELO=%s PROTO=ESMTP\r\n", helo);

		if (m <= 0 || m > 512 || !send_all(h, first, (size_t)m)) {
			fail(h, "cannot send XCLIENT");
			return false;
		}
		n = snprintf(line, sizeof(line),
		             "XCLIENT NAME=[UNAVAILABLE] ADDR=%s%s PORT=%u\r\n",
		             c->sa_family == AF_INET6 ? "IPV6:" : "", addr,
		             port);
		h->xclient_replies = 2;
	}
	if (n <= 0 || !send_all(h, line, (size_t)n)) {
		fail(h, "cannot send XCLIENT");
		return false;
	}
	h->state = HO_XCLIENT;
	return true;
}

void
handoff_probe_ended(struct handoff_state *hs)
{
	while (hs->waiters) {
		struct handoff_waiter *w = hs->waiters;

		hs->waiters = w->next;
		w->next = NULL;
		w->fn(w);
	}
}

/* The probe has what it came for: QUIT, and gone. */
static void
probe_done(struct handoff *h)
{
	struct handoff_state *hs = h->hs;

	send_all(h, "QUIT\r\n", 6);
	unlink_handoff(h);
	close(h->fd);
	free(h);
	handoff_probe_ended(hs);
}

/* The MTA's replies, one whole one at a time. Return: false when h is
 * gone (finished or failed). */
static bool
on_replies(struct handoff *h)
{
	char why[160], ehlo[300];
	size_t n;
	int code, len;

	while ((n = smtp_reply_whole(h->in, h->in_len, &code))) {
		switch (h->state) {
		case HO_GREETING:
			if (code != 220)
				goto refused;
			len = snprintf(ehlo, sizeof(ehlo), "EHLO %s\r\n",
			               h->hs->cfg.hostname);
			if (len <= 0 || !send_all(h, ehlo, (size_t)len)) {
				fail(h, "cannot send EHLO");
				return false;
			}
			h->state = HO_EHLO;
			break;
		case HO_EHLO:
			if (code != 250)
				goto refused;
			learn_ehlo(h->hs, h->in, n);
			if (h->probe) {
				probe_done(h);
				return false;
			}
			if (!handoff_ehlo_offers(h->in, n, "XCLIENT")) {
				fail(h, "it does not offer XCLIENT to greygate "
				        "(Postfix: "
				        "smtpd_authorized_xclient_hosts)");
				return false;
			}
			if (!send_xclient(h))
				return false;
			break;
		case HO_XCLIENT:
			if (code != 220)
				goto refused;
			if (--h->xclient_replies == 0) {
				/* Its new greeting read: the child starts with
				 * the client's EHLO. */
				finish(h, true);
				return false;
			}
			break;
		default:
			break;
		}
		memmove(h->in, h->in + n, h->in_len - n);
		h->in_len -= n;
	}
	return true;
refused:
	snprintf(why, sizeof(why), "it answered '%.*s'",
	         (int)strcspn(h->in, "\r\n"), h->in);
	fail(h, why);
	return false;
}

void
handoff_on_mta(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct handoff *h = ctx;
	uint8_t header[HANDOFF_PROXY_MAX];
	socklen_t sl = sizeof(int);
	int err = 0;
	ssize_t n;

	if (h->state == HO_CONNECTING) {
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl) < 0)
			err = errno;
		if (err) {
			fail(h, strerror(err));
			return;
		}
		if (h->hs->cfg.handoff.mode == HANDOFF_TRANSPARENT &&
		    !h->probe) {
			/* The MTA sees the client itself: its greeting is
			 * the child's to read. */
			finish(h, false);
			return;
		}
		if (h->hs->cfg.handoff.mode == HANDOFF_PROXY_V2 && h->probe) {
			/* LOCAL: greygate itself asks, no client to tell. */
			static const char local[16] = {
				0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51,
				0x55, 0x49, 0x54, 0x0a, 0x20, 0x00, 0x00, 0x00};

			if (!send_all(h, local, sizeof(local))) {
				fail(h, "cannot send the PROXY header");
				return;
			}
		} else if (h->hs->cfg.handoff.mode == HANDOFF_PROXY_V2) {
			size_t len = handoff_proxy_header(
			        (struct sockaddr *)&h->client,
			        (struct sockaddr *)&h->dst, header);

			/* In one write, before anything else. */
			if (!len || !send_all(h, (char *)header, len)) {
				fail(h, "cannot send the PROXY header");
				return;
			}
			finish(h, false);
			return;
		}
		h->state = HO_GREETING;
		loop_mod_fd(loop, fd, EPOLLIN);
		return;
	}
	n = recv(fd, h->in + h->in_len, sizeof(h->in) - 1 - h->in_len,
	         MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		fail(h, n == 0 ? "it closed the connection" : strerror(errno));
		return;
	}
	h->in_len += (size_t)n;
	h->in[h->in_len] = 0;
	if (on_replies(h) && h->in_len >= sizeof(h->in) - 1)
		fail(h, "its reply is too long");
}

void
handoff_on_deadline(struct loop *loop, struct loop_timer *t, void *ctx)
{
	fail(ctx, "no answer in time");
}

int
handoff_begin(struct handoff_state *hs, uint64_t session, uint32_t question,
	      const struct session_ends *ends, const char *helo,
	      const struct tarpit_verdict *v)
{
	struct handoff *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	hs->handoffs_started++;
	h->hs = hs;
	h->session = session;
	h->question = question;
	h->v = *v;
	h->fd = -1;
	snprintf(h->helo, sizeof(h->helo), "%s", helo);
	handoff_endpoints(h, ends);
	return handoff_open_connection(h);
}

/* Is ss (its address) one of this host's? (A bind to it works.) */
static bool
is_local_address(const struct sockaddr_storage *ss)
{
	struct sockaddr_storage any = *ss;
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool local;

	if (fd < 0)
		return false;
	((struct sockaddr_in *)&any)->sin_port = 0;
	local = bind(fd, (const struct sockaddr *)&any, sockaddr_len(&any)) == 0;
	close(fd);
	return local;
}

static bool
is_auto(const struct handoff_state *hs)
{
	return hs->cfg.handoff.setting == HANDOFF_AUTO;
}

/* Where the probe asks: the address, or auto's learnt one (NULL: not
 * yet). */
const struct sockaddr_storage *
handoff_probe_address(const struct handoff_state *hs)
{
	if (hs->cfg.handoff.addr_len)
		return &hs->cfg.handoff.addr;
	return hs->mta_addr_learnt ? &hs->mta_addr : NULL;
}

bool
handoff_ready(const struct handoff_state *hs)
{
	return !is_auto(hs) || (hs->mta_known && !hs->mta_probe_failing);
}

bool
handoff_probe_pending(const struct handoff_state *hs)
{
	if (!is_auto(hs) || hs->cfg.handoff.mode == HANDOFF_OFF ||
	    handoff_ready(hs))
		return false;
	for (const struct handoff *h = hs->handoffs; h; h = h->next)
		if (h->probe)
			return true;
	return false;
}

void
handoff_wait_probe(struct handoff_state *hs, struct handoff_waiter *w)
{
	w->next = hs->waiters;
	hs->waiters = w;
}

void
handoff_wait_cancel(struct handoff_state *hs, struct handoff_waiter *w)
{
	for (struct handoff_waiter **at = &hs->waiters; *at; at = &(*at)->next)
		if (*at == w) {
			*at = w->next;
			w->next = NULL;
			return;
		}
}

static void
on_probe_due(struct loop *loop, struct loop_timer *t, void *ctx)
{
	struct handoff_state *hs = ctx;
	struct handoff *h;

	loop_timer_arm(loop, t,
		       loop_now_ms(loop) + (is_auto(hs) && !handoff_ready(hs)
						    ? PROBE_AUTO_RETRY_MS
						    : PROBE_EVERY_MS));
	if (!handoff_probe_address(hs))
		return;
	h = calloc(1, sizeof(*h));
	if (!h)
		return;
	h->hs = hs;
	h->probe = true;
	h->fd = -1;
	snprintf(h->client_text, sizeof(h->client_text), "probe");
	handoff_open_connection(h);
}

bool
handoff_probe_now(struct handoff_state *hs, struct handoff_waiter *w)
{
	if (!hs->probing || !handoff_probe_address(hs))
		return false;
	handoff_wait_probe(hs, w);
	loop_timer_arm(hs->loop, &hs->probe_timer, loop_now_ms(hs->loop));
	return true;
}

bool
handoff_knows_mta(const struct handoff_state *hs)
{
	return handoff_probe_address(hs) != NULL;
}

bool
handoff_mta_answers(const struct handoff_state *hs)
{
	return hs->mta_known && !hs->mta_probe_failing;
}

void
handoff_probe_start(struct handoff_state *hs)
{
	if (hs->cfg.handoff.mode == HANDOFF_OFF)
		return;
	loop_timer_init(&hs->probe_timer, on_probe_due, hs);
	hs->probing = true;
	on_probe_due(hs->loop, &hs->probe_timer, hs);
}

void
handoff_learn_destination(struct handoff_state *hs,
			  const struct session_ends *ends)
{
	char text[INET6_ADDRSTRLEN + 8];

	if (!is_auto(hs) || hs->cfg.handoff.mode == HANDOFF_OFF ||
	    handoff_probe_address(hs) || !ends->dst.ss_family ||
	    sockaddr_port(&ends->dst) != hs->cfg.smtp_port)
		return;
	/* Only an address of this host's: a client must not choose where
	 * greygated connects (on a router, set address to the MTA's). The
	 * last foreign one is remembered: on a router every client goes
	 * there, and is not tried again each question. */
	if (hs->mta_addr_foreign_said &&
	    !memcmp(&hs->mta_addr_foreign, &ends->dst, sizeof(ends->dst)))
		return;
	if (!is_local_address(&ends->dst)) {
		hs->mta_addr_foreign = ends->dst;
		if (!hs->mta_addr_foreign_said) {
			handoff_endpoint_text(&ends->dst, text, sizeof(text));
			log_warnx("hand-off: auto: a client was going to %s, "
				  "not an address of this host; auto asks "
				  "only this host's (on a router, set "
				  "[handoff] address to the MTA's)",
				  text);
			hs->mta_addr_foreign_said = true;
		}
		return;
	}
	hs->mta_addr = ends->dst;
	hs->mta_addr_learnt = true;
	handoff_endpoint_text(&hs->mta_addr, text, sizeof(text));
	log_info("hand-off: auto: asking the MTA at %s, where clients go, "
		 "whether it answers",
		 text);
	if (hs->probing)
		on_probe_due(hs->loop, &hs->probe_timer, hs);
}

void
handoff_auto_text(const struct handoff_state *hs, char *out, size_t len)
{
	const struct sockaddr_storage *at = handoff_probe_address(hs);
	char text[INET6_ADDRSTRLEN + 8] = "";

	if (at)
		handoff_endpoint_text(at, text, sizeof(text));
	if (!at)
		snprintf(out, len, "waiting for a client to show where the "
			 "MTA is (passing attempts hear 451)");
	else if (!handoff_ready(hs))
		snprintf(out, len, "the MTA at %s does not answer yet "
			 "(passing attempts hear 451; asked every 10 s)",
			 text);
	else
		snprintf(out, len, "the MTA at %s answers", text);
}

/* Ends the hand-offs under way (of sessions, or probes too). */
static void
abort_handoffs(struct handoff_state *hs, bool probes)
{
	struct handoff **pp = &hs->handoffs;

	while (*pp) {
		struct handoff *h = *pp;

		if (h->probe && !probes) {
			pp = &h->next;
			continue;
		}
		unlink_handoff(h);
		close(h->fd);
		free(h);
	}
	if (probes)
		handoff_probe_ended(hs);
}

void
handoff_abort_sessions(struct handoff_state *hs)
{
	abort_handoffs(hs, false);
}

void
handoff_abort_all(struct handoff_state *hs)
{
	if (hs->probing)
		loop_timer_cancel(hs->loop, &hs->probe_timer);
	hs->probing = false;
	abort_handoffs(hs, true);
}
