// SPDX-License-Identifier: GPL-2.0-or-later
/* What each class's senders look like to greygated (sim-int.h): the DNS
 * a client and a message's sender have as the class's shares draw them,
 * judged by greygated's own rules (policy/trust.c), and the questions
 * its resolver would ask, through its own cache in the month's time. */
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "sim-int.h"

/* A draw in 0..99 from bytes and a salt: the same every time for the
 * same address or message (a client's DNS does not change within the
 * month, nor a message's sender). */
uint32_t
sim_draw(const void *p, size_t n, uint64_t salt)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ull ^ salt; /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return (uint32_t)(h % 100);
}

struct sim_view
sim_view_of(const struct sim_workload *w, const struct sim_class *c,
            const struct sim_signals *sig, int32_t fcrdns, int32_t dynamic,
            const struct grey_addr *a, const struct msg *m)
{
	struct sim_view v = {.modelled = sig->lookups && fcrdns >= 0};
	uint32_t ptr = sim_draw(a->bytes, 16, 0);
	uint32_t id[2] = {m->cls, m->idx};

	if (!v.modelled)
		return v;
	/* (one draw: the shares add up, FCrDNS first) */
	v.confirmed = ptr < (uint32_t)fcrdns;
	v.dynamic = !v.confirmed && ptr < (uint32_t)(fcrdns + dynamic);
	v.aligned = sim_draw(a->bytes, 16, 5) < (uint32_t)c->aligned;
	v.listed = sig->dnsbl && sim_draw(a->bytes, 16, 1) < (uint32_t)c->listed;
	v.silent = sig->dnsbl && sim_draw(a->bytes, 16, 6) < (uint32_t)w->dnsbl_silent;
	v.spf_fail = sim_draw(id, sizeof(id), 2) < (uint32_t)c->spf_fail;
	v.spf_pass = !v.spf_fail && sim_draw(id, sizeof(id), 7) < (uint32_t)c->spf_pass;
	v.no_mail = sig->sender_domain &&
	            sim_draw(id, sizeof(id), 3) < (uint32_t)c->no_mail;
	return v;
}

/* The view as greygated's signals would find it (policy/trust.h): the
 * model's names stand for organizational domains ("ptr.example": the
 * PTR name's, "sender.example": the sender's, the same when aligned). */
static struct trust_facts
facts_of(const struct sim_class *c, const struct sim_signals *sig,
         const struct sim_view *v, const struct grey_attempt *at)
{
	static const uint8_t free_bits[] = {[SIM_SPF_NARROW] = 8,
	                                    [SIM_SPF_WIDE] = 24,
	                                    [SIM_SPF_ALL] = 32};
	bool tls = at->kind == GREY_ATTEMPT_STARTTLS;
	const char *ptr_org = v->confirmed || v->dynamic ? "ptr.example" : "";
	/* the passing record's: the PTR name's own when aligned */
	const char *record_org = v->aligned ? ptr_org : "sender.example";

	return (struct trust_facts){
	        .tls = tls,
	        .family = at->client.family,
	        .ptr_known = true,
	        /* (a dynamic-looking name is forward-confirmed in the model:
	         * only its shape counts against it, as in greygated) */
	        .fcrdns = v->confirmed || v->dynamic ? FCRDNS_CONFIRMED
	                                             : FCRDNS_NO_PTR,
	        .dynamic = v->dynamic,
	        .ptr_org = ptr_org,
	        .lists = sig->dnsbl,
	        .lists_known = true,
	        .lists_complete = !v->silent,
	        .list_score = v->listed && !v->silent
	                              ? (int)sig->rules.dnsbl_threshold
	                              : 0,
	        /* (at STARTTLS the PTR name's domain's SPF: the model takes
	         * it to pass as the class's senders' does, by the same term,
	         * when the name is aligned) */
	        .spf = {.known = true,
	                .result = v->spf_fail   ? SPF_FAIL
	                          : v->spf_pass ? SPF_PASS
	                                        : SPF_NONE,
	                .domain_org = tls ? ptr_org : "sender.example",
	                .own_domain = !tls,
	                .matched = v->spf_pass || v->spf_fail,
	                .mechanism = v->spf_fail || c->spf_by == SIM_SPF_ALL
	                                     ? SPF_ALL
	                                     : SPF_IP4,
	                .free_bits = v->spf_fail ? 32 : free_bits[c->spf_by],
	                .match_org = record_org},
	        .helo_valid = true,
	        .sender_domain_known = sig->sender_domain,
	        .sender_domain = v->no_mail ? SENDER_DOMAIN_NONE
	                                    : SENDER_DOMAIN_MAIL,
	};
}

