// SPDX-License-Identifier: GPL-2.0-or-later
/* The gateway wiring: capture -> sensor -> policy -> nft sets, the tarpit
 * on the same loop, allow lists from files, periodic expiry and purge, and
 * one postgrey-style log line per decision. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>

#include "gateway.h"
#include "log.h"
#include "loop.h"

#define HOUSEKEEPING_MS 1000
#define PURGE_BATCH 2000
/* The store commits (one fsync) when this many writes wait or this long
 * passed since the last commit: a kill -9 loses at most that much, and
 * greylisting only ever answers 4xx, so nothing is lost but a retry. */
#define STORE_COMMIT_PENDING 10000
#define STORE_COMMIT_MS 200
/* Passes, refreshes and traps are few and precious (a lost pass costs a
 * legitimate sender another delay): they are committed and synced to disk
 * in the turn they are decided. Everything else is synced every few
 * seconds. */
#define STORE_SYNC_TICKS 5

struct gateway {
	const struct config *cfg;
	struct loop *loop;
	struct store *store;
	struct grey *grey;
	struct nftset *nft;
	struct tarpit *tarpit;
	struct sensor *sensor;
	struct sensor_capture *cap;
	struct loop_timer housekeeping;
	uint64_t store_committed_ms;
	unsigned ticks;
	bool must_commit; /* a pass or trap waits: commit it this turn */
	size_t allow_count;
};

static void
prefix_of(const struct grey_client *c, struct nftset_prefix *p)
{
	p->family = c->family;
	p->prefix = c->prefix;
	memcpy(p->bytes, c->bytes, 16);
}

static void
on_nft_refused(enum nftset_kind kind, const struct nftset_prefix *p, int err,
	       void *ctx)
{
	char ip[INET6_ADDRSTRLEN];

	inet_ntop(p->family, p->bytes, ip, sizeof(ip));
	log_warnx("nft: %s/%u refused in set %s: %s", ip, p->prefix,
		  nftset_set_name(kind, p->family), strerror(-err));
}

/* Sends the queued set changes now (a pass must reach the kernel at
 * once); commits the store when enough waits or time passed, or when
 * force is set. */
static void
commit_now(struct gateway *gw, bool force)
{
	uint64_t now = loop_now_ms(gw->loop);
	int r;

	if (nftset_queued(gw->nft)) {
		r = nftset_commit(gw->nft, on_nft_refused, NULL);
		if (r < 0)
			log_warnx("nft: batch not sent: %s", strerror(-r));
	}
	if (store_pending(gw->store) &&
	    (force || gw->must_commit ||
	     store_pending(gw->store) >= STORE_COMMIT_PENDING ||
	     now - gw->store_committed_ms >= STORE_COMMIT_MS)) {
		gw->store_committed_ms = now;
		r = gw->must_commit ? store_sync(gw->store)
				    : store_flush(gw->store);
		gw->must_commit = false;
		if (r < 0)
			log_warnx("store: commit failed: %s", strerror(-r));
	}
}

static void
commit(struct gateway *gw)
{
	commit_now(gw, true);
}

/* --- allow lists --- */

static int
load_allow_file(struct gateway *gw, const char *dir, const char *name)
{
	char path[512], line[512];
	int lineno = 0, loaded = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f) {
		log_warn("allow list %s", path);
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		struct grey_client net;
		struct nftset_prefix p;
		char *s = line, *e;

		lineno++;
		s[strcspn(s, "#\r\n")] = 0;
		while (*s == ' ' || *s == '\t')
			s++;
		e = s + strlen(s);
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			*--e = 0;
		if (!*s)
			continue;
		if (grey_cidr_parse(s, &net) < 0 ||
		    grey_allow_add(gw->grey, s) < 0) {
			log_warnx("%s:%d: not an address or CIDR: '%s' "
				  "(line skipped)",
				  path, lineno, s);
			continue;
		}
		prefix_of(&net, &p);
		nftset_add(gw->nft, NFTSET_ALLOW, &p, 0, path);
		loaded++;
	}
	fclose(f);
	return loaded;
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
gateway_reload_allow(struct gateway *gw)
{
	const char *dir = gw->cfg->allow_dir;
	char *names[1024];
	size_t n = 0;
	struct dirent *de;
	int total = 0;
	DIR *d;

	grey_allow_clear(gw->grey);
	/* One batch: the flush and the new entries land together, so no
	 * allowed bank ever meets the tarpit in between. */
	nftset_flush(gw->nft, NFTSET_ALLOW);
	d = opendir(dir);
	if (!d) {
		if (errno != ENOENT)
			log_warn("allow lists %s", dir);
	} else {
		while ((de = readdir(d)) && n < 1024) {
			if (de->d_name[0] == '.')
				continue;
			names[n] = strdup(de->d_name);
			if (names[n])
				n++;
		}
		closedir(d);
	}
	qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		total += load_allow_file(gw, dir, names[i]);
		free(names[i]);
	}
	commit(gw);
	gw->allow_count = (size_t)total;
	log_info("allow lists: %d entries from %zu files in %s", total, n, dir);
	return total;
}

