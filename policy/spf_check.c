// SPDX-License-Identifier: GPL-2.0-or-later
/* SPF's check_host() over the resolver (spf_check.h): a stack of frames
 * (the record being evaluated, and those that included it), one DNS
 * question at a time; an answer resumes the evaluation where it waited.
 * Answers may come inside resolver_ask (from the cache): the evaluation
 * is a loop that goes on while nothing is awaited, never a recursion. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "spf_check.h"

/* include nesting, at most (the lookup limit ends it sooner). */
#define DEPTH_MAX (SPF_LOOKUPS_MAX + 1)
/* MX and PTR names followed, at most (section 4.6.4). */
#define NAMES_MAX 10

struct frame {
	char domain[256];
	struct spf_record rec;
	size_t next;     /* the term being evaluated */
	bool fetched;    /* rec holds the domain's record */
	bool redirected; /* reached by redirect=: no record is a permerror */
};

/* What the question awaited is for. */
enum asking { ASK_NONE, ASK_RECORD, ASK_ADDRS, ASK_MX, ASK_MX_ADDRS,
	      ASK_PTR, ASK_PTR_ADDRS, ASK_EXISTS };

struct spf_check {
	struct resolver *r;
	int family;
	uint8_t ip[16];
	char sender[512], local[256], sender_domain[256], helo[256];
	spf_fn *fn;
	void *ctx;
	struct frame stack[DEPTH_MAX];
	int depth;
	unsigned lookups, voids;
	/* the question awaited, and its answer once it came */
	enum asking asking;
	struct resolver_query *q;
	bool waiting, running, done;
	struct dns_answer answer;
	/* mx and ptr: the names to follow, the one being asked */
	char *names[NAMES_MAX];
	size_t nnames, name_at;
	char target[256]; /* the expanded domain of the term */
	struct spf_answer result;
};

static struct frame *
top(struct spf_check *c)
{
	return &c->stack[c->depth - 1];
}

static void
drop_names(struct spf_check *c)
{
	for (size_t i = 0; i < c->nnames; i++)
		free(c->names[i]);
	c->nnames = c->name_at = 0;
}

static void
finish(struct spf_check *c, enum spf_result r, const char *why)
{
	if (c->done)
		return;
	c->done = true;
	c->result.result = r;
	c->result.lookups = c->lookups;
	snprintf(c->result.why, sizeof(c->result.why), "%s", why);
}

static void
on_answer(const struct dns_answer *a, bool cached, void *ctx)
{
	struct spf_check *c = ctx;

	(void)cached;
	c->q = NULL;
	dns_answer_clear(&c->answer);
	if (dns_answer_copy(&c->answer, a) < 0) {
		c->answer.n = 0;
		c->answer.status = DNS_SERVFAIL; /* (no memory: temperror) */
	}
	c->waiting = false;
}

static void on_answer_resume(const struct dns_answer *a, bool cached,
                             void *ctx);

/* One question; the evaluation waits for it (or goes on at once when
 * the cache answered). */
static void
ask(struct spf_check *c, const char *name, enum dns_type type,
    enum asking why)
{
	c->asking = why;
	c->waiting = true;
	if (resolver_ask(c->r, name, type, on_answer_resume, c, &c->q) < 0) {
		c->waiting = false;
		c->answer.status = DNS_SERVFAIL;
		c->answer.n = 0;
	}
}

static enum dns_type
addr_type(const struct spf_check *c)
{
	return c->family == AF_INET ? DNS_A : DNS_AAAA;
}

/* Is ip inside net/bits? */
static bool
in_net(const uint8_t *ip, const uint8_t *net, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	if (memcmp(ip, net, whole))
		return false;
	return !rest ||
	       !((ip[whole] ^ net[whole]) & (uint8_t)(0xff << (8 - rest)));
}

static bool
addrs_match(const struct spf_check *c, const struct dns_answer *a,
            const struct spf_term *t)
{
	unsigned bits = c->family == AF_INET ? t->cidr4 : t->cidr6;

	for (size_t i = 0; i < a->n; i++)
		if (in_net(c->ip, a->rec[i].addr, bits))
			return true;
	return false;
}

