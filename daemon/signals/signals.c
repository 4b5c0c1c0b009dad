// SPDX-License-Identifier: GPL-2.0-or-later
/* A tarpit session's DNS signals (signals.h): one FCrDNS lookup a
 * session, one SPF check and one look at its domain's mail records a
 * sender, and the attempts that wait, each with its budget's timer. */
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "dnsbl.h"
#include "fcrdns.h"
#include "helo_shape.h"
#include "log.h"
#include "rdns_shape.h"
#include "sender_domain.h"
#include "spf_check.h"
#include "resolver.h"
#include "signals.h"

struct signals {
	struct loop *loop;
	const struct config *cfg;
	struct resolver *resolver;
	struct rdns_shape *shape;
	struct dnsbl_sites dnsbl; /* (dnsbl_sites is read at start only) */
	int64_t list_error_said;  /* when a list's error code was logged */
};

struct waiter {
	struct waiter *next;
	struct session_signals *ss;
	bool spf; /* waits for SPF too (a RCPT's; STARTTLS's does not) */
	signals_ready_fn *fn;
	void *ctx;
	struct loop_timer budget;
};

struct session_signals {
	struct signals *s;
	int family;
	uint8_t addr[16];
	struct fcrdns *lookup; /* while under way */
	bool known;            /* the lookup answered */
	struct fcrdns_answer fcrdns;
	bool dynamic;          /* the PTR name looks like an access line's */
	/* SPF for the sender last asked about */
	char spf_sender[256];
	struct spf_check *spf; /* while under way */
	bool spf_started, spf_known;
	struct spf_answer spf_answer;
	/* does the sender's domain take mail (sender_domain.h): for the
	 * domain last asked about ("": none to ask, known at once) */
	char sd_domain[256];
	struct sender_domain *sd; /* while under way */
	bool sd_started, sd_known;
	enum sender_domain_result sd_result;
	struct dnsbl_check *dnsbl; /* while under way */
	bool dnsbl_known;
	struct dnsbl_answer dnsbl_answer;
	struct waiter *waiting;
	/* a STARTTLS waits: SPF is asked for the PTR name's domain */
	bool tls_waiting;
	char ptr_domain[256]; /* ... that domain ("": none to ask) */
};

/* The PTR patterns' file, or NULL for none: the shipped one missing (a
 * build run where it stands, not installed) is said, not fatal; one the
 * admin named must be there. */
static const char *
patterns_path(const struct config *cfg)
{
	const char *path = cfg->signals.rdns_patterns;

	if (!path[0])
		return NULL;
	if (config_rdns_patterns_shipped(cfg) && access(path, F_OK) < 0 &&
	    errno == ENOENT) {
		log_warnx("signals: %s is not installed: only PTR names that "
		          "embed the address count as dynamic (set [signals] "
		          "rdns_patterns)",
		          path);
		return NULL;
	}
	return path;
}

struct signals *
signals_new(struct loop *loop, const struct config *cfg, char *err, size_t len)
{
	struct signals *s = calloc(1, sizeof(*s));
	struct resolver_config rc = {.servers = cfg->signals.dns_servers};

	if (!s) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	s->loop = loop;
	s->cfg = cfg;
	if (dnsbl_sites_parse(cfg->signals.dnsbl_sites, &s->dnsbl, err, len) < 0) {
		free(s);
		return NULL;
	}
	s->shape = rdns_shape_load(patterns_path(cfg), err, len);
	if (!s->shape) {
		free(s);
		return NULL;
	}
	s->resolver = resolver_new(loop, &rc, err, len);
	if (!s->resolver) {
		rdns_shape_free(s->shape);
		free(s);
		return NULL;
	}
	return s;
}

void
signals_free(struct signals *s)
{
	if (!s)
		return;
	resolver_free(s->resolver);
	rdns_shape_free(s->shape);
	free(s);
}

/* One waiter told (ss, or NULL: the session ended), and gone. */
static void
tell(struct session_signals *ss, struct waiter *w,
     const struct session_signals *told)
{
	struct waiter **at;

	for (at = &ss->waiting; *at != w; at = &(*at)->next)
		;
	*at = w->next;
	loop_timer_cancel(ss->s->loop, &w->budget);
	w->fn(w->ctx, told);
	free(w);
}

/* Is all that a waiter wants known? A RCPT's: its sender's SPF too; a
 * STARTTLS's: the PTR name's domain's SPF too, when there is one to
 * ask (tls_spf). */
