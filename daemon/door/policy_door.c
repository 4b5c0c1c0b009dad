// SPDX-License-Identifier: GPL-2.0-or-later
/* The policy door (see policy_door.h): each request made an attempt,
 * decided, answered and logged in postgrey's words; its opening, reload
 * and close (the listener and its connections: policy_door_conns.c). In
 * trouble, as Postfix's protocol asks: log it and close without an
 * answer (Postfix then applies its own default action). */
#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "accept_pause.h"
#include "decision_port.h"
#include "loop.h"
#include "log.h"
#include "policy.h"
#include "policy_door.h"
#include "policy_lists.h"
#include "policy_proto.h"

#ifndef GREYGATE_VERSION
#define GREYGATE_VERSION "unknown"
#endif

#include "policy_door-int.h"
#include "strbuf.h"

/* One line in postgrey's shape: "action=A, reason=R[, extra],
 * client_name=..., client_address=..., sender=..., recipient=..." with
 * only the attributes that have a value. */
static void
log_action(const struct policy_request *req, const char *action,
           const char *reason, const char *extra)
{
	char line[1024];
	struct strbuf b;
	const struct {
		const char *name, *value;
	} attrs[] = {{"client_name", req->client_name},
	             {"client_address", req->client_address},
	             {"sender", req->sender},
	             {"recipient", req->recipient}};

	if (!log_is_shown(LOG_LEVEL_INFO))
		return;
	strbuf_init(&b, line, sizeof(line));
	strbuf_add(&b, "action=%s, reason=%s%s%s", action, reason,
	           extra ? ", " : "", extra ? extra : "");
	for (size_t i = 0; i < 4; i++)
		if (attrs[i].value && attrs[i].value[0])
			strbuf_add(&b, ", %s=%s", attrs[i].name, attrs[i].value);
	log_info("%s", line);
}

static bool
client_of(const char *text, struct grey_addr *addr)
{
	memset(addr, 0, sizeof(*addr));
	if (inet_pton(AF_INET, text, addr->bytes) == 1) {
		addr->family = AF_INET;
		return true;
	}
	if (inet_pton(AF_INET6, text, addr->bytes) == 1) {
		addr->family = AF_INET6;
		return true;
	}
	return false;
}

/* When the request is decided: greygated's clock, or postgrey's test
 * attribute where the config lets tests move time. */
static int64_t
decision_time(const struct policy_door *door, const struct policy_request *r)
{
	const struct policy_door_settings *cfg = &door->cfg;
	char *end;
	long long t;

	if (cfg->policy.test_time && r->policy_test_time &&
	    r->policy_test_time[0]) {
		errno = 0;
		t = strtoll(r->policy_test_time, &end, 10);
		if (!errno && !*end && t > 0)
			return t;
	}
	return loop_wall_sec(door->loop);
}

static void on_decided(int r, const struct grey_attempt *a,
                       const struct grey_decision *d, void *ctx);

/* c's attempt to the decider (it may answer inside the call). */
static void
ask_decision(struct door_conn *c)
{
	struct policy_door *door = c->door;

	c->asking = door->decide.ask(door->decide.ctx, &c->attempt, false,
	                             on_decided, c);
}

/* The client's signals are known, or their budget is spent (ss), or the
 * connection closes (NULL): the attempt takes them, and is decided from
 * the loop (an answer may close the connection, and with it the
 * signals, which must not end inside their own callback). */
static void
on_signals(void *ctx, const struct session_signals *ss)
{
	struct door_conn *c = ctx;

	if (!ss)
		return;
	signals_apply(ss, &c->attempt, c->signals_text);
	loop_timer_arm(c->door->loop, &c->go, loop_now_ms(c->door->loop));
}

void
door_on_signals_known(struct loop *loop, struct loop_timer *t, void *ctx)
{
	ask_decision(ctx);
}