static struct spf_macro_env
env_of(const struct spf_check *c, const char *domain)
{
	return (struct spf_macro_env){
	        .sender = c->sender,
	        .local = c->local,
	        .sender_domain = c->sender_domain,
	        .domain = domain,
	        .family = c->family,
	        .ip = c->ip,
	        .helo = c->helo,
	        .ptr_name = NULL,
	};
}

/* A name DNS cannot ask (section 4.3): an empty label not at the end, a
 * label over 63 octets, over 253 in all, or a single label. (c-ares
 * refused to ask and the check ended in temperror: issue 56.) */
static bool
name_malformed(const char *name)
{
	size_t n = strlen(name), label = 0;

	if (n && name[n - 1] == '.')
		n--;
	if (!n || n > 253 || !memchr(name, '.', n))
		return true;
	for (size_t i = 0; i < n; i++) {
		if (name[i] != '.') {
			if (++label > 63)
				return true;
			continue;
		}
		if (!label)
			return true;
		label = 0;
	}
	return !label;
}

/* The term's target domain, expanded. Return: false (a permerror). */
static bool
target_of(struct spf_check *c, const char *spec)
{
	struct frame *f = top(c);
	struct spf_macro_env env = env_of(c, f->domain);

	if (!spec) {
		snprintf(c->target, sizeof(c->target), "%s", f->domain);
		return true;
	}
	if (spf_macro_expand(spec, &env, c->target, sizeof(c->target)) < 0) {
		finish(c, SPF_PERMERROR, "a macro that cannot be expanded");
		return false;
	}
	return true;
}

/* A mechanism or modifier that asks DNS: counted. Return: false past the
 * limit (a permerror). */
static bool
count_lookup(struct spf_check *c)
{
	if (++c->lookups > SPF_LOOKUPS_MAX) {
		finish(c, SPF_PERMERROR, "more than 10 DNS lookups");
		return false;
	}
	return true;
}

/* A DNS answer a mechanism asked for: a temperror ends the check; an
 * answer with nothing counts as a void lookup. Return: false when the
 * check ended. */
static bool
usable(struct spf_check *c, bool may_be_void)
{
	if (c->answer.status == DNS_TIMEOUT ||
	    c->answer.status == DNS_SERVFAIL || c->answer.status == DNS_BAD) {
		finish(c, SPF_TEMPERROR, "a DNS lookup failed");
		return false;
	}
	if (may_be_void && c->answer.n == 0 &&
	    ++c->voids > SPF_VOID_LOOKUPS_MAX) {
		finish(c, SPF_PERMERROR, "more than 2 void DNS lookups");
		return false;
	}
	return true;
}

/* The term at f->next matched: its qualifier is the frame's result. */
static void frame_result(struct spf_check *c, enum spf_result r,
                         const char *why);

static void
term_text(const struct spf_term *t, char *out, size_t len)
{
	static const char *const names[] = {"all", "include", "a",  "mx",
	                                    "ptr", "ip4",     "ip6", "exists"};

	snprintf(out, len, "%s%s%s", names[t->mechanism],
	         t->domain ? ":" : "", t->domain ? t->domain : "");
}

/* The address bits term t leaves free for the client's family (the
 * spf_answer's match_free_bits). */
static uint8_t
free_bits(const struct spf_check *c, const struct spf_term *t)
{
	unsigned family_bits = c->family == AF_INET ? 32 : 128;
	unsigned cidr = c->family == AF_INET ? t->cidr4 : t->cidr6;

	switch (t->mechanism) {
	case SPF_ALL:
		return (uint8_t)family_bits;
	case SPF_IP4:
	case SPF_IP6:
	case SPF_A:
	case SPF_MX:
		return (uint8_t)(cidr < family_bits ? family_bits - cidr : 0);
	case SPF_EXISTS:
		/* (%{i}, %{ir}...: a name per address, as narrow as a host) */
		return t->domain && strcasestr(t->domain, "%{i") ? 0
		                                                : (uint8_t)family_bits;
	case SPF_PTR:
	case SPF_INCLUDE:
		break;
	}
	return 0;
}