static bool
ready(const struct session_signals *ss, bool spf)
{
	bool tls_spf = !spf && ss->tls_waiting && ss->ptr_domain[0];

	return ss->known && ss->dnsbl_known &&
	       (!(spf || tls_spf) || ss->spf_known) && (!spf || ss->sd_known);
}

/* Everyone waiting whose signals are known is told. */
static void
tell_if_ready(struct session_signals *ss)
{
	struct waiter *w = ss->waiting;

	while (w) {
		struct waiter *next = w->next;

		/* (telling may end others: start again from the head) */
		if (ready(ss, w->spf)) {
			tell(ss, w, ss);
			next = ss->waiting;
		}
		w = next;
	}
}

static void start_spf(struct session_signals *ss, const char *sender,
                      const char *helo);
static void start_tls_spf(struct session_signals *ss);

static void
on_budget(struct loop *loop, struct loop_timer *timer, void *ctx)
{
	struct waiter *w = ctx;

	(void)loop;
	(void)timer;
	tell(w->ss, w, w->ss);
}

static void
on_fcrdns(const struct fcrdns_answer *a, void *ctx)
{
	struct session_signals *ss = ctx;
	char why[160];

	ss->lookup = NULL;
	ss->fcrdns = *a;
	ss->known = true;
	if (a->name[0]) {
		int r = rdns_shape_dynamic(ss->s->shape, ss->family, ss->addr,
		                           a->name, why, sizeof(why));

		ss->dynamic = r == 1;
		if (r == 1)
			log_debug("signals: %s looks dynamic: %s", a->name, why);
	}
	if (ss->tls_waiting)
		start_tls_spf(ss);
	tell_if_ready(ss);
}

/* A list that answered with its error code: said once a minute (it
 * answers so for every client while it refuses the resolver). */
static void
say_list_error(struct signals *s, const struct dnsbl_answer *a)
{
	int64_t now = loop_wall_sec(s->loop);

	if (now < s->list_error_said + 60)
		return;
	s->list_error_said = now;
	log_warnx("DNS list %s answers %u.%u.%u.%u, one of its error codes "
		  "(a refused query: a public or shared resolver, or a "
		  "limit): taken as no answer; a resolver of your own may be "
		  "needed for it",
		  a->error_zone, a->error_code[0], a->error_code[1],
		  a->error_code[2], a->error_code[3]);
}

static void
on_dnsbl(const struct dnsbl_answer *a, void *ctx)
{
	struct session_signals *ss = ctx;

	if (a->error_zone[0])
		say_list_error(ss->s, a);
	ss->dnsbl = NULL;
	ss->dnsbl_answer = *a;
	ss->dnsbl_known = true;
	tell_if_ready(ss);
}

static void
on_spf(const struct spf_answer *a, void *ctx)
{
	struct session_signals *ss = ctx;

	ss->spf = NULL;
	ss->spf_answer = *a;
	ss->spf_known = true;
	tell_if_ready(ss);
}

static void
on_sender_domain(enum sender_domain_result r, void *ctx)
{
	struct session_signals *ss = ctx;

	ss->sd = NULL;
	ss->sd_result = r;
	ss->sd_known = true;
	tell_if_ready(ss);
}

/* Whether the sender's domain takes mail, unless that domain was asked
 * about already; nothing to ask (the null sender, an address literal,
 * [signals] sender_domain = no): known at once, as taking mail. */
static void
start_sender_domain(struct session_signals *ss, const char *sender)
{
	char domain[sizeof(ss->sd_domain)];
	bool ask = ss->s->cfg->signals.sender_domain &&
	           sender_domain_of(sender, domain, sizeof(domain));

	if (!ask)
		domain[0] = 0;
	if (ss->sd_started && !strcmp(ss->sd_domain, domain))
		return;
	sender_domain_cancel(ss->sd);
	ss->sd = NULL;
	ss->sd_started = true;
	ss->sd_known = false;
	memcpy(ss->sd_domain, domain, sizeof(domain));
	ss->sd_result = SENDER_DOMAIN_MAIL;
	if (!ask || sender_domain_start(ss->s->resolver, domain,
	                                on_sender_domain, ss, &ss->sd) < 0) {
		/* (no memory: decided as if nothing were known) */
		ss->sd_result =
		        ask ? SENDER_DOMAIN_TEMPERROR : SENDER_DOMAIN_MAIL;
		ss->sd_known = true;
	}
}

