/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An SPF record (RFC 7208) read: its terms, each a mechanism with its
 * qualifier or a modifier, and the macro language its domain-specs are
 * written in (section 7), expanded for one check. Pure: no DNS here
 * (policy/spf_check.c evaluates a record over the resolver). Bytes from
 * DNS: a fuzz target reads them too (tests/fuzz/fuzz-spf.c). */
#ifndef GREYGATE_SPF_RECORD_H
#define GREYGATE_SPF_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A check's results (section 2.6). */
enum spf_result {
	SPF_NONE,      /* no SPF record, or no domain to check */
	SPF_NEUTRAL,   /* ?: the domain says nothing */
	SPF_PASS,      /* +: the client may send for the domain */
	SPF_FAIL,      /* -: it may not */
	SPF_SOFTFAIL,  /* ~: probably not */
	SPF_TEMPERROR, /* DNS failed for now */
	SPF_PERMERROR, /* the record cannot be read, or a limit was passed */
};

enum spf_mechanism {
	SPF_ALL,
	SPF_INCLUDE,
	SPF_A,
	SPF_MX,
	SPF_PTR,
	SPF_IP4,
	SPF_IP6,
	SPF_EXISTS,
};

/* Terms a record may hold, at most (a record is at most a few hundred
 * bytes; more terms than this are refused as a permerror). */
#define SPF_TERMS_MAX 64

struct spf_term {
	enum spf_mechanism mechanism;
	enum spf_result qualifier; /* PASS, FAIL, SOFTFAIL or NEUTRAL */
	/* the domain-spec as written (NUL-terminated, inside the record's
	 * copy), or NULL: the current domain */
	const char *domain;
	uint8_t addr[16];     /* ip4, ip6 */
	uint8_t cidr4, cidr6; /* a, mx, ip4 (32 when not given); ip6 (128) */
};

struct spf_record {
	struct spf_term term[SPF_TERMS_MAX];
	size_t nterms;
	const char *redirect; /* redirect= domain-spec, or NULL */
	const char *exp;      /* exp= domain-spec, or NULL (not used here) */
	/* the record's copy the pointers point in: RFC 7208 sets no bound
	 * (512 is a recommendation, section 3.4: a valid record of 602
	 * was refused); past this, a permerror */
	char text[2048];
};

/*
 * spf_record_is_spf - whether a TXT record is an SPF (version 1) record:
 * "v=spf1" alone or followed by a space (section 4.5).
 */
bool spf_record_is_spf(const char *txt);

/*
 * spf_record_parse - an SPF record's terms (section 4.6).
 * @why: for a permerror, what is wrong (at most len bytes)
 * Return: 0, or -EINVAL (a permerror: syntax, unknown mechanism, two
 * redirects, too long, too many terms).
 */
int spf_record_parse(const char *txt, struct spf_record *out, char *why,
                     size_t len);

/* What macros expand to (section 7.3). */
struct spf_macro_env {
	const char *sender;      /* s: local@domain (postmaster@helo for <>) */
	const char *local;       /* l */
	const char *sender_domain; /* o */
	const char *domain;      /* d: the current domain */
	int family;              /* i, v: AF_INET or AF_INET6 */
	const uint8_t *ip;
	const char *helo;        /* h */
	const char *ptr_name;    /* p: a validated name, or NULL ("unknown") */
};

/*
 * spf_macro_expand - a domain-spec with its macros expanded, as a name
 * to ask DNS for: cut to 253 characters at label boundaries from the left
 * (section 7.3), no trailing dot.
 * Return: 0, or -EINVAL (a bad macro: a permerror).
 */
int spf_macro_expand(const char *spec, const struct spf_macro_env *env,
                     char *out, size_t len);

/* spf_result_name - "none", "neutral", "pass", "fail", "softfail",
 * "temperror", "permerror" (RFC 7208's names). */
const char *spf_result_name(enum spf_result r);

#endif
