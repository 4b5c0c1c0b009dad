// SPDX-License-Identifier: GPL-2.0-or-later
/* The policy door's listener and connections (see policy_door.c for the
 * requests): bounded, one request's buffer each and a cap on their
 * number; when full, the longest idle connection of the peer holding
 * the most is closed for a newcomer; a deadline for each whole request
 * and an idle timeout between requests; out of descriptors, the
 * listener rests. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "policy_door-int.h"

/* ip's share, one more connection (NULL: no memory). */
static struct door_peer *
peer_take(struct policy_door *door, const char *ip)
{
	uint64_t h = hash_table_hash(&door->peers, ip, strlen(ip));
	struct door_peer *p;

	for (struct hash_node *n = hash_table_chain(&door->peers, h); n;
	     n = n->next)
		if (n->hash == h && !strcmp(((struct door_peer *)n)->ip, ip)) {
			p = (struct door_peer *)n;
			p->n++;
			return p;
		}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	snprintf(p->ip, sizeof(p->ip), "%s", ip);
	p->n = 1;
	hash_table_add(&door->peers, &p->node, h);
	return p;
}

/* One connection less of p's, freed with its last. */
static void
peer_drop(struct policy_door *door, struct door_peer *p)
{
	if (--p->n)
		return;
	hash_table_remove(&door->peers, &p->node);
	free(p);
}

void
door_conn_close(struct door_conn *c)
{
	struct policy_door *door = c->door;

	/* (its place taken by the last) */
	door->conns[c->at] = door->conns[--door->nconns];
	door->conns[c->at]->at = c->at;
	peer_drop(door, c->share);
	door->decide.cancel(c->asking);
	/* (never from within the signals' callbacks: on_signals only
	 * arms go) */
	loop_timer_cancel(door->loop, &c->go);
	signals_session_end(c->signals); /* (tells on_signals NULL) */
	loop_timer_cancel(door->loop, &c->idle);
	loop_del_fd(door->loop, c->fd);
	close(c->fd);
	door->stats.open--;
	free(c);
}

/* The first and every hundredth of a kind of trouble is logged: a
 * client looping on it must not fill the log. */
bool
door_worth_logging(uint64_t count)
{
	return count % 100 == 1;
}

static void
on_idle(struct loop *loop, struct loop_timer *t, void *ctx)
{
	struct door_conn *c = ctx;

	if (c->request_ms) {
		struct policy_door *door = c->door;

		if (door_worth_logging(++door->stats.slow))
			log_warnx("policy: %s: a request not whole within %u "
			          "ms, closed (%" PRIu64 " so far)",
			          c->peer, REQUEST_DEADLINE_MS,
			          door->stats.slow);
	}
	door_conn_close(c);
}

/* Between requests, the idle timeout; within one, its deadline, from
 * its first byte (more bytes do not move it). */
void
door_arm_timer(struct door_conn *c)
{
	struct loop *loop = c->door->loop;
	uint64_t now = loop_now_ms(loop);

	if (c->waiting)
		return; /* (its decision ends it) */
	if (!c->len) {
		c->request_ms = 0;
		c->active_ms = now;
		loop_timer_arm(loop, &c->idle,
		               now + c->door->cfg.policy.idle_timeout_ms);
		return;
	}
	if (!c->request_ms) {
		c->request_ms = now;
		loop_timer_arm(loop, &c->idle, now + REQUEST_DEADLINE_MS);
	}
}

/* The peer, for log lines (out) and for its share (ip, "" for a unix
 * socket's: local processes, one peer). */
static void
peer_name(int fd, char *out, size_t len, char ip[INET6_ADDRSTRLEN])
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	ip[0] = 0;
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0 ||
	    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)) {
		snprintf(out, len, "local");
		return;
	}
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)&ss;

		inet_ntop(AF_INET, &in->sin_addr, ip, INET6_ADDRSTRLEN);
		snprintf(out, len, "%s:%u", ip, ntohs(in->sin_port));
	} else {
		const struct sockaddr_in6 *in6 = (const void *)&ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, ip, INET6_ADDRSTRLEN);
		snprintf(out, len, "[%s]:%u", ip, ntohs(in6->sin6_port));
	}
}