/* At STARTTLS no sender is seen (what follows is in TLS): for a client
 * whose PTR name is forward-confirmed and plain-looking, SPF is asked for
 * that name's domain (mx7.sender.test: sender.test), the domain that
 * named the host, as fcrdns+spf asks it of the sender's. */
static void
start_tls_spf(struct session_signals *ss)
{
	static const char local[] = "postmaster@";
	const char *name = ss->fcrdns.name, *dot;
	char sender[sizeof(ss->spf_sender)];
	size_t n;

	ss->ptr_domain[0] = 0;
	if (!ss->known || ss->fcrdns.result != FCRDNS_CONFIRMED ||
	    ss->dynamic || ss->s->cfg->signals.trust != SIGNALS_TRUST_FCRDNS_SPF)
		return;
	dot = strchr(name, '.');
	/* (a parent of two labels at least: never a top-level domain) */
	if (!dot || !strchr(dot + 1, '.'))
		return;
	n = strlen(dot + 1);
	if (n && dot[n] == '.')
		n--;
	if (!n || n >= sizeof(ss->ptr_domain) ||
	    sizeof(local) - 1 + n >= sizeof(sender))
		return;
	memcpy(ss->ptr_domain, dot + 1, n);
	ss->ptr_domain[n] = 0;
	memcpy(sender, local, sizeof(local) - 1);
	memcpy(sender + sizeof(local) - 1, ss->ptr_domain, n + 1);
	start_spf(ss, sender, "");
}

/* SPF for sender, unless it is the one asked about already. */
static void
start_spf(struct session_signals *ss, const char *sender, const char *helo)
{
	if (ss->spf_started && !strcmp(ss->spf_sender, sender))
		return;
	spf_check_cancel(ss->spf);
	ss->spf = NULL;
	ss->spf_started = true;
	ss->spf_known = false;
	snprintf(ss->spf_sender, sizeof(ss->spf_sender), "%s", sender);
	if (spf_check_start(ss->s->resolver, ss->family, ss->addr, sender, helo,
	                    on_spf, ss, &ss->spf) < 0) {
		ss->spf_answer.result = SPF_TEMPERROR;
		ss->spf_known = true;
	}
}

struct session_signals *
signals_session_start(struct signals *s, const struct sockaddr_storage *client)
{
	struct session_signals *ss = calloc(1, sizeof(*ss));

	if (!ss)
		return NULL;
	ss->s = s;
	ss->family = client->ss_family;
	if (ss->family == AF_INET)
		memcpy(ss->addr, &((const struct sockaddr_in *)client)->sin_addr,
		       4);
	else
		memcpy(ss->addr,
		       &((const struct sockaddr_in6 *)client)->sin6_addr, 16);
	if (fcrdns_start(s->resolver, ss->family, ss->addr, on_fcrdns, ss,
	                 &ss->lookup) < 0) {
		/* (no memory: decided as if nothing were known) */
		ss->fcrdns.result = FCRDNS_TEMPERROR;
		ss->known = true;
	}
	if (!s->dnsbl.n ||
	    dnsbl_start(s->resolver, &s->dnsbl, ss->family, ss->addr, on_dnsbl,
	                ss, &ss->dnsbl) < 0)
		ss->dnsbl_known = true; /* (none: nothing to wait for) */
	return ss;
}

void
signals_session_end(struct session_signals *ss)
{
	if (!ss)
		return;
	fcrdns_cancel(ss->lookup);
	spf_check_cancel(ss->spf);
	sender_domain_cancel(ss->sd);
	dnsbl_cancel(ss->dnsbl);
	while (ss->waiting)
		tell(ss, ss->waiting, NULL);
	free(ss);
}