/* --- decisions --- */

static const char *
addr_text(const struct sensor_event *ev, char *buf)
{
	return inet_ntop(ev->family, ev->client, buf, INET6_ADDRSTRLEN);
}

static void
apply(struct gateway *gw, const struct sensor_event *ev,
      const struct grey_decision *d, int64_t now)
{
	const struct config *cfg = gw->cfg;
	char ip[INET6_ADDRSTRLEN], key[64];
	struct nftset_prefix p;
	uint64_t ttl_ms;

	addr_text(ev, ip);
	grey_client_format(&d->client, key, sizeof(key));
	prefix_of(&d->client, &p);
	ttl_ms = d->expires > now ? (uint64_t)(d->expires - now) * 1000 : 0;
	if ((d->action == GREY_PASS && d->reason != GREY_REASON_PASSED) ||
	    d->action == GREY_REFRESH || d->action == GREY_TRAP)
		gw->must_commit = true;
	switch (d->action) {
	case GREY_GREYLIST:
		log_info("action=greylist, reason=%s, client=%s, helo=%s, "
			 "sender=%s, recipient=%s, delay=%u",
			 grey_reason_name(d->reason), ip, ev->helo, ev->from,
			 ev->to, d->wait_sec);
		break;
	case GREY_PASS:
		if (ttl_ms)
			nftset_add(gw->nft, NFTSET_PASS, &p, ttl_ms,
				   "greygate pass");
		if (d->reason == GREY_REASON_PASSED) {
			log_debug("action=pass, reason=passed, client=%s, "
				  "key=%s",
				  ip, key);
			break;
		}
		log_info("action=pass, reason=%s, client=%s, key=%s, helo=%s, "
			 "sender=%s, recipient=%s, delay=%u, ttl=%u",
			 grey_reason_name(d->reason), ip, key, ev->helo,
			 ev->from, ev->to, d->delay_sec, cfg->grey.pass_ttl_sec);
		break;
	case GREY_REFRESH:
		nftset_add(gw->nft, NFTSET_PASS, &p, ttl_ms, "greygate pass");
		log_info("action=refresh, reason=%s, client=%s, key=%s, "
			 "ttl=%u",
			 grey_reason_name(d->reason), ip, key,
			 cfg->grey.pass_ttl_sec);
		break;
	case GREY_TRAP:
		if (ttl_ms)
			nftset_add(gw->nft, NFTSET_TRAP, &p, ttl_ms,
				   "greygate trap");
		log_info("action=trap, reason=trapped, client=%s, helo=%s, "
			 "sender=%s, recipient=%s",
			 ip, ev->helo, ev->from, ev->to);
		break;
	case GREY_ALLOWED:
		log_debug("action=allow, reason=allow-list, client=%s, "
			  "sender=%s, recipient=%s",
			  ip, ev->from, ev->to);
		break;
	case GREY_ACTION_NONE:
		break;
	}
}

static enum grey_path
grey_path_of(enum sensor_path path)
{
	return path == SENSOR_PATH_TARPIT ? GREY_PATH_TARPIT
	       : path == SENSOR_PATH_FAST ? GREY_PATH_FAST
					  : GREY_PATH_UNKNOWN;
}

