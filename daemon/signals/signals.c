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
#include "org_domain.h"
#include "rdns_shape.h"
#include "sender_domain.h"
#include "spf_check.h"
#include "resolver.h"
#include "signals.h"
#include "strbuf.h"
#include "trust.h"

struct signals {
	struct loop *loop;
	struct signals_config cfg; /* its own (signals_reconfigure) */
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
	char spf_sender[sizeof("postmaster@") + ORG_DOMAIN_MAX];
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
	/* organizational domains (org_domain.h), for trust: the PTR
	 * name's; the SPF's domain's and its deciding record's */
	char ptr_org[ORG_DOMAIN_MAX];
	char spf_domain_org[ORG_DOMAIN_MAX], spf_match_org[ORG_DOMAIN_MAX];
};

/* The PTR patterns' file, or NULL for none: the shipped one missing (a
 * build run where it stands, not installed) is said, not fatal; one the
 * admin named must be there. */
const char *
signals_patterns_shipped(void)
{
	return GREYGATE_DATADIR "/dynamic-rdns";
}

static const char *
patterns_path(const struct signals_config *cfg)
{
	const char *path = cfg->rdns_patterns;

	if (!path[0])
		return NULL;
	if (!strcmp(path, signals_patterns_shipped()) &&
	    access(path, F_OK) < 0 &&
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
signals_new(struct loop *loop, const struct signals_config *cfg, char *err,
            size_t len)
{
	struct signals *s = calloc(1, sizeof(*s));
	struct resolver_config rc = {.servers = cfg->dns_servers};

	if (!s) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	s->loop = loop;
	s->cfg = *cfg;
	rc.servers = s->cfg.dns_servers; /* (its own copy, as the resolver
	                                    keeps the pointer) */
	if (dnsbl_sites_parse(cfg->dnsbl_sites, &s->dnsbl, err, len) < 0) {
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

int
signals_open(struct loop *loop, const struct signals_config *cfg,
             bool door_asks, struct signals **out, char *err)
{
	char why[400];

	*out = NULL;
	if (!cfg->lookups)
		return 0;
	*out = signals_new(loop, cfg, why, sizeof(why));
	if (!*out) {
		snprintf(err, 512, "[signals]: %s", why);
		return -EINVAL;
	}
	log_info("signals: FCrDNS, the PTR's shape and SPF looked up for each "
	         "tarpit client%s (DNS: %s; a decision waits %u ms at most; "
	         "trust %s)",
	         door_asks ? " and each policy door request" : "",
	         cfg->dns_servers[0] ? cfg->dns_servers : "the system's",
	         cfg->budget_ms, signals_trust_name(cfg->trust));
	return 0;
}

void
signals_reconfigure(struct signals *s, const struct signals_config *cfg)
{
	/* (what needs a restart, a reload keeps: the resolver's servers,
	 * the patterns and the DNS lists stay as they were read) */
	if (s)
		s->cfg = *cfg;
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
	org_domain(a->name, ss->ptr_org, sizeof(ss->ptr_org));
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
	org_domain(a->domain, ss->spf_domain_org, sizeof(ss->spf_domain_org));
	if (a->matched)
		org_domain(a->match_domain, ss->spf_match_org,
		           sizeof(ss->spf_match_org));
	else
		ss->spf_match_org[0] = 0;
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
	bool ask = ss->s->cfg.sender_domain &&
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
 * that name's organizational domain (mx7.sender.test: sender.test;
 * mail-x.outbound.protection.outlook.com: outlook.com), the domain that
 * named the host, as fcrdns+spf asks it of the sender's. */
static void
start_tls_spf(struct session_signals *ss)
{
	static const char local[] = "postmaster@";
	char sender[sizeof(local) + sizeof(ss->ptr_domain)];

	ss->ptr_domain[0] = 0;
	if (!ss->known || ss->fcrdns.result != FCRDNS_CONFIRMED ||
	    ss->dynamic || ss->s->cfg.trust != SIGNALS_TRUST_FCRDNS_SPF ||
	    !ss->ptr_org[0])
		return;
	snprintf(ss->ptr_domain, sizeof(ss->ptr_domain), "%s", ss->ptr_org);
	snprintf(sender, sizeof(sender), "%s%s", local, ss->ptr_domain);
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
	                ss, &ss->dnsbl) < 0) {
		/* (none: nothing to wait for; no memory: none answered) */
		ss->dnsbl_known = true;
		ss->dnsbl_answer.incomplete = s->dnsbl.n > 0;
	}
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

	/* (a resolver no server answers: at once, with what is known,
	 * rather than the budget each decision; issue 57) */
	if (ready(ss, spf) || resolver_silent(ss->s->resolver)) {
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
	               loop_now_ms(ss->s->loop) + ss->s->cfg.budget_ms);
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

struct trust_rules
signals_rules(const struct signals_config *sc)
{
	return (struct trust_rules){
	        .mode = (enum trust_mode)sc->trust,
	        .suspect_without_fcrdns = sc->suspect_without_fcrdns,
	        .suspect_dynamic_rdns = sc->suspect_dynamic_rdns,
	        .refuse_spf_fail = sc->refuse_spf_fail,
	        .refuse_unknown_sender_domain = sc->refuse_unknown_sender_domain,
	        .pool_spf = sc->pool_spf,
	        .suspicious_delay_sec = sc->suspicious_delay_sec,
	        .dnsbl_threshold = sc->dnsbl_threshold,
	        .dnswl_threshold = sc->dnswl_threshold,
	        .spf_widest = sc->trust_spf_widest,
	};
}

/* What the session's lookups found, as trust's facts. At STARTTLS the
 * SPF asked is the PTR name's domain's (start_tls_spf), the sender's
 * being unseen. */
static struct trust_facts
facts_of(const struct session_signals *ss, const struct grey_attempt *a)
{
	bool tls = a->kind == GREY_ATTEMPT_STARTTLS;
	const struct spf_answer *spf = &ss->spf_answer;
	bool spf_known = ss->spf_known && (!tls || ss->ptr_domain[0]);

	return (struct trust_facts){
	        .tls = tls,
	        .family = ss->family,
	        .ptr_known = ss->known,
	        .fcrdns = ss->fcrdns.result,
	        .dynamic = ss->dynamic,
	        .ptr_org = ss->ptr_org,
	        .lists = ss->s->dnsbl.n > 0,
	        .lists_known = ss->dnsbl_known,
	        .lists_complete = !ss->dnsbl_answer.incomplete,
	        .list_score = ss->dnsbl_answer.score,
	        .spf = {.known = spf_known,
	                .result = spf->result,
	                .domain_org = ss->spf_domain_org,
	                .own_domain = !tls &&
	                              sender_domain_is(a->sender, spf->domain),
	                .matched = spf->matched,
	                .mechanism = spf->match_mechanism,
	                .free_bits = spf->match_free_bits,
	                .match_org = ss->spf_match_org},
	        .helo_valid = helo_shape_valid(a->helo),
	        .sender_domain_known = ss->sd_known,
	        .sender_domain = ss->sd_result,
	};
}

/* The signals' text for the decision's log line (GREY_SIGNALS_MAX
 * bytes): what was found, then what the judgement made of it. */
static void
signals_text(const struct session_signals *ss, const struct trust_facts *f,
             const struct trust_verdict *v, char *buf)
{
	const struct fcrdns_answer *fa = &ss->fcrdns;
	const struct spf_answer *spf = &ss->spf_answer;
	struct strbuf b;

	strbuf_init(&b, buf, GREY_SIGNALS_MAX);
	if (!ss->known)
		strbuf_add(&b, "fcrdns:late");
	else if (fa->result == FCRDNS_CONFIRMED ||
	         fa->result == FCRDNS_UNCONFIRMED)
		strbuf_add(&b, "fcrdns:%s:%.200s;rdns:%s",
		           fcrdns_result_name(fa->result), fa->name,
		           ss->dynamic ? "dynamic" : "plain");
	else
		strbuf_add(&b, "fcrdns:%s", fcrdns_result_name(fa->result));
	if (f->tls && !ss->ptr_domain[0])
		strbuf_add(&b, ";spf:unseen");
	else if (f->tls && !ss->spf_known)
		strbuf_add(&b, ";ptr-spf:late");
	else if (f->tls)
		strbuf_add(&b, ";ptr-spf:%s:%.120s",
		           spf_result_name(spf->result), ss->ptr_domain);
	else if (!ss->spf_known)
		strbuf_add(&b, ";spf:late");
	else if (spf->domain[0])
		strbuf_add(&b, ";spf:%s:%.120s", spf_result_name(spf->result),
		           spf->domain);
	else
		strbuf_add(&b, ";spf:%s", spf_result_name(spf->result));
	if (f->lists && !ss->dnsbl_known)
		strbuf_add(&b, ";dnsbl:late");
	else if (f->lists && ss->dnsbl_answer.listed[0])
		strbuf_add(&b, ";dnsbl:%s", ss->dnsbl_answer.listed);
	if (!f->helo_valid)
		strbuf_add(&b, ";helo:bad");
	/* the sender's domain: said when it takes no mail, or when that
	 * could not be known */
	if (!f->tls && ss->sd_domain[0] &&
	    (!ss->sd_known || ss->sd_result != SENDER_DOMAIN_MAIL))
		strbuf_add(&b, ";sender-domain:%s:%.120s",
		           ss->sd_known ? sender_domain_result_name(ss->sd_result)
		                        : "late",
		           ss->sd_domain);
	/* what kept trust away where all else would have given it (issue
	 * 56's rules) */
	if (v->why == TRUST_WHY_LISTS_SILENT || v->why == TRUST_WHY_SPF_ALL ||
	    v->why == TRUST_WHY_SPF_WIDE || v->why == TRUST_WHY_UNRELATED)
		strbuf_add(&b, ";untrusted:%s", trust_why_name(v->why));
	if (v->suspicious)
		strbuf_add(&b, ";suspicious");
	if (v->pooled)
		strbuf_add(&b, ";pooled");
	/* (decided without waiting: no DNS server answers, issue 57) */
	if (resolver_silent(ss->s->resolver))
		strbuf_add(&b, ";dns:silent");
}

void
signals_apply(const struct session_signals *ss, struct grey_attempt *a,
              char *buf)
{
	struct trust_rules rules = signals_rules(&ss->s->cfg);
	struct trust_facts facts = facts_of(ss, a);
	struct trust_verdict v;

	trust_judge(&rules, &facts, &v);
	signals_text(ss, &facts, &v, buf);
	a->signals = buf;
	a->trusted = v.trusted;
	a->delay_sec = v.delay_sec;
	a->refuse_spf = v.refuse_spf;
	a->refuse_sender = v.refuse_sender;
	a->pooled = v.pooled;
}

const char *
signals_trust_name(uint8_t trust)
{
	return trust_mode_name((enum trust_mode)trust);
}
