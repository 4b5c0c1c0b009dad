/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Who is passed at once, who waits longer, who is refused, from what DNS
 * said of an attempt (issue 56): a pure judgement over plain facts. The
 * daemon's signals (daemon/signals/) fill the facts from its lookups,
 * the simulator (tools/sim/) from its model of senders: both are judged
 * by the same rules.
 *
 * Trust is what a bot cannot set up cheaply (issue 56's attacks):
 * - a forward-confirmed PTR name that does not look dynamic;
 * - every configured DNS list answered, none listing the client;
 * - with fcrdns+spf, SPF pass by a term that names the client narrowly
 *   (never `all`, never a net wider than [signals] trust_spf_widest)
 *   in a record of the PTR name's own organizational domain, or of the
 *   sender's domain where that is the PTR name's too: one record
 *   (`+all`, a wide net, a forged domain's lazy include) is not enough.
 * Pooling (a triplet keyed by the sender's domain) asks the same of the
 * sender's own domain's pass, whatever trust says: it counts where trust
 * does not pass at once (trust = no or fcrdns, a client that guessed at
 * recipients). */
#ifndef GREYGATE_TRUST_H
#define GREYGATE_TRUST_H

#include <stdbool.h>
#include <stdint.h>

#include "fcrdns.h"
#include "policy.h"
#include "sender_domain.h"
#include "spf_record.h"

/* [signals] trust. */
enum trust_mode {
	TRUST_MODE_NO,         /* nobody: the signals are only logged */
	TRUST_MODE_FCRDNS,     /* FCrDNS, not dynamic-looking */
	TRUST_MODE_FCRDNS_SPF, /* that, and a related narrow SPF pass */
};

/* The site's rules ([signals]). */
struct trust_rules {
	enum trust_mode mode;
	bool suspect_without_fcrdns; /* no PTR, or one not resolving back */
	bool suspect_dynamic_rdns;   /* a dynamic-looking PTR name */
	bool refuse_spf_fail;
	bool refuse_unknown_sender_domain;
	bool pool_spf;
	uint32_t suspicious_delay_sec;
	uint32_t dnsbl_threshold; /* a score of this or more: listed */
	uint32_t dnswl_threshold; /* of minus this or less: allowed (0:
				     never) */
	/* the widest IPv4 net (prefix length) an SPF term may name and
	 * still trust; IPv6: this plus 16 */
	uint8_t spf_widest;
};

/* An SPF check's outcome, as the rules need it. */
struct trust_spf {
	bool known;               /* it ended within the budget */
	enum spf_result result;
	const char *domain_org;   /* the domain checked's ("" if none) */
	bool own_domain;          /* ... MAIL FROM's (not a HELO name's) */
	/* the term that decided, when one matched */
	bool matched;
	enum spf_mechanism mechanism;
	uint8_t free_bits;        /* how wide: all's 32 or 128, ip4:x/24's 8 */
	const char *match_org;    /* the record that holds it (an include's) */
};

/* What DNS said of one attempt. Names are organizational domains
 * (policy/org_domain.h) where they are compared. */
struct trust_facts {
	bool tls;        /* a STARTTLS: no sender seen (spf: the PTR
			    name's organizational domain's) */
	int family;      /* AF_INET or AF_INET6 */
	/* the PTR name */
	bool ptr_known;  /* the lookup ended within the budget */
	enum fcrdns_result fcrdns;
	bool dynamic;    /* the name looks like an access line's */
	const char *ptr_org; /* its organizational domain ("" none) */
	/* DNS lists */
	bool lists;          /* the site names some */
	bool lists_known;    /* they ended within the budget */
	bool lists_complete; /* ... every one answered */
	int list_score;
	struct trust_spf spf;
	bool helo_valid;     /* a name or an address literal */
	bool sender_domain_known;
	enum sender_domain_result sender_domain;
};

/* Why the client is trusted, or the first reason it is not. */
enum trust_why {
	TRUST_WHY_TRUSTED,
	TRUST_WHY_ALLOWED,   /* an allow list's score */
	TRUST_WHY_OFF,       /* trust = no */
	TRUST_WHY_LISTED,
	TRUST_WHY_NO_MAIL,   /* the sender's domain takes no mail */
	TRUST_WHY_LISTS_SILENT, /* a DNS list did not answer */
	TRUST_WHY_NO_FCRDNS, /* none, not confirmed, late or dynamic */
	TRUST_WHY_SPF,       /* no SPF pass (or it came late) */
	TRUST_WHY_SPF_ALL,   /* the pass was `all`'s (or an exists: for
				every address) */
	TRUST_WHY_SPF_WIDE,  /* ... a net wider than spf_widest */
	TRUST_WHY_UNRELATED, /* ... a record not of the PTR name's domain */
};

struct trust_verdict {
	bool trusted;        /* pass it now */
	enum trust_why why;
	bool pooled;         /* its triplet keyed by its sender's domain */
	bool suspicious;     /* it waits delay_sec */
	uint32_t delay_sec;  /* 0 when not suspicious */
	bool refuse_spf;     /* 550 at the tarpit: SPF fail */
	/* the sender's domain takes no mail and the site refuses it:
	 * GREY_REASON_SENDER_DOMAIN or _SENDER_NULL_MX (NONE: not) */
	enum grey_reason refuse_sender;
};

/* trust_judge - the rules applied to the facts. Pure. */
void trust_judge(const struct trust_rules *r, const struct trust_facts *f,
                 struct trust_verdict *out);

/* trust_why_name - "trusted", "spf-all", "unrelated", ... */
const char *trust_why_name(enum trust_why why);

/* trust_mode_name - "no", "fcrdns", "fcrdns+spf". */
const char *trust_mode_name(enum trust_mode mode);

#endif
