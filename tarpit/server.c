// SPDX-License-Identifier: GPL-2.0-or-later
/* The tarpit server: listeners, connections with a fixed-size state each
 * (and what the client said, once it said it), timeouts, connection
 * caps, questions to greygated, and the table of held connections that
 * the sensor asks (by client address and port). A connection's events,
 * timer and verdicts go to the phase its session is in (internal.h):
 * the server names none but the first. Replies are written straight to
 * the socket: a client that does not read them is not worth a buffer. */
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "log.h"
#include "loop.h"
#include "internal.h"
#include "smtp_command.h"
#include "smtp_line.h"

#define ACCEPT_BATCH 64
#define RECENT_KEEP_MS 10000  /* closed connections remembered this long */
#define EMFILE_BACKOFF_MS 1000

static void on_backoff_over(struct loop *loop, struct loop_timer *timer,
			    void *ctx);

void
tarpit_config_defaults(struct tarpit_config *cfg)
{
	cfg->hostname = "localhost";
	cfg->retry_sec = 300;
	cfg->capabilities = "PIPELINING, SIZE 52428800, 8BITMIME, "
			    "ENHANCEDSTATUSCODES";
	cfg->offer_starttls = true;
	cfg->null_sender_at_data = true;
	cfg->max_conns = 2000;
	cfg->max_per_client = 16;
	cfg->idle_timeout_ms = 30000;
	cfg->session_timeout_ms = 120000;
	cfg->max_bad_commands = 10;
	cfg->stress_high = 0; /* 0: three quarters of max_conns */
	cfg->stress_low = 0;  /* 0: half of max_conns */
	cfg->stress_idle_timeout_ms = 5000;
	cfg->stress_session_timeout_ms = 20000;
	cfg->stutter_ms = 1000;
}

static uint64_t
addr_hash(const struct tarpit *tp, int family, const uint8_t *addr)
{
	return hash_table_hash(&tp->by_addr, addr, family == AF_INET ? 4 : 16);
}

static struct conn *
conn_of_addr(const struct hash_node *n)
{
	return n ? (struct conn *)((char *)n - offsetof(struct conn, by_addr))
	         : NULL;
}

static bool
same_addr(int family, const uint8_t *a, const uint8_t *b)
{
	return memcmp(a, b, family == AF_INET ? 4 : 16) == 0;
}

struct tarpit *
tarpit_new(const struct tarpit_config *cfg, struct loop *loop)
{
	struct tarpit *tp = calloc(1, sizeof(*tp));
	size_t n = 64;

	if (!tp)
		return NULL;
	tp->cfg = *cfg;
	tp->loop = loop;
	if (!tp->cfg.stress_high)
		tp->cfg.stress_high = cfg->max_conns - cfg->max_conns / 4;
	if (!tp->cfg.stress_low)
		tp->cfg.stress_low = cfg->max_conns / 2;
	while (n < 2 * (size_t)cfg->max_conns && n < 65536)
		n *= 2;
	tp->nbuckets = n;
	loop_timer_init(&tp->backoff, on_backoff_over, tp);
	list_init(&tp->handed);
	tp->ids = calloc(n, sizeof(*tp->ids));
	if (!tp->ids || hash_table_init(&tp->by_addr, n) < 0) {
		free(tp->ids);
		free(tp);
		return NULL;
	}
	return tp;
}

void
tarpit_set_asker(struct tarpit *tp, const struct tarpit_asker *asker)
{
	tp->asker = *asker;
}

static struct conn **
id_bucket(struct tarpit *tp, uint64_t id)
{
	return &tp->ids[(id * 0x9e3779b97f4a7c15ull >> 32) &
			(tp->nbuckets - 1)];
}

static void
unlink_id(struct conn *c)
{
	struct conn **pp = id_bucket(c->tp, c->id);

	while (*pp && *pp != c)
		pp = &(*pp)->id_next;
	if (*pp)
		*pp = c->id_next;
}