static void
matched(struct spf_check *c)
{
	struct frame *f = top(c);
	const struct spf_term *t = &f->rec.term[f->next];
	char why[200];

	c->result.matched = true;
	c->result.match_mechanism = t->mechanism;
	c->result.match_free_bits = free_bits(c, t);
	snprintf(c->result.match_domain, sizeof(c->result.match_domain), "%s",
	         f->domain);

	term_text(t, why, sizeof(why));
	if (t->mechanism == SPF_IP4 || t->mechanism == SPF_IP6) {
		char a[64];

		inet_ntop(t->mechanism == SPF_IP4 ? AF_INET : AF_INET6, t->addr,
		          a, sizeof(a));
		snprintf(why, sizeof(why), "%s:%s/%u",
		         t->mechanism == SPF_IP4 ? "ip4" : "ip6", a,
		         t->mechanism == SPF_IP4 ? t->cidr4 : t->cidr6);
	}
	frame_result(c, t->qualifier, why);
}

static void
next_term(struct spf_check *c)
{
	top(c)->next++;
}

static void
frame_result(struct spf_check *c, enum spf_result r, const char *why)
{
	struct frame *f;
	char text[200];

	c->depth--;
	if (c->depth == 0) {
		finish(c, r, why);
		return;
	}
	/* An include (section 5.2): a pass matches, fail, softfail and
	 * neutral do not, errors are the check's. */
	f = top(c);
	switch (r) {
	case SPF_PASS:
		snprintf(text, sizeof(text), "include:%.180s",
		         c->stack[c->depth].domain);
		frame_result(c, f->rec.term[f->next].qualifier, text);
		return;
	case SPF_FAIL:
	case SPF_SOFTFAIL:
	case SPF_NEUTRAL:
		/* (the include did not match: what matched in it decided
		 * nothing) */
		c->result.matched = false;
		next_term(c);
		return;
	case SPF_TEMPERROR:
		finish(c, SPF_TEMPERROR, why);
		return;
	case SPF_NONE:
	case SPF_PERMERROR:
		snprintf(text, sizeof(text), "include:%.80s: %.100s",
		         c->stack[c->depth].domain, why);
		finish(c, SPF_PERMERROR, text);
		return;
	}
}

static bool
push_frame(struct spf_check *c, const char *domain, bool redirected)
{
	struct frame *f;

	if (c->depth == DEPTH_MAX) {
		finish(c, SPF_PERMERROR, "more than 10 DNS lookups");
		return false;
	}
	f = &c->stack[c->depth++];
	memset(f, 0, sizeof(*f));
	snprintf(f->domain, sizeof(f->domain), "%s", domain);
	f->redirected = redirected;
	return true;
}

/* The frame's TXT answer: its one SPF record read. */
static void
take_record(struct spf_check *c)
{
	struct frame *f = top(c);
	const char *found = NULL;
	char why[200];

	if (c->answer.status == DNS_TIMEOUT ||
	    c->answer.status == DNS_SERVFAIL || c->answer.status == DNS_BAD) {
		finish(c, SPF_TEMPERROR, "the SPF record's lookup failed");
		return;
	}
	for (size_t i = 0; i < c->answer.n; i++) {
		if (!spf_record_is_spf(c->answer.rec[i].text))
			continue;
		if (found) {
			frame_result(c, SPF_PERMERROR, "two SPF records");
			return;
		}
		found = c->answer.rec[i].text;
	}
	if (!found) {
		frame_result(c, f->redirected ? SPF_PERMERROR : SPF_NONE,
		             "no SPF record");
		return;
	}
	if (spf_record_parse(found, &f->rec, why, sizeof(why)) < 0) {
		frame_result(c, SPF_PERMERROR, why);
		return;
	}
	f->fetched = true;
}

