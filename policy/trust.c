// SPDX-License-Identifier: GPL-2.0-or-later
/* The judgement of an attempt's DNS facts (trust.h). */
#include <stdbool.h>
#include <strings.h>
#include <sys/socket.h>

#include "trust.h"

/* a and b the same organizational domain (neither empty) */
static bool
same_org(const char *a, const char *b)
{
	return a && b && a[0] && !strcasecmp(a, b);
}

/* Why the SPF pass does not trust, or TRUST_WHY_TRUSTED. */
static enum trust_why
spf_why(const struct trust_rules *r, const struct trust_facts *f)
{
	const struct trust_spf *spf = &f->spf;
	unsigned family_bits = f->family == AF_INET6 ? 128 : 32;
	unsigned widest = f->family == AF_INET6 ? r->spf_widest + 16u
	                                        : r->spf_widest;

	if (!spf->known || spf->result != SPF_PASS)
		return TRUST_WHY_SPF;
	if (!spf->matched || spf->mechanism == SPF_ALL ||
	    spf->free_bits >= family_bits)
		return TRUST_WHY_SPF_ALL;
	if (widest > family_bits || spf->free_bits > family_bits - widest)
		return TRUST_WHY_SPF_WIDE;
	return TRUST_WHY_TRUSTED;
}

void
trust_judge(const struct trust_rules *r, const struct trust_facts *f,
            struct trust_verdict *out)
{
	int score = f->lists_known ? f->list_score : 0;
	bool listed = score >= (int)r->dnsbl_threshold;
	bool allowed = r->dnswl_threshold && score <= -(int)r->dnswl_threshold;
	bool fcrdns_ok = f->ptr_known && f->fcrdns == FCRDNS_CONFIRMED &&
	                 !f->dynamic;
	/* What is only missing (no PTR, a name not resolving back) or
	 * generic (a provider's name for the address: hosting and small
	 * offices' servers carry them too) is common among small real
	 * servers and says little by itself: it keeps trust away, not the
	 * plain delay, unless the site says. */
	bool no_fcrdns = f->ptr_known && (f->fcrdns == FCRDNS_NO_PTR ||
	                                  f->fcrdns == FCRDNS_UNCONFIRMED);
	/* At STARTTLS no sender is seen (what follows is in TLS): its
	 * domain and SPF have no part but trust's (the PTR name's) */
	bool sender_spf = !f->tls && f->spf.known;
	bool no_mail = !f->tls && f->sender_domain_known &&
	               (f->sender_domain == SENDER_DOMAIN_NONE ||
	                f->sender_domain == SENDER_DOMAIN_NULL_MX);
	bool lists_answered = !f->lists || (f->lists_known && f->lists_complete);
	enum trust_why spf = spf_why(r, f);
	/* the pass's record, or the sender's domain, is the PTR name's */
	bool related = same_org(f->spf.match_org, f->ptr_org) ||
	               same_org(f->spf.domain_org, f->ptr_org);

	out->suspicious =
	        !allowed &&
	        ((f->ptr_known && f->dynamic && r->suspect_dynamic_rdns) ||
	         (no_fcrdns && r->suspect_without_fcrdns) ||
	         (sender_spf && (f->spf.result == SPF_FAIL ||
	                         f->spf.result == SPF_SOFTFAIL)) ||
	         listed || !f->helo_valid || no_mail);
	out->delay_sec = out->suspicious ? r->suspicious_delay_sec : 0;
	out->refuse_spf = r->refuse_spf_fail && sender_spf &&
	                  f->spf.result == SPF_FAIL && !allowed;
	out->refuse_sender = !r->refuse_unknown_sender_domain || !no_mail ||
	                                     allowed
	                             ? GREY_REASON_NONE
	                     : f->sender_domain == SENDER_DOMAIN_NULL_MX
	                             ? GREY_REASON_SENDER_NULL_MX
	                             : GREY_REASON_SENDER_DOMAIN;
	/* Pooled: a client fcrdns+spf would trust, whatever trust says
	 * (issue 56: pooling anyone whose sender's SPF passed let a
	 * campaign repeating sender and recipient from other addresses
	 * through; bench/effectiveness.sh's adv-hosting, a narrow record
	 * of its own naming hosts of a hoster, did so unrelated) */
	out->pooled = r->pool_spf && sender_spf && f->spf.own_domain &&
	              fcrdns_ok && !listed && !no_mail && lists_answered &&
	              spf == TRUST_WHY_TRUSTED && related;

	/* An allow list trusts whom trust lets be trusted at all; a block
	 * list trusts nobody, nor does a sender's domain that takes no
	 * mail, nor anything while a list is silent (its listing unknown) */
	out->trusted = false;
	if (r->mode == TRUST_MODE_NO)
		out->why = TRUST_WHY_OFF;
	else if (listed)
		out->why = TRUST_WHY_LISTED;
	else if (no_mail)
		out->why = TRUST_WHY_NO_MAIL;
	else if (!lists_answered)
		out->why = TRUST_WHY_LISTS_SILENT;
	else if (allowed)
		out->why = TRUST_WHY_ALLOWED;
	else if (!fcrdns_ok)
		out->why = TRUST_WHY_NO_FCRDNS;
	else if (r->mode == TRUST_MODE_FCRDNS)
		out->why = TRUST_WHY_TRUSTED;
	else if (spf != TRUST_WHY_TRUSTED)
		out->why = spf;
	else if (!related)
		out->why = TRUST_WHY_UNRELATED;
	else
		out->why = TRUST_WHY_TRUSTED;
	out->trusted = out->why == TRUST_WHY_TRUSTED ||
	               out->why == TRUST_WHY_ALLOWED;
}

const char *
trust_why_name(enum trust_why why)
{
	static const char *const names[] = {
	        [TRUST_WHY_TRUSTED] = "trusted",
	        [TRUST_WHY_ALLOWED] = "allowed",
	        [TRUST_WHY_OFF] = "off",
	        [TRUST_WHY_LISTED] = "listed",
	        [TRUST_WHY_NO_MAIL] = "no-mail",
	        [TRUST_WHY_LISTS_SILENT] = "lists-silent",
	        [TRUST_WHY_NO_FCRDNS] = "no-fcrdns",
	        [TRUST_WHY_SPF] = "spf",
	        [TRUST_WHY_SPF_ALL] = "spf-all",
	        [TRUST_WHY_SPF_WIDE] = "spf-wide",
	        [TRUST_WHY_UNRELATED] = "unrelated",
	};

	return (unsigned)why < sizeof(names) / sizeof(names[0]) && names[why]
	               ? names[why]
	               : "?";
}

const char *
trust_mode_name(enum trust_mode mode)
{
	return mode == TRUST_MODE_FCRDNS       ? "fcrdns"
	       : mode == TRUST_MODE_FCRDNS_SPF ? "fcrdns+spf"
	                                       : "no";
}