void
tarpit_remember_closed(struct tarpit *tp, int family, const uint8_t *addr,
		       uint16_t port)
{
	struct recent *r = &tp->recent[tp->recent_next];

	tp->recent_next = (tp->recent_next + 1) % RECENT_MAX;
	r->closed_ms = loop_now_ms(tp->loop);
	r->port = port;
	r->family = (uint8_t)family;
	memset(r->addr, 0, sizeof(r->addr));
	memcpy(r->addr, addr, family == AF_INET ? 4 : 16);
}

/* The phase's end: what it holds freed; the session in none (closing). */
static void
phase_end(struct conn *c)
{
	const struct conn_phase *p = c->phase;

	if (!p)
		return;
	if (p->on_end)
		p->on_end(c);
	if (p->handed)
		list_remove(&c->handed_node);
	c->phase = NULL;
}

void
conn_enter(struct conn *c, const struct conn_phase *phase)
{
	bool was_handed = c->phase && c->phase->handed;

	if (phase->handed && !was_handed)
		list_push_back(&c->tp->handed, &c->handed_node);
	else if (!phase->handed && was_handed)
		list_remove(&c->handed_node);
	c->phase = phase;
}

size_t
tarpit_handed_open(const struct tarpit *tp)
{
	size_t n = 0;

	for (const struct list_node *i = list_front(&tp->handed); i;
	     i = list_next(&tp->handed, i))
		n++;
	return n;
}

/* The session's socket and timer: to its phase. */
static void
on_conn_event(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct conn *c = ctx;

	(void)loop;
	(void)fd;
	c->phase->on_client(c, events);
}

static void
on_conn_timer(struct loop *loop, struct loop_timer *timer, void *ctx)
{
	struct conn *c = ctx;

	(void)loop;
	(void)timer;
	c->phase->on_timer(c);
}

void
conn_close(struct conn *c)
{
	struct tarpit *tp = c->tp;

	hash_table_remove(&tp->by_addr, &c->by_addr);
	unlink_id(c);
	if (tp->asker.closed)
		tp->asker.closed(c->id, -1, tp->asker.ctx);
	phase_end(c);
	free(c->helo);
	free(c->helo_line);
	free(c->mail);
	free(c->sender);
	free(c->rcpt);
	free(c->rcpt_line);
	free(c->in);
	loop_timer_cancel(tp->loop, &c->timer);
	/* Held by the tarpit alone, its socket's epoll entry goes with the
	 * close; held elsewhere too, it must be taken out. */
	if (c->socket_shared)
		loop_del_fd(tp->loop, c->fd);
	else
		loop_forget_fd(tp->loop, c->fd);
	close(c->fd);
	tarpit_remember_closed(tp, c->family, c->addr, c->port);
	tp->counters.open--;
	if (tp->counters.stressed && tp->counters.open <= tp->cfg.stress_low) {
		tp->counters.stressed = 0;
		log_info("tarpit: stress over: %u connections open",
			 tp->counters.open);
	}
	free(c->out);
	free(c);
}

/* A gently closed connection lingers this long at most for its client to
 * close too. */
#define LINGER_MS 2000

static void
on_linger_readable(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	char buf[4096];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		;
	if (n == 0 || (errno != EAGAIN && errno != EINTR))
		conn_close(ctx);
}

static void
on_linger_over(struct loop *loop, struct loop_timer *timer, void *ctx)
{
	conn_close(ctx);
}

void
conn_close_gently(struct conn *c)
{
	struct loop *loop = c->tp->loop;

	phase_end(c);
	shutdown(c->fd, SHUT_WR);
	loop_del_fd(loop, c->fd);
	loop_timer_cancel(loop, &c->timer);
	loop_timer_init(&c->timer, on_linger_over, c);
	if (loop_add_fd(loop, c->fd, EPOLLIN, on_linger_readable, c) < 0) {
		conn_close(c);
		return;
	}
	loop_timer_arm(loop, &c->timer, loop_now_ms(loop) + LINGER_MS);
}

void
tarpit_free(struct tarpit *tp)
{
	if (!tp)
		return;
	for (size_t i = 0; i <= tp->by_addr.mask; i++)
		while (tp->by_addr.buckets[i])
			conn_close(conn_of_addr(tp->by_addr.buckets[i]));
	for (size_t i = 0; i < tp->nlisten; i++) {
		loop_del_fd(tp->loop, tp->listen_fd[i]);
		close(tp->listen_fd[i]);
	}
	loop_timer_cancel(tp->loop, &tp->backoff);
	hash_table_free(&tp->by_addr);
	free(tp->ids);
	free(tp);
}