/* Looks the attempt's client up, as the tarpit's. Return: true (it waits
 * for them: on_signals), false (no lookups, or no memory: decided
 * without, as with lookups off). */
static bool
look_up(struct door_conn *c)
{
	struct sockaddr_storage client = {0};
	const struct grey_attempt *a = &c->attempt;

	if (!c->door->signals || !c->door->cfg.policy.signals)
		return false;
	if (a->client.family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&client;

		in->sin_family = AF_INET;
		memcpy(&in->sin_addr, a->client.bytes, 4);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&client;

		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_addr, a->client.bytes, 16);
	}
	c->signals = signals_session_start(c->door->signals, &client);
	if (!c->signals)
		return false;
	if (signals_when_ready(c->signals, a->sender, a->helo, on_signals, c) <
	    0) {
		signals_session_end(c->signals);
		c->signals = NULL;
		return false;
	}
	return true;
}

/* Answers one request, or asks for its decision (c->waiting while it is
 * under way); logs what was decided. */
static void
decide_request(struct policy_door *door, struct door_conn *c,
               const struct policy_request *req, struct policy_answer *ans)
{
	const struct policy_door_settings *cfg = &door->cfg;
	struct grey_attempt a = {0};

	ans->verdict = POLICY_DUNNO;
	ans->text_template = cfg->policy.greylist_text;
	ans->recipient = req->recipient;
	ans->etrn_domain = req->etrn_domain != NULL;
	ans->version = GREYGATE_VERSION;
	ans->host = cfg->hostname;
	/* Postfix under stress: greylisting would only add load (as
	 * Postfix's and postgrey's docs advise). */
	if (req->stress && !strcmp(req->stress, "yes")) {
		log_action(req, "pass", "stress", NULL);
		return;
	}
	/* Only a recipient is a triplet: other stages are not ours. */
	if (!req->recipient || !req->recipient[0] ||
	    (req->protocol_state && req->protocol_state[0] &&
	     strcmp(req->protocol_state, "RCPT") != 0))
		return;
	if (!req->client_address ||
	    !client_of(req->client_address, &a.client)) {
		log_action(req, "pass", "client address unknown", NULL);
		return;
	}
	/* postgrey's whitelists first, as postgrey reads them */
	if (policy_lists_client(door->lists, req->client_name, &a.client)) {
		door->stats.whitelisted++;
		log_action(req, "pass", "client whitelist", NULL);
		return;
	}
	if (policy_lists_recipient(door->lists, req->recipient)) {
		door->stats.whitelisted++;
		log_action(req, "pass", "recipient whitelist", NULL);
		return;
	}
	a.kind = GREY_ATTEMPT_RCPT;
	a.now = decision_time(door, req);
	a.helo = req->helo_name ? req->helo_name : "";
	a.sender = req->sender ? req->sender : "";
	a.rcpt = req->recipient;
	a.path = GREY_PATH_POLICY;
	ans->now = a.now;
	c->req = *req;
	c->ans = *ans;
	c->attempt = a;
	c->waiting = c->deciding_now = true;
	/* (with lookups, decided once its signals are known: at once when
	 * they are, from the cache) */
	if (!look_up(c))
		ask_decision(c);
	c->deciding_now = false;
	*ans = c->ans; /* (if decided at once) */
}

/* "signals=..." for a log line, if the request's client was looked up
 * (NULL if not). */
static const char *
signals_said(const struct door_conn *c, char *buf, size_t len)
{
	if (!c->attempt.signals || !c->attempt.signals[0])
		return NULL;
	snprintf(buf, len, "signals=%s", c->attempt.signals);
	return buf;
}

/* The answer to a decision. */
static void
answer_decision(struct door_conn *c, const struct policy_request *req,
                struct policy_answer *ans, int r, const struct grey_decision *d)
{
	const struct policy_door_settings *cfg = &c->door->cfg;
	char extra[64], sig[GREY_SIGNALS_MAX + 16];