static void
on_sensor_event(const struct sensor_event *ev, void *ctx)
{
	struct gateway *gw = ctx;
	struct grey_decision d;
	struct grey_addr a = {.family = ev->family};
	int64_t now = ev->ts.tv_sec;
	int r;

	memcpy(a.bytes, ev->client, 16);
	switch (ev->type) {
	case SENSOR_EV_RCPT:
		r = grey_on_rcpt(gw->grey, now, &a, ev->from, ev->to,
				 grey_path_of(ev->path), ev->reply, &d);
		break;
	case SENSOR_EV_STARTTLS:
		r = grey_on_starttls(gw->grey, now, &a, grey_path_of(ev->path),
				     &d);
		break;
	default:
		return;
	}
	if (r < 0) {
		log_warnx("store: %s; decision skipped", strerror(-r));
		return;
	}
	apply(gw, ev, &d, now);
}

static bool
tarpit_holds_hook(int family, const uint8_t *client, uint16_t port, void *ctx)
{
	struct gateway *gw = ctx;

	return tarpit_holds(gw->tarpit, family, client, port);
}

static void
on_capture(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct gateway *gw = ctx;

	if (sensor_capture_dispatch(gw->cap, gw->sensor, 256) < 0)
		log_warnx("capture: read failed");
	/* A pass reaches the kernel in the same turn it is decided. */
	commit_now(gw, false);
}

static void
on_housekeeping(struct loop *loop, struct loop_timer *t, void *ctx)
{
	struct gateway *gw = ctx;
	int64_t now = time(NULL);
	int r;

	sensor_expire(gw->sensor, now);
	r = store_purge(gw->store, now, gw->cfg->grey.retry_window_sec,
			PURGE_BATCH);
	if (r > 0)
		log_debug("store: purged %d expired records", r);
	commit(gw);
	if (++gw->ticks % STORE_SYNC_TICKS == 0 && store_sync(gw->store) < 0)
		log_warnx("store: sync to disk failed");
	loop_timer_arm(loop, t, loop_now_ms(loop) + HOUSEKEEPING_MS);
}

/* --- start --- */

struct reconcile_ctx {
	struct gateway *gw;
	enum nftset_kind kind;
	int64_t now;
	int count;
};

static int
reconcile_one(const struct grey_client *c, const struct store_client *rec,
	      void *ctx)
{
	struct reconcile_ctx *rc = ctx;
	struct nftset_prefix p;

	prefix_of(c, &p);
	if (nftset_add(rc->gw->nft, rc->kind, &p,
		       (uint64_t)(rec->expires - rc->now) * 1000,
		       rc->kind == NFTSET_PASS ? "greygate pass"
					       : "greygate trap") < 0) {
		char key[64];

		/* A pass stored under another client_prefix than the one
		 * configured now: the set cannot hold it. */
		log_warnx("store: %s not restored: not a /%u key",
			  grey_client_format(c, key, sizeof(key)),
			  c->family == AF_INET ? rc->gw->cfg->grey.prefix4
					       : rc->gw->cfg->grey.prefix6);
		return 0;
	}
	rc->count++;
	return 0;
}

static int
reconcile(struct gateway *gw)
{
	struct reconcile_ctx pass = {gw, NFTSET_PASS, time(NULL), 0};
	struct reconcile_ctx trap = {gw, NFTSET_TRAP, pass.now, 0};
	int r = store_each_client(gw->store, STORE_PASS, pass.now,
				  reconcile_one, &pass);

	if (r == 0)
		r = store_each_client(gw->store, STORE_TRAP, pass.now,
				      reconcile_one, &trap);
	if (r < 0)
		return r;
	commit(gw);
	log_info("nft: restored %d passed and %d trapped clients from the "
		 "store",
		 pass.count, trap.count);
	return 0;
}

static int
open_policy(struct gateway *gw, char *err)
{
	const struct config *cfg = gw->cfg;
	int r;

	if (mkdir(cfg->store_dir, 0700) < 0 && errno != EEXIST) {
		r = -errno;
		snprintf(err, 512, "store %s: %s", cfg->store_dir, strerror(-r));
		return r;
	}
	r = store_open(cfg->store_dir, cfg->store_move_aside, &gw->store);
	if (r < 0) {
		snprintf(err, 512, "store %s: %s%s", cfg->store_dir,
			 strerror(-r),
			 r == -EPROTO ? " (not a greygate store of this "
					"version, or corrupt: set "
					"store_move_aside = yes to keep it "
					"aside and start empty)"
				      : "");
		return r;
	}
	gw->grey = grey_new(&cfg->grey, gw->store);
	if (!gw->grey)
		return -ENOMEM;
	for (int i = 0; i < cfg->nexempt; i++)
		grey_exempt_add(gw->grey, cfg->exempt[i]);
	for (int i = 0; i < cfg->ntraps; i++)
		grey_trap_add(gw->grey, cfg->traps[i]);
	return 0;
}

