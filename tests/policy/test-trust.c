// SPDX-License-Identifier: GPL-2.0-or-later
/* Trust's judgement (policy/trust.c), rule by rule: a table of facts,
 * each a provider's server with one thing changed, and the verdict due;
 * issue 56's attacks among them (v=spf1 +all on a bot's own domain, a
 * forged domain's wide record, a PTR name of another domain, a silent
 * DNS list). Then organizational domains (policy/org_domain.c, libpsl). */
#include <string.h>
#include <sys/socket.h>

#include "check.h"
#include "org_domain.h"
#include "trust.h"

/* The defaults of [signals]. */
static const struct trust_rules defaults = {
        .mode = TRUST_MODE_FCRDNS_SPF,
        .pool_spf = true,
        .suspicious_delay_sec = 900,
        .dnsbl_threshold = 1,
        .dnswl_threshold = 1,
        .spf_widest = 15,
};

/* mail-yw1-f171.google.com sending for gmail.com: its address in
 * _netblocks.google.com's ip4:209.85.128.0/17, no DNS lists named. */
static struct trust_facts
provider(void)
{
	return (struct trust_facts){
	        .family = AF_INET,
	        .ptr_known = true,
	        .fcrdns = FCRDNS_CONFIRMED,
	        .ptr_org = "google.com",
	        .spf = {.known = true,
	                .result = SPF_PASS,
	                .domain_org = "gmail.com",
	                .own_domain = true,
	                .matched = true,
	                .mechanism = SPF_IP4,
	                .free_bits = 15,
	                .match_org = "google.com"},
	        .helo_valid = true,
	        .sender_domain_known = true,
	        .sender_domain = SENDER_DOMAIN_MAIL,
	};
}

enum change {
	AS_IS,
	BOT_OWN_PLUS_ALL,  /* vps.attacker.test, attacker.test: +all */
	BOT_OWN_WIDE,      /* ... ip4:0.0.0.0/1 */
	FORGED_WIDE,       /* a forged domain's include of a /8 */
	FORGED_UNRELATED,  /* a hosting PTR, a forged domain's narrow term */
	EXISTS_ANY,        /* exists:example.test (every address) */
	EXISTS_PER_ADDR,   /* exists:%{ir}.spf.google.com */
	WIDEST_BOUND,      /* a /15: the bound itself */
	PAST_BOUND,        /* a /14 */
	V6_WITHIN,         /* ip6:2a00:1450::/32 (bound /31) */
	V6_PAST,           /* ip6:2a00::/16 */
	ALIGNED_SMALL,     /* mail.small.test for small.test, ip4:x/32 */
	SENDER_ALIGNED,    /* mail.small.test, its own record includes its
			      host's net: related by the sender's domain */
	TLS_PTR_SPF,       /* STARTTLS: the PTR name's domain's SPF */
	LISTS_SILENT,      /* a DNS list named, not answering */
	LISTS_LATE,        /* ... not within the budget */
	LISTS_CLEAN,       /* ... answering, not listing */
	LISTED,
	ALLOWED,
	ALLOWED_LISTS_SILENT,
	NO_PTR,
	DYNAMIC,
	PTR_LATE,
	SPF_LATE,
	SOFTFAILS,
	FAILS,
	NO_MAIL,
	BAD_HELO,
	NULL_SENDER_HELO,  /* the HELO name's SPF: trusted, never pooled */
	MODE_FCRDNS,       /* trust = fcrdns: SPF has no part */
	MODE_NO,
};