bool
tarpit_holds(const struct tarpit *tp, int family, const uint8_t *addr,
	     uint16_t port)
{
	uint64_t now = loop_now_ms(tp->loop);

	for (const struct conn *c =
		     conn_of_addr(hash_table_chain(&tp->by_addr,
		                                   addr_hash(tp, family, addr)));
	     c; c = conn_of_addr(c->by_addr.next))
		if (c->family == family && c->port == port &&
		    same_addr(family, c->addr, addr))
			return true;
	/* The hand-offs' own connections to the MTA (on port 25 with
	 * XCLIENT) are not the fast path either. */
	for (const struct list_node *i = list_front(&tp->handed); i;
	     i = list_next(&tp->handed, i)) {
		const struct conn *c = LIST_ENTRY(i, struct conn, handed_node);

		if (c->phase->holds && c->phase->holds(c, family, addr, port))
			return true;
	}
	for (size_t i = 0; i < RECENT_MAX; i++) {
		const struct recent *r = &tp->recent[i];

		if (r->closed_ms && r->family == family && r->port == port &&
		    now - r->closed_ms < RECENT_KEEP_MS &&
		    same_addr(family, r->addr, addr))
			return true;
	}
	return false;
}

const struct tarpit_counters *
tarpit_get_counters(const struct tarpit *tp)
{
	return &tp->counters;
}

/* Sends a reply whole or not at all; false means the client is gone or
 * is not reading. */
static bool
send_reply(int fd, const char *buf, size_t len)
{
	ssize_t n;

	if (len == 0)
		return true;
	do
		n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len;
}


bool
conn_room(struct conn *c)
{
	if (!c->in)
		c->in = malloc(TARPIT_LINE_MAX);
	return c->in != NULL;
}

bool
conn_send(struct conn *c, const char *buf, size_t len)
{
	return send_reply(c->fd, buf, len);
}

/* A timeout as it stands now: the stress value while stressed, if it is
 * the shorter. */
static uint32_t
timeout_now(const struct tarpit *tp, uint32_t normal, uint32_t stress)
{
	return tp->counters.stressed && stress < normal ? stress : normal;
}

uint32_t
conn_idle_ms(const struct tarpit *tp)
{
	return timeout_now(tp, tp->cfg.idle_timeout_ms,
			   tp->cfg.stress_idle_timeout_ms);
}

uint32_t
conn_session_ms(const struct tarpit *tp)
{
	return timeout_now(tp, tp->cfg.session_timeout_ms,
			   tp->cfg.stress_session_timeout_ms);
}

/* Too many open: the shorter timeouts apply at once, to every connection
 * already open too, so a flood makes room for itself. */
static void
enter_stress(struct tarpit *tp)
{
	uint64_t now = loop_now_ms(tp->loop);
	uint64_t idle, session;

	tp->counters.stressed = 1;
	tp->counters.stress_entered++;
	idle = now + conn_idle_ms(tp);
	session = now + conn_session_ms(tp);
	log_info("tarpit: stress: %u connections open; timeouts now %u ms "
		 "idle, %u ms a session, until %u are left",
		 tp->counters.open, conn_idle_ms(tp), conn_session_ms(tp),
		 tp->cfg.stress_low);
	for (size_t i = 0; i <= tp->by_addr.mask; i++)
		for (struct conn *c = conn_of_addr(tp->by_addr.buckets[i]); c;
		     c = conn_of_addr(c->by_addr.next))
			if (c->phase && c->phase->on_stress)
				c->phase->on_stress(c, idle, session);
}

/* Asks greygated about the command that asked. Return: 0 (the session
 * waits), or -1 (it could not be asked: answer now). */