/* fn told once what it waits for is known, or at the budget. */
static int
wait_for(struct session_signals *ss, bool spf, signals_ready_fn *fn,
	 void *ctx)
{
	struct waiter *w;

	if (ready(ss, spf)) {
		fn(ctx, ss);
		return 0;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->ss = ss;
	w->spf = spf;
	w->fn = fn;
	w->ctx = ctx;
	loop_timer_init(&w->budget, on_budget, w);
	loop_timer_arm(ss->s->loop, &w->budget,
	               loop_now_ms(ss->s->loop) + ss->s->cfg->signals.budget_ms);
	w->next = ss->waiting;
	ss->waiting = w;
	return 0;
}

int
signals_when_ready(struct session_signals *ss, const char *sender,
                   const char *helo, signals_ready_fn *fn, void *ctx)
{
	start_spf(ss, sender, helo);
	start_sender_domain(ss, sender);
	return wait_for(ss, true, fn, ctx);
}

int
signals_when_connected(struct session_signals *ss, signals_ready_fn *fn,
                       void *ctx)
{
	ss->tls_waiting = true;
	start_tls_spf(ss);
	return wait_for(ss, false, fn, ctx);
}

void
signals_counters(const struct signals *s, struct resolver_counters *out,
                 size_t *held)
{
	resolver_counters(s->resolver, out, held);
}

/* Is domain the sender's own (SPF checked MAIL FROM's domain, not the
 * HELO name a null sender is checked by: each server of a pool names
 * itself, so that would pool nothing)? */
static bool
sender_domain_is(const char *sender, const char *domain)
{
	const char *at = sender ? strrchr(sender, '@') : NULL;

	return at && domain[0] && strcasecmp(at + 1, domain) == 0;
}

void
signals_apply(const struct session_signals *ss, struct grey_attempt *a,
              char *buf)
{
	const struct fcrdns_answer *f = &ss->fcrdns;
	const struct spf_answer *spf = &ss->spf_answer;
	uint8_t trust = ss->s->cfg->signals.trust;
	bool fcrdns_ok = ss->known && f->result == FCRDNS_CONFIRMED &&
	                 !ss->dynamic;
	const struct signals_config *sc = &ss->s->cfg->signals;
	int score = ss->dnsbl_known ? ss->dnsbl_answer.score : 0;
	bool listed = score >= (int)sc->dnsbl_threshold;
	bool allowed = sc->dnswl_threshold &&
	               score <= -(int)sc->dnswl_threshold;
	/* looks like a bot (and no allow list says otherwise): said, and
	 * made to wait longer */
	/* At STARTTLS no sender is known, nor ever seen (what follows is in
	 * TLS): the sender's SPF has no part; the PTR name's domain's may
	 * (start_tls_spf) */
	bool tls = a->kind == GREY_ATTEMPT_STARTTLS;
	bool spf_known = ss->spf_known && !tls;
	bool ptr_spf_pass = tls && ss->ptr_domain[0] && ss->spf_known &&
	                    ss->spf_answer.result == SPF_PASS &&
	                    !strcasecmp(ss->spf_answer.domain, ss->ptr_domain);
	/* a HELO that is neither a name nor an address literal (RFC 5321) */
	bool bad_helo = !helo_shape_valid(a->helo);
	/* a sender's domain that takes no mail (so no bounce either) */
	bool no_mail = !tls && ss->sd_known &&
	               (ss->sd_result == SENDER_DOMAIN_NONE ||
	                ss->sd_result == SENDER_DOMAIN_NULL_MX);
	/* What is only missing (no PTR, a name not resolving back) or
	 * generic (a provider's name for the address: hosting and small
	 * offices' servers carry them too) is common among small real
	 * servers and says little by itself: it keeps trust away, not the
	 * plain delay, unless the admin says */
	bool no_fcrdns = ss->known && (f->result == FCRDNS_NO_PTR ||
	                               f->result == FCRDNS_UNCONFIRMED);
	bool suspicious = !allowed &&
	                  ((ss->known && ss->dynamic &&
	                    sc->suspect_dynamic_rdns) ||
	                   (no_fcrdns && sc->suspect_without_fcrdns) ||
	                   (spf_known && (spf->result == SPF_FAIL ||
	                                  spf->result == SPF_SOFTFAIL)) ||
	                   listed || bad_helo || no_mail);
	int n;

	if (!ss->known)
		n = snprintf(buf, GREY_SIGNALS_MAX, "fcrdns:late");
	else if (f->result == FCRDNS_CONFIRMED ||
	         f->result == FCRDNS_UNCONFIRMED)
		n = snprintf(buf, GREY_SIGNALS_MAX, "fcrdns:%s:%.200s;rdns:%s",
		             fcrdns_result_name(f->result), f->name,
		             ss->dynamic ? "dynamic" : "plain");
	else
		n = snprintf(buf, GREY_SIGNALS_MAX, "fcrdns:%s",
		             fcrdns_result_name(f->result));
	if (n > 0 && n < GREY_SIGNALS_MAX) {
		if (tls && !ss->ptr_domain[0])
			snprintf(buf + n, GREY_SIGNALS_MAX - (size_t)n,
			         ";spf:unseen");
		else if (tls && !ss->spf_known)
			snprintf(buf + n, GREY_SIGNALS_MAX - (size_t)n,
			         ";ptr-spf:late");
		else if (tls)
			snprintf(buf + n, GREY_SIGNALS_MAX - (size_t)n,
			         ";ptr-spf:%s:%.120s",
			         spf_result_name(spf->result), ss->ptr_domain);
		else if (!ss->spf_known)
			snprintf(buf + n, GREY_SIGNALS_MAX - (size_t)n, ";spf:late");
		else if (spf->domain[0])
			snprintf(buf + n, GREY_SIGNALS_MAX - (size_t)n,
			         ";spf:%s:%.120s", spf_result_name(spf->result),
			         spf->domain);
		else
			snprintf(buf + n, GREY_SIGNALS_MAX - (size_t)n, ";spf:%s",
			         spf_result_name(spf->result));
	}
	n = (int)strlen(buf);
	if (ss->s->dnsbl.n && n < GREY_SIGNALS_MAX) {
		if (!ss->dnsbl_known)
			snprintf(buf + n, GREY_SIGNALS_MAX - (size_t)n,
			         ";dnsbl:late");
		else if (ss->dnsbl_answer.listed[0])
			snprintf(buf + n, GREY_SIGNALS_MAX - (size_t)n,
			         ";dnsbl:%s", ss->dnsbl_answer.listed);
		n = (int)strlen(buf);
	}
	if (bad_helo && n < GREY_SIGNALS_MAX) {
		snprintf(buf + n, GREY_SIGNALS_MAX - (size_t)n, ";helo:bad");
		n = (int)strlen(buf);
	}
	/* the sender's domain: said when it takes no mail, or when that
	 * could not be known */
	if (!tls && ss->sd_domain[0] && n < GREY_SIGNALS_MAX &&
	    (!ss->sd_known || ss->sd_result != SENDER_DOMAIN_MAIL)) {
		snprintf(buf + n, GREY_SIGNALS_MAX - (size_t)n,
		         ";sender-domain:%s:%.120s",
		         ss->sd_known ? sender_domain_result_name(ss->sd_result)
		                      : "late",
		         ss->sd_domain);
		n = (int)strlen(buf);
	}
	if (suspicious && n < GREY_SIGNALS_MAX)
		snprintf(buf + n, GREY_SIGNALS_MAX - (size_t)n, ";suspicious");
	a->delay_sec = suspicious ? ss->s->cfg->signals.suspicious_delay_sec : 0;
	a->refuse_spf = sc->refuse_spf_fail && spf_known &&
	                spf->result == SPF_FAIL && !allowed;
	a->refuse_sender =
	        !sc->refuse_unknown_sender_domain || !no_mail || allowed
	                ? GREY_REASON_NONE
	        : ss->sd_result == SENDER_DOMAIN_NULL_MX
	                ? GREY_REASON_SENDER_NULL_MX
	                : GREY_REASON_SENDER_DOMAIN;
	a->pooled = sc->pool_spf && spf_known && spf->result == SPF_PASS &&
	            sender_domain_is(a->sender, spf->domain);
	n = (int)strlen(buf);
	if (a->pooled && n < GREY_SIGNALS_MAX)
		snprintf(buf + n, GREY_SIGNALS_MAX - (size_t)n, ";pooled");
	a->signals = buf;
	/* An allow list trusts whom trust lets be trusted at all; a block
	 * list trusts nobody, nor does a sender's domain that takes no
	 * mail. At STARTTLS, fcrdns+spf asks SPF of the PTR
	 * name's domain: the sender's is hidden by TLS. */
	a->trusted =
	        !listed && !no_mail && trust != SIGNALS_TRUST_NO &&
	        (allowed || (trust == SIGNALS_TRUST_FCRDNS && fcrdns_ok) ||
	         (trust == SIGNALS_TRUST_FCRDNS_SPF && fcrdns_ok &&
	          (tls ? ptr_spf_pass : spf_known && spf->result == SPF_PASS)));
}

const char *
signals_trust_name(uint8_t trust)
{
	return trust == SIGNALS_TRUST_FCRDNS       ? "fcrdns"
	       : trust == SIGNALS_TRUST_FCRDNS_SPF ? "fcrdns+spf"
	                                           : "no";
}