	if (r < 0) {
		/* The store failed (logged): the plain deferral, as at the
		 * tarpit; nothing is lost but a retry. */
		ans->verdict = POLICY_DEFER;
		ans->wait_sec = cfg->delay_sec;
		log_action(req, "greylist", "store failed", NULL);
		return;
	}
	switch (d->action) {
	case GREY_GREYLIST:
		ans->verdict = POLICY_DEFER;
		ans->wait_sec = d->wait_sec;
		if (d->reason == GREY_REASON_EARLY_RETRY) {
			snprintf(extra, sizeof(extra),
			         "early-retry (%us missing)", d->wait_sec);
			log_action(req, "greylist", extra, NULL);
		} else {
			log_action(req, "greylist", "new",
			           signals_said(c, sig, sizeof(sig)));
		}
		return;
	case GREY_TRAP:
		ans->verdict = POLICY_DEFER;
		ans->wait_sec = cfg->delay_sec;
		log_action(req, "greylist", "trapped", NULL);
		return;
	case GREY_REFUSE:
		/* (the tarpit's alone: the door's requests never are; the
		 * MTA knows its recipients) */
		ans->verdict = POLICY_DEFER;
		ans->wait_sec = cfg->delay_sec;
		log_action(req, "greylist", "refused", NULL);
		return;
	case GREY_ALLOWED:
		log_action(req, "pass",
		           d->reason == GREY_REASON_RECIPIENT_EXEMPT
		                   ? "recipient whitelist"
		                   : "client whitelist",
		           NULL);
		return;
	case GREY_PASS:
	case GREY_REFRESH:
		if (d->reason == GREY_REASON_TRUSTED) {
			/* its signals: forward-confirmed, SPF passing... */
			log_action(req, "pass", "trusted",
			           signals_said(c, sig, sizeof(sig)));
			return;
		}
		if (d->reason != GREY_REASON_RETRY_PASSED) {
			/* postgrey's words for a client it let in whole */
			log_action(req, "pass", "client AWL", NULL);
			return;
		}
		snprintf(extra, sizeof(extra), "delay=%u", d->delay_sec);
		log_action(req, "pass", "triplet found", extra);
		/* One header per message, however many recipients. */
		if (cfg->policy.x_greylist_header &&
		    (!req->instance || strncmp(c->instance, req->instance,
		                               sizeof(c->instance) - 1) != 0)) {
			ans->verdict = POLICY_PREPEND;
			ans->delay_sec = d->delay_sec;
			snprintf(c->instance, sizeof(c->instance), "%s",
			         req->instance ? req->instance : "");
		}
		return;
	case GREY_ACTION_NONE:
		return;
	}
}

/* One answer out. Return: false if the connection was closed. */
static bool
send_answer(struct door_conn *c, const struct policy_answer *ans)
{
	struct policy_door *door = c->door;
	char out[POLICY_ANSWER_MAX];
	size_t len = policy_answer_format(ans, out);

	/* Postfix waits for each answer before it asks again, so nothing
	 * piles up: an answer that does not go at once is a client that
	 * does not read. */
	if (write(c->fd, out, len) != (ssize_t)len) {
		door_conn_close(c);
		return false;
	}
	door->stats.requests++;
	if (ans->verdict == POLICY_DEFER)
		door->stats.deferred++;
	return true;
}

/* Answers what the buffer holds whole, until a decision must be waited
 * for. Return: false if the connection was closed. */