/* Full: of the peer holding the most connections (one peer cannot crowd
 * the others out), the connection idle the longest, else the request
 * slowest to come whole, is closed for the newcomer (one waiting for its
 * decision never is). Linear in the connections and peers (each peer's
 * count kept as they come and go). Return: false if none could be. */
static bool
evict_one(struct policy_door *door)
{
	struct door_conn *idle = NULL, *slow = NULL;
	const struct door_peer *heaviest = NULL;

	for (size_t b = 0; b <= door->peers.mask; b++)
		for (const struct hash_node *n = door->peers.buckets[b]; n;
		     n = n->next) {
			const struct door_peer *p = (const struct door_peer *)n;

			if (!heaviest || p->n > heaviest->n)
				heaviest = p;
		}
	for (size_t i = 0; i < door->nconns; i++) {
		struct door_conn *c = door->conns[i];

		if (c->waiting || c->share != heaviest)
			continue;
		if (!c->request_ms &&
		    (!idle || c->active_ms < idle->active_ms))
			idle = c;
		else if (c->request_ms &&
		         (!slow || c->request_ms < slow->request_ms))
			slow = c;
	}
	if (!idle)
		idle = slow;
	if (!idle)
		return false;
	door->stats.evicted++;
	door_conn_close(idle);
	return true;
}

void
door_on_accept(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct policy_door *door = ctx;
	uint32_t max = door->cfg.policy.max_conns;
	struct door_conn *c;
	char peer[64], ip[INET6_ADDRSTRLEN];
	int cfd = accept_pause_accept(&door->pause, NULL, NULL);

	if (cfd < 0) {
		if (cfd != -EAGAIN && cfd != -EINTR &&
		    door_worth_logging(++door->stats.no_fd))
			log_warnx("policy: cannot accept (%s): new connections "
			          "wait %u ms in the kernel's queue "
			          "(%" PRIu64 " so far)",
			          strerror(-cfd), ACCEPT_PAUSE_MS,
			          door->stats.no_fd);
		return;
	}
	peer_name(cfd, peer, sizeof(peer), ip);
	if (door->nconns >= max && !evict_one(door)) {
		if (door_worth_logging(++door->stats.refused))
			log_warnx("policy: %s: %u connections open "
			          "(max_connections), each waiting for its "
			          "decision: closed (%" PRIu64 " so far)",
			          peer, max, door->stats.refused);
		close(cfd);
		return;
	}
	if (door->nconns == door->conns_cap) {
		size_t cap = door->conns_cap ? 2 * door->conns_cap : 16;
		struct door_conn **grown =
		        realloc(door->conns, cap * sizeof(*grown));

		if (!grown) {
			close(cfd);
			return;
		}
		door->conns = grown;
		door->conns_cap = cap;
	}
	c = malloc(sizeof(*c));
	if (!c) {
		close(cfd);
		return;
	}
	memset(c, 0, offsetof(struct door_conn, buf));
	c->door = door;
	c->fd = cfd;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	snprintf(c->peer_ip, sizeof(c->peer_ip), "%s", ip);
	loop_timer_init(&c->idle, on_idle, c);
	loop_timer_init(&c->go, door_on_signals_known, c);
	c->share = peer_take(door, ip);
	if (!c->share || loop_add_fd(loop, cfd, EPOLLIN, door_on_conn, c) < 0) {
		if (c->share)
			peer_drop(door, c->share);
		close(cfd);
		free(c);
		return;
	}
	c->at = door->nconns;
	door->conns[door->nconns++] = c;
	door->stats.connections++;
	door->stats.open++;
	door_arm_timer(c);
}