int
conn_ask(struct conn *c)
{
	struct tarpit *tp = c->tp;
	struct tarpit_attempt a;

	/* Each question its own number: a verdict that comes after its
	 * question was answered without it (too late) finds nobody, never
	 * the next question. */
	a = (struct tarpit_attempt){
		.session = c->id,
		.question = ++c->question,
		.kind = (enum tarpit_ask)c->dlg.asking,
		.helo = c->helo ? c->helo : "",
		.sender = c->sender ? c->sender : "",
		.rcpt = c->rcpt ? c->rcpt : "",
	};
	tp->counters.asked++;
	if (tp->asker.ask(&a, tp->asker.ctx) < 0)
		return -1;
	c->verdict_due_ms = loop_now_ms(tp->loop) + tp->asker.wait_ms;
	return 0;
}

int
tarpit_verdict(struct tarpit *tp, uint64_t session, uint32_t question,
	       const struct tarpit_verdict *v)
{
	struct conn *c = *id_bucket(tp, session);

	while (c && c->id != session)
		c = c->id_next;
	/* (any verdict of the session, even one too late for its question) */
	if (c && tp->asker.released_by_verdict)
		c->socket_shared = 0;
	if (!c || !c->phase || !c->phase->on_verdict || !c->dlg.asking ||
	    c->question != question) {
		/* Every hand-off greygated began ends counted once (join.c):
		 * this one's client left, or heard the plain answer. */
		if (v->handoff_fd >= 0) {
			close(v->handoff_fd);
			if (!c)
				tp->counters.handoffs_abandoned++;
			else
				tp->counters.handoffs_unjoined++;
		}
		return -ENOENT;
	}
	c->phase->on_verdict(c, v);
	return 0;
}

void
tarpit_set_ehlo(struct tarpit *tp, const char *caps, bool starttls)
{
	/* Every session's dialogue reads tp->cfg: the next EHLO says it. */
	tp->cfg.capabilities = caps;
	tp->cfg.offer_starttls = starttls;
}

void
tarpit_set_handoff(struct tarpit *tp, uint32_t ms)
{
	tp->handoff_ms = ms;
}

void
tarpit_set_joined_events(struct tarpit *tp, sensor_event_fn *fn, void *ctx)
{
	tp->joined_event = fn;
	tp->joined_event_ctx = ctx;
}

static unsigned
conns_from(const struct tarpit *tp, int family, const uint8_t *addr)
{
	unsigned n = 0;

	for (const struct conn *c =
		     conn_of_addr(hash_table_chain(&tp->by_addr,
		                                   addr_hash(tp, family, addr)));
	     c; c = conn_of_addr(c->by_addr.next))
		n += !(c->phase && c->phase->handed) && c->family == family &&
		     same_addr(family, c->addr, addr);
	return n;
}

static void
refuse_busy(struct tarpit *tp, int fd)
{
	static const char busy[] = "421 4.7.0 Too busy, try again later\r\n";

	send_reply(fd, busy, sizeof(busy) - 1);
	tp->counters.busy++;
	close(fd);
}

static void
conn_start(struct tarpit *tp, int fd, const struct sockaddr_storage *ss,
	   bool stutter)
{
	struct conn *c;
	uint64_t now = loop_now_ms(tp->loop);

	if (tp->counters.open >= tp->cfg.max_conns) {
		refuse_busy(tp, fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		refuse_busy(tp, fd);
		return;
	}
	c->tp = tp;
	c->fd = fd;
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ss;

		c->family = AF_INET;
		memcpy(c->addr, &in->sin_addr, 4);
		c->port = ntohs(in->sin_port);
	} else {
		const struct sockaddr_in6 *in6 = (const void *)ss;

		c->family = AF_INET6;
		memcpy(c->addr, &in6->sin6_addr, 16);
		c->port = ntohs(in6->sin6_port);
	}
	if (conns_from(tp, c->family, c->addr) >= tp->cfg.max_per_client) {
		free(c);
		refuse_busy(tp, fd);
		return;
	}
	c->id = ++tp->next_id;
	loop_timer_init(&c->timer, on_conn_timer, c);
	c->stutter = stutter && tp->cfg.stutter_ms;
	c->idle_due_ms = now + conn_idle_ms(tp);
	c->session_due_ms = now + conn_session_ms(tp);
	conn_enter(c, &talk_phase);
	if (loop_add_fd(tp->loop, fd, EPOLLIN, on_conn_event, c) < 0) {
		free(c);
		close(fd);
		return;
	}
	hash_table_add(&tp->by_addr, &c->by_addr,
	               addr_hash(tp, c->family, c->addr));
	c->id_next = *id_bucket(tp, c->id);
	*id_bucket(tp, c->id) = c;
	tp->counters.open++;
	tp->counters.connections++;
	/* Greygated learns who the client is from the socket itself, before
	 * the session can ask anything. */
	if (tp->asker.opened) {
		c->socket_shared = 1;
		tp->asker.opened(c->id, fd, tp->asker.ctx);
	}
	if (!tp->counters.stressed && tp->cfg.stress_high &&
	    tp->counters.open >= tp->cfg.stress_high)
		enter_stress(tp);
	c->phase->on_start(c);
}

