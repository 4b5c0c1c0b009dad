// SPDX-License-Identifier: GPL-2.0-or-later
/* An SPF record read, and its macros expanded (spf_record.h; RFC 7208
 * sections 4.6, 5, 6 and 7). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "dns_answer.h"
#include "spf_record.h"

#define NAME_MAX_LEN 253

bool
spf_record_is_spf(const char *txt)
{
	return dns_txt_is_spf(txt, strlen(txt));
}

/* A decimal length of at most max, with no leading zero (ABNF). */
static bool
cidr_length(const char *s, size_t n, unsigned max, uint8_t *out)
{
	unsigned v = 0;

	if (n == 0 || n > 3 || (n > 1 && s[0] == '0'))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v > max)
		return false;
	*out = (uint8_t)v;
	return true;
}

static bool
all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return n > 0;
}

/* The dual-cidr-length at the end of arg ("/24", "//64", "/24//64"): cut
 * off and read. Return: false when one is there but out of range. */
static bool
dual_cidr(char *arg, struct spf_term *t)
{
	size_t n = strlen(arg);
	char *slash;

	t->cidr4 = 32;
	t->cidr6 = 128;
	/* "//N" at the end: the IPv6 length */
	slash = n >= 3 ? strrchr(arg, '/') : NULL;
	if (slash && slash > arg && slash[-1] == '/' &&
	    all_digits(slash + 1, strlen(slash + 1))) {
		if (!cidr_length(slash + 1, strlen(slash + 1), 128, &t->cidr6))
			return false;
		slash[-1] = 0;
	}
	slash = strrchr(arg, '/');
	if (slash && all_digits(slash + 1, strlen(slash + 1))) {
		if (!cidr_length(slash + 1, strlen(slash + 1), 32, &t->cidr4))
			return false;
		*slash = 0;
	}
	return true;
}

/* A modifier's or a mechanism's name: ALPHA *(ALPHA / DIGIT / - _ .). */
static bool
is_name(const char *s, size_t n)
{
	if (!n || !((s[0] | 32) >= 'a' && (s[0] | 32) <= 'z'))
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = s[i];

		if (!((c | 32) >= 'a' && (c | 32) <= 'z') && !(c >= '0' && c <= '9') &&
		    c != '-' && c != '_' && c != '.')
			return false;
	}
	return true;
}

static bool
is_delimiter(char c)
{
	return c && strchr(".-+,/_=", c) != NULL;
}

/* One macro-expand at s ("%{...}", "%%", "%_", "%-"; section 7.1):
 * its length, or 0 when it is not one. exp: the letters of exp= too. */
static size_t
macro_expand_len(const char *s, bool exp)
{
	const char *p = s + 2;

	if (s[0] != '%')
		return 0;
	if (s[1] == '%' || s[1] == '_' || s[1] == '-')
		return 2;
	if (s[1] != '{' || !*p ||
	    !strchr(exp ? "slodiphcrtvSLODIPHCRTV" : "slodiphvSLODIPHV", *p))
		return 0;
	p++;
	while (*p >= '0' && *p <= '9')
		p++;
	if ((*p | 32) == 'r')
		p++;
	while (is_delimiter(*p))
		p++;
	return *p == '}' ? (size_t)(p + 1 - s) : 0;
}

/* A macro-string (section 7.1): visible characters, each '%' a
 * macro-expand; exp: exp='s letters too. Its last macro-expand's end
 * in *last (NULL: none ends it). */
static bool
macro_string_ok(const char *s, bool exp, const char **ends_macro)
{
	if (ends_macro)
		*ends_macro = NULL;
	while (*s) {
		size_t n = *s == '%' ? macro_expand_len(s, exp) : 1;

		if (*s < 0x21 || *s > 0x7e || !n)
			return false;
		s += n;
		if (ends_macro && n > 1 && !*s)
			*ends_macro = s;
	}
	return true;
}

/* A toplabel (section 7.1): letters, digits and hyphens, not all digits
 * unless a hyphen is inside, never a hyphen at either end. */