/* The term at f->next, evaluated as far as it can be without waiting. */
static void
evaluate_term(struct spf_check *c)
{
	struct frame *f = top(c);
	const struct spf_term *t = &f->rec.term[f->next];

	switch (t->mechanism) {
	case SPF_ALL:
		matched(c);
		return;
	case SPF_IP4:
	case SPF_IP6:
		if ((t->mechanism == SPF_IP4) == (c->family == AF_INET) &&
		    in_net(c->ip, t->addr,
		           t->mechanism == SPF_IP4 ? t->cidr4 : t->cidr6))
			matched(c);
		else
			next_term(c);
		return;
	case SPF_INCLUDE:
		if (!count_lookup(c) || !target_of(c, t->domain))
			return;
		if (name_malformed(c->target))
			finish(c, SPF_PERMERROR, "include: a name DNS cannot ask");
		else
			push_frame(c, c->target, false);
		return;
	case SPF_A:
	case SPF_MX:
	case SPF_EXISTS:
		if (!count_lookup(c) || !target_of(c, t->domain))
			return;
		/* (a name DNS cannot ask has no address: no match) */
		if (name_malformed(c->target))
			next_term(c);
		else if (t->mechanism == SPF_A)
			ask(c, c->target, addr_type(c), ASK_ADDRS);
		else if (t->mechanism == SPF_MX)
			ask(c, c->target, DNS_MX, ASK_MX);
		else
			ask(c, c->target, DNS_A, ASK_EXISTS);
		return;
	case SPF_PTR: {
		char reverse[DNS_REVERSE_MAX];

		if (!count_lookup(c) || !target_of(c, t->domain))
			return;
		dns_reverse_name(c->family, c->ip, reverse);
		ask(c, reverse, DNS_PTR, ASK_PTR);
		return;
	}
	}
}

/* name is target or one of its subdomains (section 5.5). */
static bool
under(const char *name, const char *target)
{
	size_t n = strlen(name), t = strlen(target);

	return !strcasecmp(name, target) ||
	       (n > t && name[n - t - 1] == '.' && !strcasecmp(name + n - t, target));
}

/* The awaited answer, taken up where the term waited. */
static void
resume(struct spf_check *c)
{
	struct frame *f = top(c);
	const struct spf_term *t = &f->rec.term[f->next];
	enum asking was = c->asking;

	c->asking = ASK_NONE;
	switch (was) {
	case ASK_NONE:
		return;
	case ASK_RECORD:
		take_record(c);
		return;
	case ASK_ADDRS:
	case ASK_EXISTS:
		if (!usable(c, true))
			return;
		if (was == ASK_EXISTS ? c->answer.n > 0 : addrs_match(c, &c->answer, t))
			matched(c);
		else
			next_term(c);
		return;
	case ASK_MX:
	case ASK_PTR:
		/* A PTR lookup that fails does not match; evaluation goes on
		 * (section 5.5; issue 56: it ended the check in temperror) */
		if (was == ASK_PTR && (c->answer.status == DNS_TIMEOUT ||
		                       c->answer.status == DNS_SERVFAIL ||
		                       c->answer.status == DNS_BAD)) {
			next_term(c);
			return;
		}
		if (!usable(c, true))
			return;
		if (was == ASK_MX && c->answer.n > NAMES_MAX) {
			finish(c, SPF_PERMERROR, "more than 10 MX names");
			return;
		}
		drop_names(c);
		for (size_t i = 0; i < c->answer.n && c->nnames < NAMES_MAX; i++)
			if ((c->names[c->nnames] = strdup(c->answer.rec[i].text)))
				c->nnames++;
		break;
	case ASK_MX_ADDRS:
		if (!usable(c, false))
			return;
		if (addrs_match(c, &c->answer, t)) {
			drop_names(c);
			matched(c);
			return;
		}
		c->name_at++;
		break;
	case ASK_PTR_ADDRS:
		/* a name that does not resolve back is skipped (5.5) */
		if (c->answer.status == DNS_OK &&
		    addrs_match(c, &c->answer,
		                &(struct spf_term){.cidr4 = 32, .cidr6 = 128}) &&
		    under(c->names[c->name_at], c->target)) {
			drop_names(c);
			matched(c);
			return;
		}
		c->name_at++;
		break;
	}
	/* the next MX or PTR name's addresses, or the next term */
	if (c->name_at < c->nnames) {
		ask(c, c->names[c->name_at], addr_type(c),
		    was == ASK_MX || was == ASK_MX_ADDRS ? ASK_MX_ADDRS
		                                         : ASK_PTR_ADDRS);
		return;
	}
	drop_names(c);
	next_term(c);
}