static bool
answer_requests(struct door_conn *c)
{
	struct policy_door *door = c->door;

	while (!c->waiting) {
		struct policy_request req;
		struct policy_answer ans = {0};
		ssize_t n = policy_request_parse(c->buf + c->pos,
		                                 c->len - c->pos, &req);

		if (n == 0)
			break;
		if (n < 0 || !req.request ||
		    strcmp(req.request, "smtpd_access_policy") != 0) {
			if (door_worth_logging(++door->stats.malformed))
				log_warnx(
				        "policy: %s: %s, closed unanswered "
				        "(%" PRIu64 " so far)",
				        c->peer,
				        n == -EMSGSIZE ? "a request over "
				                         "8 KiB"
				        : n < 0        ? "a line without '='"
				                : "not an smtpd_access_policy "
				                  "request",
				        door->stats.malformed);
			door_conn_close(c);
			return false;
		}
		c->pos += (size_t)n;
		c->request_ms = 0; /* (whole: its deadline is met) */
		decide_request(door, c, &req, &ans);
		if (c->waiting) {
			/* Not read until it is answered (on_decided), nor
			 * timed out meanwhile. */
			loop_mod_fd(door->loop, c->fd, 0);
			loop_timer_cancel(door->loop, &c->idle);
			return true;
		}
		if (!send_answer(c, &ans))
			return false;
	}
	memmove(c->buf, c->buf + c->pos, c->len - c->pos);
	c->len -= c->pos;
	c->pos = 0;
	return true;
}

static void
on_decided(int r, const struct grey_attempt *a, const struct grey_decision *d,
           void *ctx)
{
	struct door_conn *c = ctx;

	c->asking = NULL;
	c->waiting = false;
	answer_decision(c, &c->req, &c->ans, r, d);
	signals_session_end(c->signals);
	c->signals = NULL;
	if (c->deciding_now)
		return; /* decide_request goes on with the answer */
	if (!send_answer(c, &c->ans))
		return;
	loop_mod_fd(c->door->loop, c->fd, EPOLLIN);
	/* What came meanwhile is read when the socket says so; what the
	 * buffer holds already is answered now. */
	if (answer_requests(c))
		door_arm_timer(c);
}

void
door_on_conn(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct door_conn *c = ctx;
	ssize_t n = read(fd, c->buf + c->len, sizeof(c->buf) - c->len);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		door_conn_close(c);
		return;
	}
	c->len += (size_t)n;
	if (!answer_requests(c))
		return;
	door_arm_timer(c);
}

/* A unix socket left by a greygated that is gone is removed; one that
 * answers belongs to a live one. */
static int
clear_unix_path(const struct sockaddr_un *sa, char *err)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool live;

	if (fd < 0)
		return -errno;
	live = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0;
	close(fd);
	if (live) {
		snprintf(err, 512,
		         "[policy] listen unix:%s: another server "
		         "answers there",
		         sa->sun_path);
		return -EADDRINUSE;
	}
	unlink(sa->sun_path);
	return 0;
}

static void
on_bad_line(const char *path, int line, const char *why, void *ctx)
{
	log_warnx("policy: %s:%d: skipped: %s", path, line, why);
}

/* postgrey's whitelist files, as configured. Return: 0 or -errno with err
 * set. */
static int
load_lists(struct policy_door *door, char *err)
{
	const struct policy_config *p = &door->cfg.policy;
	struct policy_lists *lists;
	int r = policy_lists_load(p->whitelist_clients, p->whitelist_recipients,
				  on_bad_line, NULL, &lists, err);
	int nc, nr;

	if (r < 0)
		return r;
	policy_lists_free(door->lists);
	door->lists = lists;
	policy_lists_count(lists, &nc, &nr);
	if (p->whitelist_clients[0] || p->whitelist_recipients[0])
		log_info("policy: whitelists: %d client entries, %d recipient "
			 "entries",
			 nc, nr);
	return 0;
}

int
policy_door_reload(struct policy_door *door,
                   const struct policy_door_settings *s)
{
	char err[512];
	int r;

	if (!door)
		return 0;
	door->cfg = *s; /* (listen: a restart's, kept by the reload) */
	r = load_lists(door, err);
	if (r < 0)
		log_warnx("policy: whitelists: %s (the lists in place stay)",
			  err);
	return r;
}