static bool
toplabel_ok(const char *s, size_t n)
{
	bool alpha = false, hyphen = false;

	if (!n || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if ((c | 32) >= 'a' && (c | 32) <= 'z')
			alpha = true;
		else if (c == '-')
			hyphen = true;
		else if (c < '0' || c > '9')
			return false;
	}
	return alpha || hyphen;
}

/* A domain-spec (section 7.1): a macro-string that ends in a
 * macro-expand or in "." toplabel with an optional dot (a:foo-bar and
 * an empty exp= are permerrors). */
static bool
domain_spec_ok(const char *s)
{
	const char *ends_macro, *dot;
	size_t n = strlen(s);

	if (!n || !macro_string_ok(s, false, &ends_macro))
		return false;
	if (ends_macro)
		return true;
	if (s[n - 1] == '.')
		n--;
	for (dot = s + n; dot > s && dot[-1] != '.'; dot--)
		;
	/* (dot: the toplabel's start, after a '.' inside the string) */
	return dot > s && toplabel_ok(dot, (size_t)(s + n - dot));
}

static int
fail(char *why, size_t len, const char *what, const char *term)
{
	snprintf(why, len, "%s: \"%.80s\"", what, term);
	return -EINVAL;
}

static const struct {
	const char *name;
	enum spf_mechanism m;
} mechanisms[] = {
        {"all", SPF_ALL}, {"include", SPF_INCLUDE}, {"a", SPF_A},
        {"mx", SPF_MX},   {"ptr", SPF_PTR},         {"ip4", SPF_IP4},
        {"ip6", SPF_IP6}, {"exists", SPF_EXISTS},
};

/* One directive (qualifier, mechanism, its argument) into t. */
static int
directive(char *tok, struct spf_term *t, char *why, size_t len)
{
	const char *whole = tok;
	size_t n;
	char *arg;
	bool found = false;

	t->qualifier = SPF_PASS;
	switch (*tok) {
	case '+': t->qualifier = SPF_PASS; tok++; break;
	case '-': t->qualifier = SPF_FAIL; tok++; break;
	case '~': t->qualifier = SPF_SOFTFAIL; tok++; break;
	case '?': t->qualifier = SPF_NEUTRAL; tok++; break;
	}
	n = strcspn(tok, ":/");
	for (size_t i = 0; i < sizeof(mechanisms) / sizeof(*mechanisms); i++)
		if (strlen(mechanisms[i].name) == n &&
		    !strncasecmp(tok, mechanisms[i].name, n)) {
			t->mechanism = mechanisms[i].m;
			found = true;
		}
	if (!found)
		return fail(why, len, "an unknown mechanism", whole);
	arg = tok + n;
	switch (t->mechanism) {
	case SPF_ALL:
		return *arg ? fail(why, len, "all takes nothing", whole) : 0;
	case SPF_INCLUDE:
	case SPF_EXISTS:
		if (*arg != ':' || !domain_spec_ok(arg + 1))
			return fail(why, len, "a domain-spec is needed", whole);
		t->domain = arg + 1;
		return 0;
	case SPF_A:
	case SPF_MX:
		if (!dual_cidr(arg, t))
			return fail(why, len, "a CIDR length out of range", whole);
		__attribute__((fallthrough)); /* an optional domain-spec */
	case SPF_PTR:
		if (!*arg)
			return 0;
		if (*arg != ':' || !domain_spec_ok(arg + 1))
			return fail(why, len, "a bad domain-spec", whole);
		t->domain = arg + 1;
		return 0;
	case SPF_IP4:
	case SPF_IP6: {
		bool v6 = t->mechanism == SPF_IP6;
		char *slash;

		if (*arg != ':')
			return fail(why, len, "an address is needed", whole);
		arg++;
		t->cidr4 = 32;
		t->cidr6 = 128;
		slash = strchr(arg, '/');
		if (slash) {
			*slash = 0;
			if (!cidr_length(slash + 1, strlen(slash + 1),
			                 v6 ? 128 : 32,
			                 v6 ? &t->cidr6 : &t->cidr4))
				return fail(why, len, "a bad CIDR length", whole);
		}
		if (inet_pton(v6 ? AF_INET6 : AF_INET, arg, t->addr) != 1)
			return fail(why, len, "a bad address", whole);
		return 0;
	}
	}
	return fail(why, len, "an unknown mechanism", whole);
}