static struct trust_facts
changed(enum change c, struct trust_rules *r)
{
	struct trust_facts f = provider();

	*r = defaults;
	switch (c) {
	case AS_IS:
		break;
	case BOT_OWN_PLUS_ALL:
		f.ptr_org = f.spf.domain_org = f.spf.match_org = "attacker.test";
		f.spf.mechanism = SPF_ALL;
		f.spf.free_bits = 32;
		break;
	case BOT_OWN_WIDE:
		f.ptr_org = f.spf.domain_org = f.spf.match_org = "attacker.test";
		f.spf.free_bits = 31;
		break;
	case FORGED_WIDE:
		f.ptr_org = "hoster.test";
		f.spf.domain_org = "victim.test";
		f.spf.match_org = "hoster.test";
		f.spf.free_bits = 24;
		break;
	case FORGED_UNRELATED:
		f.ptr_org = "hoster.test";
		f.spf.domain_org = f.spf.match_org = "victim.test";
		f.spf.free_bits = 8;
		break;
	case EXISTS_ANY:
		f.spf.mechanism = SPF_EXISTS;
		f.spf.free_bits = 32;
		break;
	case EXISTS_PER_ADDR:
		f.spf.mechanism = SPF_EXISTS;
		f.spf.free_bits = 0;
		break;
	case WIDEST_BOUND:
		f.spf.free_bits = 17;
		break;
	case PAST_BOUND:
		f.spf.free_bits = 18;
		break;
	case V6_WITHIN:
		f.family = AF_INET6;
		f.spf.mechanism = SPF_IP6;
		f.spf.free_bits = 96;
		break;
	case V6_PAST:
		f.family = AF_INET6;
		f.spf.mechanism = SPF_IP6;
		f.spf.free_bits = 112;
		break;
	case ALIGNED_SMALL:
		f.ptr_org = f.spf.domain_org = f.spf.match_org = "small.test";
		f.spf.free_bits = 0;
		break;
	case SENDER_ALIGNED:
		f.ptr_org = f.spf.domain_org = "small.test";
		f.spf.match_org = "hoster.test";
		f.spf.free_bits = 8;
		break;
	case TLS_PTR_SPF:
		f.tls = true;
		f.spf.own_domain = false;
		f.spf.domain_org = "google.com";
		break;
	case LISTS_SILENT:
		f.lists = f.lists_known = true;
		f.lists_complete = false;
		break;
	case LISTS_LATE:
		f.lists = true;
		break;
	case LISTS_CLEAN:
		f.lists = f.lists_known = f.lists_complete = true;
		break;
	case LISTED:
		f.lists = f.lists_known = f.lists_complete = true;
		f.list_score = 3;
		break;
	case ALLOWED:
		f.lists = f.lists_known = f.lists_complete = true;
		f.list_score = -5;
		f.fcrdns = FCRDNS_NO_PTR;
		f.ptr_org = "";
		break;
	case ALLOWED_LISTS_SILENT:
		f.lists = f.lists_known = true;
		f.list_score = -5;
		break;
	case NO_PTR:
		f.fcrdns = FCRDNS_NO_PTR;
		f.ptr_org = "";
		break;
	case DYNAMIC:
		f.dynamic = true;
		break;
	case PTR_LATE:
		f.ptr_known = false;
		break;
	case SPF_LATE:
		f.spf.known = false;
		break;
	case SOFTFAILS:
		f.spf.result = SPF_SOFTFAIL;
		f.spf.matched = true;
		f.spf.mechanism = SPF_ALL;
		break;
	case FAILS:
		f.spf.result = SPF_FAIL;
		f.spf.mechanism = SPF_ALL;
		r->refuse_spf_fail = true;
		break;
	case NO_MAIL:
		f.sender_domain = SENDER_DOMAIN_NULL_MX;
		r->refuse_unknown_sender_domain = true;
		break;
	case BAD_HELO:
		f.helo_valid = false;
		break;
	case NULL_SENDER_HELO:
		f.spf.own_domain = false;
		f.spf.domain_org = "google.com";
		break;
	case MODE_FCRDNS:
		r->mode = TRUST_MODE_FCRDNS;
		f.spf.known = false;
		break;
	case MODE_NO:
		r->mode = TRUST_MODE_NO;
		break;
	}
	return f;
}

static const struct row {
	enum change change;
	const char *name;
	bool trusted;
	enum trust_why why;
	bool pooled, suspicious;
} rows[] = {
        {AS_IS, "a provider's server", true, TRUST_WHY_TRUSTED, true, false},
        {BOT_OWN_PLUS_ALL, "own domain, +all", false, TRUST_WHY_SPF_ALL,
         false, false},
        {BOT_OWN_WIDE, "own domain, ip4:0.0.0.0/1", false, TRUST_WHY_SPF_WIDE,
         false, false},
        {FORGED_WIDE, "forged domain, a hoster's /8", false,
         TRUST_WHY_SPF_WIDE, false, false},
        {FORGED_UNRELATED, "hosting PTR, forged domain", false,
         TRUST_WHY_UNRELATED, false, false},
        {EXISTS_ANY, "exists: for every address", false, TRUST_WHY_SPF_ALL,
         false, false},
        {EXISTS_PER_ADDR, "exists:%{ir}...", true, TRUST_WHY_TRUSTED, true,
         false},
        {WIDEST_BOUND, "a /15", true, TRUST_WHY_TRUSTED, true, false},
        {PAST_BOUND, "a /14", false, TRUST_WHY_SPF_WIDE, false, false},
        {V6_WITHIN, "ip6 /32", true, TRUST_WHY_TRUSTED, true, false},
        {V6_PAST, "ip6 /16", false, TRUST_WHY_SPF_WIDE, false, false},
        {ALIGNED_SMALL, "an aligned small server", true, TRUST_WHY_TRUSTED,
         true, false},
        {SENDER_ALIGNED, "related by the sender's domain", true,
         TRUST_WHY_TRUSTED, true, false},
        {TLS_PTR_SPF, "STARTTLS, the PTR name's domain", true,
         TRUST_WHY_TRUSTED, false, false},
        {LISTS_SILENT, "a list silent", false, TRUST_WHY_LISTS_SILENT, false,
         false},
        {LISTS_LATE, "lists late", false, TRUST_WHY_LISTS_SILENT, false,
         false},
        {LISTS_CLEAN, "lists clean", true, TRUST_WHY_TRUSTED, true, false},
        {LISTED, "listed", false, TRUST_WHY_LISTED, false, true},
        {ALLOWED, "allowed, no PTR", true, TRUST_WHY_ALLOWED, false, false},
        {ALLOWED_LISTS_SILENT, "allowed, another list silent", false,
         TRUST_WHY_LISTS_SILENT, false, false},
        {NO_PTR, "no PTR", false, TRUST_WHY_NO_FCRDNS, false, false},
        {DYNAMIC, "dynamic PTR", false, TRUST_WHY_NO_FCRDNS, false, false},
        {PTR_LATE, "PTR late", false, TRUST_WHY_NO_FCRDNS, false, false},
        {SPF_LATE, "SPF late", false, TRUST_WHY_SPF, false, false},
        {SOFTFAILS, "SPF softfail", false, TRUST_WHY_SPF, false, true},
        {FAILS, "SPF fail", false, TRUST_WHY_SPF, false, true},
        {NO_MAIL, "a null MX", false, TRUST_WHY_NO_MAIL, false, true},
        {BAD_HELO, "a bad HELO", true, TRUST_WHY_TRUSTED, true, true},
        {NULL_SENDER_HELO, "the null sender, HELO's SPF", true,
         TRUST_WHY_TRUSTED, false, false},
        {MODE_FCRDNS, "trust = fcrdns", true, TRUST_WHY_TRUSTED, false,
         false},
        {MODE_NO, "trust = no", false, TRUST_WHY_OFF, true, false},
};