static void
step(struct spf_check *c)
{
	struct frame *f = top(c);

	if (c->asking != ASK_NONE) {
		resume(c);
		return;
	}
	if (!f->fetched) {
		ask(c, f->domain, DNS_TXT, ASK_RECORD);
		return;
	}
	if (f->next < f->rec.nterms) {
		evaluate_term(c);
		return;
	}
	/* No term matched: redirect= (section 6.1), or neutral. */
	if (f->rec.redirect) {
		if (!count_lookup(c) || !target_of(c, f->rec.redirect))
			return;
		if (name_malformed(c->target)) {
			finish(c, SPF_PERMERROR, "redirect: a name DNS cannot ask");
			return;
		}
		memset(f, 0, sizeof(*f));
		snprintf(f->domain, sizeof(f->domain), "%s", c->target);
		f->redirected = true;
		return;
	}
	frame_result(c, SPF_NEUTRAL, "no term matched");
}

static void
release(struct spf_check *c)
{
	resolver_cancel(c->q);
	drop_names(c);
	dns_answer_clear(&c->answer);
	free(c);
}

/* Steps until a question is awaited or the check is over; told and
 * freed when over. */
static void
run(struct spf_check *c)
{
	c->running = true;
	while (!c->done && !c->waiting)
		step(c);
	c->running = false;
	if (c->done) {
		c->fn(&c->result, c->ctx);
		release(c);
	}
}

static void
on_answer_resume(const struct dns_answer *a, bool cached, void *ctx)
{
	struct spf_check *c = ctx;

	on_answer(a, cached, ctx);
	if (!c->running)
		run(c);
}

int
spf_check_start(struct resolver *r, int family, const uint8_t *ip,
                const char *sender, const char *helo, spf_fn *fn, void *ctx,
                struct spf_check **out)
{
	struct spf_check *c = calloc(1, sizeof(*c));
	const char *at;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->r = r;
	c->family = family;
	memcpy(c->ip, ip, family == AF_INET ? 4 : 16);
	/* An IPv4-mapped IPv6 client is an IPv4 one (section 5): ip4, a and
	 * mx's A records, %{i} as four octets. */
	if (family == AF_INET6 && !memcmp(ip, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12)) {
		c->family = AF_INET;
		memcpy(c->ip, ip + 12, 4);
	}
	c->fn = fn;
	c->ctx = ctx;
	snprintf(c->helo, sizeof(c->helo), "%s", helo ? helo : "");
	if (sender && *sender)
		snprintf(c->sender, sizeof(c->sender), "%s", sender);
	else
		snprintf(c->sender, sizeof(c->sender), "postmaster@%s", c->helo);
	at = strrchr(c->sender, '@');
	snprintf(c->local, sizeof(c->local), "%.*s",
	         at ? (int)(at - c->sender) : 0, c->sender);
	if (!c->local[0]) /* (section 4.3: no local-part, "postmaster") */
		snprintf(c->local, sizeof(c->local), "postmaster");
	snprintf(c->sender_domain, sizeof(c->sender_domain), "%s",
	         at ? at + 1 : "");
	snprintf(c->result.domain, sizeof(c->result.domain), "%s",
	         c->sender_domain);
	/* A domain that cannot be one: none (section 4.3). */
	if (name_malformed(c->sender_domain)) {
		finish(c, SPF_NONE, "no domain to check");
	} else {
		push_frame(c, c->sender_domain, false);
	}
	c->running = true;
	while (!c->done && !c->waiting)
		step(c);
	c->running = false;
	if (c->done) {
		fn(&c->result, ctx);
		release(c);
		return 0;
	}
	*out = c;
	return 0;
}

void
spf_check_cancel(struct spf_check *c)
{
	if (c)
		release(c);
}