/* The unix socket's owner and mode: root and socket_group may write it
 * (0660), nobody else (it was 0666: any local user could ask, and a pass
 * at the door is a pass at the firewall: issue 55); no such group: root
 * alone (0600), said once. Return: 0, or -1 (errno). */
static int
door_socket_access(const char *path, const char *group)
{
	struct group *gr = getgrnam(group);

	if (!gr) {
		log_warnx("[policy] socket_group %s: no such group; the door's "
		          "socket %s is root's alone (0600): name the group "
		          "the MTA's policy client runs in",
		          group, path);
		return chmod(path, 0600);
	}
	if (chown(path, 0, gr->gr_gid) < 0)
		return -1;
	return chmod(path, 0660);
}

int
policy_door_open(struct loop *loop, const struct policy_door_settings *cfg,
                 const struct decision_port *decide, struct policy_door **out,
                 char *err)
{
	const struct policy_config *p = &cfg->policy;
	const struct sockaddr_un *un = (const void *)&p->addr;
	struct policy_door *door;
	int one = 1, r;

	*out = NULL;
	if (!p->listen[0])
		return 0;
	if (p->addr.ss_family == AF_UNIX) {
		r = clear_unix_path(un, err);
		if (r < 0)
			return r;
	}
	door = calloc(1, sizeof(*door));
	if (!door)
		return -ENOMEM;
	door->loop = loop;
	door->cfg = *cfg;
	door->decide = *decide;
	door->fd = -1;
	if (hash_table_init(&door->peers, 64) < 0) {
		free(door);
		return -ENOMEM;
	}
	r = load_lists(door, err);
	if (r < 0) {
		hash_table_free(&door->peers);
		free(door);
		return r;
	}
	door->fd = socket(p->addr.ss_family,
	                  SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (door->fd < 0)
		goto fail;
	if (p->addr.ss_family != AF_UNIX)
		setsockopt(door->fd, SOL_SOCKET, SO_REUSEADDR, &one,
		           sizeof(one));
	if (bind(door->fd, (const struct sockaddr *)&p->addr, p->addr_len) < 0)
		goto fail;
	if (p->addr.ss_family == AF_UNIX) {
		snprintf(door->unix_path, sizeof(door->unix_path), "%s",
		         un->sun_path);
		if (door_socket_access(un->sun_path, p->socket_group) < 0)
			goto fail;
	}
	if (listen(door->fd, 128) < 0)
		goto fail;
	r = loop_add_fd(loop, door->fd, EPOLLIN, door_on_accept, door);
	if (r < 0) {
		errno = -r;
		goto fail;
	}
	accept_pause_init(&door->pause, loop, door->fd, EPOLLIN);
	log_info("policy: answering Postfix's check_policy_service on %s",
	         p->listen);
	*out = door;
	return 0;
fail:
	r = -errno;
	snprintf(err, 512, "[policy] listen %s: %s", p->listen, strerror(-r));
	if (door->fd >= 0)
		close(door->fd);
	if (door->unix_path[0])
		unlink(door->unix_path);
	policy_lists_free(door->lists);
	hash_table_free(&door->peers);
	free(door);
	return r;
}

void
policy_door_use_signals(struct policy_door *door, struct signals *signals)
{
	if (door)
		door->signals = signals;
}

void
policy_door_close(struct policy_door *door)
{
	if (!door)
		return;
	while (door->nconns)
		door_conn_close(door->conns[0]);
	free(door->conns);
	accept_pause_cancel(&door->pause);
	loop_del_fd(door->loop, door->fd);
	close(door->fd);
	if (door->unix_path[0])
		unlink(door->unix_path);
	policy_lists_free(door->lists);
	hash_table_free(&door->peers);
	free(door);
}

void
policy_door_get_stats(const struct policy_door *door,
                      struct policy_door_stats *out)
{
	if (door)
		*out = door->stats;
	else
		memset(out, 0, sizeof(*out));
}
