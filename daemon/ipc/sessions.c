// SPDX-License-Identifier: GPL-2.0-or-later
/* The tarpit's sessions as greygated knows them (see sessions.h): a hash
 * table by session id, each entry the addresses read from the session's
 * socket. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "sessions.h"

/* <linux/netfilter_ipv4.h> and <linux/netfilter_ipv6/ip6_tables.h>
 * collide with <netinet/in.h>: their numbers, for the address a
 * redirected connection was made to (conntrack's original destination). */
#ifndef SO_ORIGINAL_DST
#define SO_ORIGINAL_DST 80
#endif
#ifndef IP6T_SO_ORIGINAL_DST
#define IP6T_SO_ORIGINAL_DST 80
#endif

#define PORTS_MAX 8
/* A socket whose client hung up is a session's only this soon after the
 * client last sent (the child opens a session at accept). */
#define SESSION_FRESH_MS 10000

struct entry {
	struct entry *next;
	uint64_t id;
	struct session_info info;
};

struct sessions {
	struct entry **buckets;
	size_t nbuckets; /* a power of two */
	size_t count, max;
	uint64_t last_id; /* the highest id opened: a new one is above it */
	uint16_t ports[PORTS_MAX];
	size_t nports;
	bool want_dst; /* read SO_ORIGINAL_DST */
	struct sessions_hooks hooks;
	/* The sockets opened as sessions (their inode numbers, which the
	 * kernel does not give again for a long while): two generations of
	 * an open-addressed set, the older dropped when the newer is full,
	 * so that each socket is opened once even after its session ended
	 * (a compromised child keeping a copy of it), for at least
	 * seen_cap / 2 later sessions. */
	uint64_t *seen[2];
	size_t seen_cap, seen_count; /* slots a generation; in the newer */
};

static void
ended(struct sessions *s, struct entry *e)
{
	if (s->hooks.ended && e->info.attached)
		s->hooks.ended(s->hooks.ctx, e->info.attached);
	free(e);
}

void
sessions_set_hooks(struct sessions *s, const struct sessions_hooks *h)
{
	s->hooks = *h;
}

struct sessions *
sessions_new(uint32_t max, const uint16_t *ports, size_t nports)
{
	struct sessions *s = calloc(1, sizeof(*s));
	size_t n = 64;

	if (!s)
		return NULL;
	while (n < max && n < 65536)
		n *= 2;
	s->buckets = calloc(n, sizeof(*s->buckets));
	if (!s->buckets) {
		free(s);
		return NULL;
	}
	s->nbuckets = n;
	s->max = max;
	s->nports = nports < PORTS_MAX ? nports : PORTS_MAX;
	memcpy(s->ports, ports, s->nports * sizeof(*ports));
	s->want_dst = true;
	/* (calloc'd: untouched pages cost nothing until sessions come) */
	s->seen_cap = n * 4;
	s->seen[0] = calloc(s->seen_cap, sizeof(uint64_t));
	s->seen[1] = calloc(s->seen_cap, sizeof(uint64_t));
	if (!s->seen[0] || !s->seen[1]) {
		sessions_free(s);
		return NULL;
	}
	return s;
}

/* The slot of ino in generation g: where it is, or the empty one where it
 * would go. */
static uint64_t *
seen_slot(const struct sessions *s, int g, uint64_t ino)
{
	size_t i = (size_t)(ino * 0x9e3779b97f4a7c15ull >> 17) &
		   (s->seen_cap - 1);

	while (s->seen[g][i] && s->seen[g][i] != ino)
		i = (i + 1) & (s->seen_cap - 1);
	return &s->seen[g][i];
}

static bool
seen_before(const struct sessions *s, uint64_t ino)
{
	return *seen_slot(s, 0, ino) == ino || *seen_slot(s, 1, ino) == ino;
}

/* (half full at most: the probes stay short) */
static void
seen_add(struct sessions *s, uint64_t ino)
{
	if (s->seen_count >= s->seen_cap / 2) {
		uint64_t *older = s->seen[1];

		s->seen[1] = s->seen[0];
		s->seen[0] = older;
		memset(older, 0, s->seen_cap * sizeof(*older));
		s->seen_count = 0;
	}
	*seen_slot(s, 0, ino) = ino;
	s->seen_count++;
}

void
sessions_want_destination(struct sessions *s, bool want)
{
	s->want_dst = want;
}

void
sessions_reset(struct sessions *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nbuckets; i++)
		while (s->buckets[i]) {
			struct entry *e = s->buckets[i];

			s->buckets[i] = e->next;
			ended(s, e);
		}
	s->count = 0;
	s->last_id = 0;
}

void
sessions_free(struct sessions *s)
{
	if (!s)
		return;
	sessions_reset(s);
	free(s->buckets);
	free(s->seen[0]);
	free(s->seen[1]);
	free(s);
}

static struct entry **
bucket(const struct sessions *s, uint64_t id)
{
	return &s->buckets[(id * 0x9e3779b97f4a7c15ull >> 32) &
			   (s->nbuckets - 1)];
}

static int
sockopt_int(int fd, int level, int name, int *out)
{
	socklen_t len = sizeof(*out);

	return getsockopt(fd, level, name, out, &len) < 0 ? -errno : 0;
}