/* What the signals say of a client of c at an attempt (with lookups), by
 * greygated's own judgement (policy/trust.c): trusted (passed now),
 * suspicious (a longer delay), pooled, or refused at RCPT (SPF fail, a
 * sender's domain without mail, when the settings say). */
void
sim_apply_signals(const struct sim_class *c, const struct sim_signals *sig,
                  const struct sim_view *v, struct grey_attempt *at)
{
	struct trust_facts f;
	struct trust_verdict verdict;

	if (!v->modelled)
		return;
	f = facts_of(c, sig, v, at);
	if (f.tls && !v->aligned) /* (no SPF to ask of the PTR's domain) */
		f.spf.known = false;
	trust_judge(&sig->rules, &f, &verdict);
	at->trusted = verdict.trusted;
	at->delay_sec = verdict.delay_sec;
	at->refuse_spf = verdict.refuse_spf;
	at->refuse_sender = verdict.refuse_sender;
	at->pooled = verdict.pooled;
}

/* --- what greygated's resolver would ask (with lookups) --- */

static void
dns_ask(struct sim_dns *dns, enum dns_type type, const char *name,
        bool exists, int64_t now)
{
	struct dns_answer a = {
	        .status = exists ? DNS_OK : DNS_NXDOMAIN,
	        .type = type,
	        .ttl = exists ? SIM_DNS_TTL : SIM_DNS_NEGATIVE_TTL};
	uint64_t now_ms = (uint64_t)(now - SIM_EPOCH) * 1000;

	if (dns_cache_get(dns->cache, type, name, now_ms)) {
		dns->cached++;
		return;
	}
	dns->asked++;
	(void)dns_cache_put(dns->cache, name, &a, SIM_DNS_TTL, now_ms);
}

/* A session's questions at the tarpit, as signals.c asks them: the PTR
 * from its start, and the name's address when it has one (the model:
 * a confirmed client's name is its own); at its first RCPT, the sender
 * domain's SPF record and its MX; at STARTTLS, a confirmed client's
 * name's domain's SPF (with trust = fcrdns+spf). (SPF's includes and
 * DNS lists are not modelled: one TXT a domain, no lists, the
 * default.) */
void
sim_dns_session(struct sim_dns *dns, const struct sim_signals *sig,
                const struct sim_class *c, const struct grey_addr *a,
                const struct sim_view *v, bool tls, const char *from,
                int64_t now)
{
	char reverse[DNS_REVERSE_MAX], name[DNS_REVERSE_MAX + 8];
	const char *domain = strchr(from, '@');
	/* (the model: a dynamic-looking name is its own, as a confirmed
	 * one; no PTR and a name not resolving back are one share, asked
	 * as no PTR) */
	bool named = v->confirmed || v->dynamic;

	dns_reverse_name(a->family, a->bytes, reverse);
	dns_ask(dns, DNS_PTR, reverse, named, now);
	if (named) {
		snprintf(name, sizeof(name), "h.%s", reverse);
		dns_ask(dns, a->family == AF_INET ? DNS_A : DNS_AAAA, name,
		        true, now);
	}
	if (tls) {
		if (v->confirmed && sig->rules.mode == TRUST_MODE_FCRDNS_SPF)
			dns_ask(dns, DNS_TXT, c->name, true, now);
		return;
	}
	if (domain) {
		dns_ask(dns, DNS_TXT, domain + 1, true, now);
		dns_ask(dns, DNS_MX, domain + 1, !v->no_mail, now);
	}
}