size_t
tarpit_drain(struct tarpit *tp)
{
	static const char bye[] = "421 4.3.2 Service restarting, please try "
				  "again later\r\n";

	for (size_t i = 0; i < tp->nlisten; i++) {
		loop_del_fd(tp->loop, tp->listen_fd[i]);
		close(tp->listen_fd[i]);
	}
	tp->nlisten = 0;
	loop_timer_cancel(tp->loop, &tp->backoff);
	for (size_t i = 0; i <= tp->by_addr.mask; i++) {
		struct conn *c = conn_of_addr(tp->by_addr.buckets[i]), *next;

		for (; c; c = next) {
			next = conn_of_addr(c->by_addr.next);
			if (!c->phase || c->phase->handed)
				continue; /* closing already, or handed */
			/* Whole, a stutter's too: this is its end. */
			send_reply(c->fd, bye, sizeof(bye) - 1);
			conn_close_gently(c);
		}
	}
	return tarpit_handed_open(tp);
}

static void
set_accepting(struct tarpit *tp, bool on)
{
	for (size_t i = 0; i < tp->nlisten; i++)
		loop_mod_fd(tp->loop, tp->listen_fd[i], on ? EPOLLIN : 0);
}

static void
on_backoff_over(struct loop *loop, struct loop_timer *timer, void *ctx)
{
	set_accepting(ctx, true);
}

static void
on_listen_ready(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct tarpit *tp = ctx;
	bool stutter = false;

	for (size_t i = 0; i < tp->nlisten; i++)
		if (tp->listen_fd[i] == fd)
			stutter = tp->listen_stutter[i];
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int cfd = accept4(fd, (struct sockaddr *)&ss, &sl,
				  SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd >= 0) {
			conn_start(tp, cfd, &ss, stutter);
			continue;
		}
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM) {
			/* Out of descriptors: stop accepting for a while
			 * rather than spin on a listener that stays ready. */
			set_accepting(tp, false);
			loop_timer_arm(loop, &tp->backoff,
				       loop_now_ms(loop) + EMFILE_BACKOFF_MS);
		}
		return;
	}
}

int
tarpit_bind(const struct sockaddr *addr, socklen_t addr_len)
{
	int fd, one = 1, r;

	fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (addr->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	/* The kernel caps the backlog at net.core.somaxconn. SMTP's server
	 * speaks first, so a full queue strands clients silently. */
	if (bind(fd, addr, addr_len) < 0 || listen(fd, 65535) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

int
tarpit_adopt(struct tarpit *tp, int fd, bool stutter)
{
	int r;

	if (tp->nlisten == LISTEN_MAX)
		return -ENOSPC;
	r = loop_add_fd(tp->loop, fd, EPOLLIN, on_listen_ready, tp);
	if (r < 0)
		return r;
	tp->listen_stutter[tp->nlisten] = stutter;
	tp->listen_fd[tp->nlisten++] = fd;
	return 0;
}

int
tarpit_listen(struct tarpit *tp, const struct sockaddr *addr,
	      socklen_t addr_len)
{
	int fd, r;

	if (tp->nlisten == LISTEN_MAX)
		return -ENOSPC;
	fd = tarpit_bind(addr, addr_len);
	if (fd < 0)
		return fd;
	r = tarpit_adopt(tp, fd, false);
	if (r < 0)
		close(fd);
	return r;
}