static uint16_t
port_of(const struct sockaddr_storage *ss)
{
	/* sin_port and sin6_port lie at the same offset. */
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

static bool
is_tarpit_port(const uint16_t *ports, size_t nports, uint16_t port)
{
	for (size_t i = 0; i < nports; i++)
		if (ports[i] == port)
			return true;
	return false;
}

/* Where a redirected connection was going; family 0 if it was not
 * redirected (or conntrack cannot say). */
static void
original_destination(int fd, int family, struct sockaddr_storage *dst)
{
	socklen_t len = sizeof(*dst);
	int r = family == AF_INET
			? getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, dst, &len)
			: getsockopt(fd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, dst,
				     &len);

	if (r < 0 || dst->ss_family != family)
		memset(dst, 0, sizeof(*dst));
}

/* What the kernel says of a connection the tarpit accepted: a connected
 * TCP socket (IPv4 or IPv6) whose own port is one of the tarpit's. fd is
 * borrowed. Return: 0, or -errno with *why saying what it is instead. */
static int
session_ends_read(const struct sessions *s, int fd, struct session_ends *out,
		  const char **why)
{
	socklen_t len = sizeof(out->local);
	struct tcp_info info;
	struct stat st;
	int protocol;

	/* Few calls: one per session, on greygated's loop. A socket's own
	 * address says its family (a pipe has none); TCP says a stream; a
	 * peer says connected (a listener has none). */
	memset(out, 0, sizeof(*out));
	if (getsockname(fd, (struct sockaddr *)&out->local, &len) < 0) {
		*why = "not a socket";
		return -ENOTSOCK;
	}
	if ((out->local.ss_family != AF_INET &&
	     out->local.ss_family != AF_INET6) ||
	    sockopt_int(fd, SOL_SOCKET, SO_PROTOCOL, &protocol) < 0 ||
	    protocol != IPPROTO_TCP) {
		*why = "not a TCP socket";
		return -EPROTONOSUPPORT;
	}
	len = sizeof(out->client);
	if (getpeername(fd, (struct sockaddr *)&out->client, &len) < 0 ||
	    out->client.ss_family != out->local.ss_family) {
		*why = "not connected (a listener, or a socket of nothing)";
		return -ENOTCONN;
	}
	/* Only the tarpit's listeners are on these ports: a connection
	 * greygated opened to the MTA, passed down with a verdict, is not
	 * (its own end is on a port of the kernel's choosing, never one of
	 * these: see handoff.c). */
	if (!is_tarpit_port(s->ports, s->nports, port_of(&out->local))) {
		*why = "not accepted on a tarpit port";
		return -EADDRNOTAVAIL;
	}
	/* A client still there, or one that has just hung up (a fast bot
	 * can be done before greygated reads the opening): not a socket
	 * whose client left long ago, nor a connection the tarpit ended
	 * (FIN_WAIT*), which a compromised child kept to open after the
	 * delay as if the client had come back (issue 55). */
	len = sizeof(info);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) < 0 ||
	    !(info.tcpi_state == TCP_ESTABLISHED ||
	      (info.tcpi_state == TCP_CLOSE_WAIT &&
	       info.tcpi_last_data_recv < SESSION_FRESH_MS))) {
		*why = "its connection is no longer established";
		return -ENOTCONN;
	}
	if (fstat(fd, &st) < 0 || seen_before(s, (uint64_t)st.st_ino)) {
		*why = "its socket was opened as a session before";
		return -EALREADY;
	}
	out->ino = (uint64_t)st.st_ino;
	if (s->want_dst)
		original_destination(fd, out->local.ss_family, &out->dst);
	return 0;
}

int
sessions_open(struct sessions *s, uint64_t id, int fd, const char **why)
{
	struct session_ends ends;
	struct entry *e, **b;
	int r;

	if (id <= s->last_id) {
		*why = "its id is not new (reused, or out of order)";
		return -EEXIST;
	}
	if (s->count >= s->max) {
		*why = "too many sessions open";
		return -ENOSPC;
	}
	r = session_ends_read(s, fd, &ends, why);
	if (r < 0)
		return r;
	e = calloc(1, sizeof(*e));
	if (!e) {
		*why = "no memory";
		return -ENOMEM;
	}
	seen_add(s, ends.ino);
	e->id = id;
	e->info.ends = ends;
	if (s->hooks.opened)
		e->info.attached = s->hooks.opened(s->hooks.ctx, &e->info);
	b = bucket(s, id);
	e->next = *b;
	*b = e;
	s->count++;
	s->last_id = id;
	return 0;
}

struct session_info *
sessions_find(struct sessions *s, uint64_t id)
{
	if (!s)
		return NULL;
	for (struct entry *e = *bucket(s, id); e; e = e->next)
		if (e->id == id)
			return &e->info;
	return NULL;
}

int
sessions_close(struct sessions *s, uint64_t id)
{
	for (struct entry **pp = bucket(s, id); *pp; pp = &(*pp)->next) {
		struct entry *e = *pp;

		if (e->id != id)
			continue;
		*pp = e->next;
		ended(s, e);
		s->count--;
		return 0;
	}
	return -ENOENT;
}

size_t
sessions_count(const struct sessions *s)
{
	return s->count;
}