int
spf_record_parse(const char *txt, struct spf_record *out, char *why,
                 size_t len)
{
	char *p, *tok;

	memset(out, 0, sizeof(*out));
	if (!spf_record_is_spf(txt))
		return fail(why, len, "not an SPF record", txt);
	if (strlen(txt) >= sizeof(out->text))
		return fail(why, len, "a record too long", txt);
	/* (a NUL in DNS's text reads as DNS_TXT_NUL: section 4.6's terms
	 * are visible characters and spaces) */
	for (const char *c = txt; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
			return fail(why, len, "a byte that is not printable ASCII",
			            txt);
	strcpy(out->text, txt);
	p = out->text + 6;
	for (;;) {
		size_t n, name;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		tok = p;
		n = strcspn(p, " ");
		p += n;
		if (*p)
			*p++ = 0;
		name = strcspn(tok, "=:/");
		if (tok[name] == '=') {
			/* a modifier */
			char *value = tok + name + 1;

			if (!is_name(tok, name))
				return fail(why, len, "a bad modifier", tok);
			if (name == 8 && !strncasecmp(tok, "redirect", 8)) {
				if (out->redirect)
					return fail(why, len,
					            "two redirect modifiers", tok);
				if (!domain_spec_ok(value))
					return fail(why, len, "a bad redirect", tok);
				out->redirect = value;
			} else if (name == 3 && !strncasecmp(tok, "exp", 3)) {
				if (out->exp)
					return fail(why, len, "two exp modifiers",
					            tok);
				if (!domain_spec_ok(value))
					return fail(why, len, "a bad exp", tok);
				out->exp = value;
			} else if (!macro_string_ok(value, false, NULL)) {
				/* (unknown modifiers are ignored, their
				 * macro-string read all the same: section 6) */
				return fail(why, len, "a bad macro in a modifier",
				            tok);
			}
			continue;
		}
		if (out->nterms == SPF_TERMS_MAX)
			return fail(why, len, "too many terms", tok);
		{
			int r = directive(tok, &out->term[out->nterms], why, len);

			if (r < 0)
				return r;
		}
		out->nterms++;
	}
	return 0;
}

/* --- macros (section 7) --- */

/* A macro letter's value, into buf (DNS_LABELS_MAX bytes). Return: it, or
 * NULL (not allowed here: c, r, t are for exp only). */
static const char *
letter_value(char letter, const struct spf_macro_env *env, char *buf)
{
	switch (letter | 32) {
	case 's': return env->sender;
	case 'l': return env->local;
	case 'o': return env->sender_domain;
	case 'd': return env->domain;
	case 'h': return env->helo;
	case 'p': return env->ptr_name ? env->ptr_name : "unknown";
	case 'v': return env->family == AF_INET6 ? "ip6" : "in-addr";
	case 'i':
		dns_address_labels(env->family, env->ip, false, buf);
		return buf;
	}
	return NULL;
}

/* out += s (n bytes). Return: false when it does not fit. */
static bool
put(char *out, size_t len, size_t *at, const char *s, size_t n)
{
	if (*at + n >= len)
		return false;
	memcpy(out + *at, s, n);
	*at += n;
	out[*at] = 0;
	return true;
}

/* One %{...} at spec (after "%{"): expanded onto out. Return: the bytes
 * of spec read up to and with its '}', or -EINVAL. */
static int
expand_one(const char *spec, const struct spf_macro_env *env, char *out,
           size_t len, size_t *at)
{
	char buf[DNS_LABELS_MAX], delims[8] = "";
	const char *value, *p = spec;
	const char *parts[128];
	size_t plen[128], nparts = 0, ndelims = 0;
	unsigned keep = 0;
	bool reverse = false, escape;
	char letter = *p++;

	value = letter_value(letter, env, buf);
	if (!value)
		return -EINVAL;
	escape = letter >= 'A' && letter <= 'Z';
	if (*p >= '0' && *p <= '9') {
		while (*p >= '0' && *p <= '9') {
			keep = keep * 10 + (unsigned)(*p++ - '0');
			if (keep > 128)
				return -EINVAL;
		}
		if (keep == 0)
			return -EINVAL;
	}
	if ((*p | 32) == 'r') {
		reverse = true;
		p++;
	}
	while (is_delimiter(*p) && ndelims < sizeof(delims) - 1)
		delims[ndelims++] = *p++;
	if (*p != '}')
		return -EINVAL;
	if (!ndelims)
		strcpy(delims, ".");
	/* split on any delimiter */
	for (const char *s = value;;) {
		size_t n = strcspn(s, delims);

		if (nparts == 128)
			return -EINVAL;
		parts[nparts] = s;
		plen[nparts++] = n;
		if (!s[n])
			break;
		s += n + 1;
	}
	if (reverse)
		for (size_t i = 0; i < nparts / 2; i++) {
			const char *tp = parts[i];
			size_t tl = plen[i];

			parts[i] = parts[nparts - 1 - i];
			plen[i] = plen[nparts - 1 - i];
			parts[nparts - 1 - i] = tp;
			plen[nparts - 1 - i] = tl;
		}
	for (size_t i = keep && keep < nparts ? nparts - keep : 0; i < nparts;
	     i++) {
		if (i > (keep && keep < nparts ? nparts - keep : 0) &&
		    !put(out, len, at, ".", 1))
			return -EINVAL;
		if (!escape) {
			if (!put(out, len, at, parts[i], plen[i]))
				return -EINVAL;
			continue;
		}
		for (size_t k = 0; k < plen[i]; k++) {
			unsigned char c = (unsigned char)parts[i][k];
			char hexed[4];

			bool unreserved = ((c | 32) >= 'a' && (c | 32) <= 'z') ||
			                  (c >= '0' && c <= '9') ||
			                  (c && strchr("-._~", c));

			if (unreserved) {
				if (!put(out, len, at, (const char *)&c, 1))
					return -EINVAL;
			} else {
				snprintf(hexed, sizeof(hexed), "%%%02X", c);
				if (!put(out, len, at, hexed, 3))
					return -EINVAL;
			}
		}
	}
	return (int)(p + 1 - spec);
}

int
spf_macro_expand(const char *spec, const struct spf_macro_env *env, char *out,
                 size_t len)
{
	char whole[2048];
	size_t at = 0;

	whole[0] = 0;
	for (const char *p = spec; *p;) {
		if (*p != '%') {
			if (*p < 0x21 || *p > 0x7e ||
			    !put(whole, sizeof(whole), &at, p, 1))
				return -EINVAL;
			p++;
			continue;
		}
		switch (p[1]) {
		case '%':
			if (!put(whole, sizeof(whole), &at, "%", 1))
				return -EINVAL;
			p += 2;
			break;
		case '_':
			if (!put(whole, sizeof(whole), &at, " ", 1))
				return -EINVAL;
			p += 2;
			break;
		case '-':
			if (!put(whole, sizeof(whole), &at, "%20", 3))
				return -EINVAL;
			p += 2;
			break;
		case '{': {
			int n = expand_one(p + 2, env, whole, sizeof(whole), &at);

			if (n < 0)
				return -EINVAL;
			p += 2 + n;
			break;
		}
		default:
			return -EINVAL; /* a lone '%' */
		}
	}
	/* No trailing dot; past 253 characters, labels go from the left. */
	while (at && whole[at - 1] == '.')
		whole[--at] = 0;
	{
		const char *name = whole;

		while (strlen(name) > NAME_MAX_LEN) {
			const char *dot = strchr(name, '.');

			if (!dot)
				return -EINVAL;
			name = dot + 1;
		}
		if (strlen(name) >= len)
			return -EINVAL;
		strcpy(out, name);
	}
	return 0;
}

const char *
spf_result_name(enum spf_result r)
{
	static const char *const names[] = {"none",     "neutral", "pass",
	                                    "fail",     "softfail", "temperror",
	                                    "permerror"};

	return (unsigned)r < sizeof(names) / sizeof(*names) ? names[r] : "?";
}