static int
open_tarpit(struct gateway *gw, char *err)
{
	struct sockaddr_in in4 = {.sin_family = AF_INET};
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6,
				   .sin6_addr = IN6ADDR_ANY_INIT};
	int r;

	gw->tarpit = tarpit_new(&gw->cfg->tarpit, gw->loop);
	if (!gw->tarpit)
		return -ENOMEM;
	in4.sin_port = htons(gw->cfg->nft.tarpit_port);
	in6.sin6_port = in4.sin_port;
	r = tarpit_listen(gw->tarpit, (struct sockaddr *)&in4, sizeof(in4));
	if (r == 0) {
		r = tarpit_listen(gw->tarpit, (struct sockaddr *)&in6,
				  sizeof(in6));
		if (r == -EAFNOSUPPORT || r == -EADDRNOTAVAIL)
			r = 0; /* no IPv6 on this host */
	}
	if (r < 0)
		snprintf(err, 512, "tarpit port %u: %s", gw->cfg->nft.tarpit_port,
			 strerror(-r));
	return r;
}

static int
open_sensor(struct gateway *gw, char *err)
{
	char perr[256] = "";
	int r;

	gw->sensor = sensor_new(&gw->cfg->sensor, on_sensor_event, gw);
	if (!gw->sensor)
		return -ENOMEM;
	sensor_set_tarpit_hook(gw->sensor, tarpit_holds_hook, gw);
	r = sensor_capture_open_live(gw->cfg->interface, 8 << 20,
				     &gw->cfg->sensor, &gw->cap, perr);
	if (r < 0) {
		snprintf(err, 512, "capture on %s: %s", gw->cfg->interface,
			 perr);
		return r;
	}
	r = loop_add_fd(gw->loop, sensor_capture_fd(gw->cap), EPOLLIN,
			on_capture, gw);
	if (r < 0)
		snprintf(err, 512, "capture: %s", strerror(-r));
	return r;
}

int
gateway_open(const struct config *cfg, struct loop *loop, struct gateway **out,
	     char *err)
{
	struct gateway *gw = calloc(1, sizeof(*gw));
	int r;

	if (!gw)
		return -ENOMEM;
	gw->cfg = cfg;
	gw->loop = loop;
	loop_timer_init(&gw->housekeeping, on_housekeeping, gw);
	r = open_policy(gw, err);
	if (r < 0)
		goto fail;
	r = nftset_open(&cfg->nft, &gw->nft);
	if (r < 0) {
		snprintf(err, 512, "nftables table inet %s: %s", cfg->table,
			 nftset_explain(r));
		goto fail;
	}
	r = open_tarpit(gw, err);
	if (r < 0)
		goto fail;
	r = open_sensor(gw, err);
	if (r < 0)
		goto fail;
	gateway_reload_allow(gw);
	r = reconcile(gw);
	if (r < 0) {
		snprintf(err, 512, "restoring clients from the store: %s",
			 strerror(-r));
		goto fail;
	}
	loop_timer_arm(loop, &gw->housekeeping,
		       loop_now_ms(loop) + HOUSEKEEPING_MS);
	*out = gw;
	return 0;
fail:
	if (!err[0])
		snprintf(err, 512, "%s", strerror(-r));
	gateway_close(gw);
	return r;
}

void
gateway_close(struct gateway *gw)
{
	if (!gw)
		return;
	loop_timer_cancel(gw->loop, &gw->housekeeping);
	if (gw->cap) {
		loop_del_fd(gw->loop, sensor_capture_fd(gw->cap));
		sensor_capture_close(gw->cap);
	}
	sensor_free(gw->sensor);
	tarpit_free(gw->tarpit);
	nftset_close(gw->nft);
	grey_free(gw->grey);
	store_close(gw->store);
	free(gw);
}