static void
test_rules(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *row = &rows[i];
		struct trust_rules r;
		struct trust_facts f = changed(row->change, &r);
		struct trust_verdict v;

		trust_judge(&r, &f, &v);
		if (v.trusted != row->trusted || v.why != row->why ||
		    v.pooled != row->pooled || v.suspicious != row->suspicious) {
			fprintf(stderr,
			        "%s: trusted %d (%s), pooled %d, suspicious %d; "
			        "want %d (%s), %d, %d\n",
			        row->name, v.trusted, trust_why_name(v.why),
			        v.pooled, v.suspicious, row->trusted,
			        trust_why_name(row->why), row->pooled,
			        row->suspicious);
			exit(1);
		}
	}
}

/* What the verdict says besides: the delay, the refusals. */
static void
test_refusals_and_delay(void)
{
	struct trust_rules r;
	struct trust_facts f;
	struct trust_verdict v;

	f = changed(FAILS, &r);
	trust_judge(&r, &f, &v);
	CHECK(v.refuse_spf);
	CHECK_INT(v.delay_sec, 900);
	f = changed(NO_MAIL, &r);
	trust_judge(&r, &f, &v);
	CHECK_INT(v.refuse_sender, GREY_REASON_SENDER_NULL_MX);
	/* at STARTTLS no sender is seen: its SPF fails nothing */
	f = changed(FAILS, &r);
	f.tls = true;
	trust_judge(&r, &f, &v);
	CHECK(!v.refuse_spf);
	CHECK(!v.suspicious);
	f = changed(AS_IS, &r);
	trust_judge(&r, &f, &v);
	CHECK_INT(v.delay_sec, 0);
	CHECK_INT(v.refuse_sender, GREY_REASON_NONE);
}

static void
test_org_domain(void)
{
	char out[ORG_DOMAIN_MAX];

	CHECK_STR(org_domain("mail-yw1-f171.google.com", out, sizeof(out)),
	          "google.com");
	CHECK_STR(org_domain("_netblocks.Google.COM.", out, sizeof(out)),
	          "google.com");
	CHECK_STR(org_domain("mail-am6eur05on2101.outbound.protection.outlook."
	                     "com",
	                     out, sizeof(out)),
	          "outlook.com");
	CHECK_STR(org_domain("mx.b.example.co.uk", out, sizeof(out)),
	          "example.co.uk");
	/* a name under a test's own top-level domain: two labels */
	CHECK_STR(org_domain("mx7.sender.test", out, sizeof(out)),
	          "sender.test");
	/* none: a public suffix itself, nothing */
	CHECK_STR(org_domain("co.uk", out, sizeof(out)), "");
	CHECK_STR(org_domain("com", out, sizeof(out)), "");
	CHECK_STR(org_domain("", out, sizeof(out)), "");
	/* too small a buffer: none, never cut */
	CHECK_STR(org_domain("mx.example.org", out, 5), "");
}

int
main(void)
{
	test_rules();
	test_refusals_and_delay();
	test_org_domain();
	return 0;
}
