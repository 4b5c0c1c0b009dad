// SPDX-License-Identifier: GPL-2.0-or-later
/* Triplet normalisation and client keys: lower-cased addresses, BATV, SRS
 * and VERP tags folded so a re-sent bounce or list mail keeps its key;
 * addresses cut to their /24 or /64; CIDR parsing and printing. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "policy.h"

static int
copy_lower(const char *in, size_t n, char *out, size_t len)
{
	if (n + 1 > len)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < n; i++)
		out[i] = (char)tolower((unsigned char)in[i]);
	out[n] = 0;
	return (int)n;
}

int
grey_normalize_rcpt(const char *rcpt, char *out, size_t len)
{
	return copy_lower(rcpt, strlen(rcpt), out, len);
}

static bool
has_prefix_ci(const char *s, size_t n, const char *prefix)
{
	size_t lp = strlen(prefix);

	return n >= lp && strncasecmp(s, prefix, lp) == 0;
}

/*
 * SRS: "SRS0=HHH=TT=orig.domain=orig-local@forwarder" and
 * "SRS1=HHH=first.forwarder==HHH=TT=orig.domain=orig-local@forwarder"
 * both fold to "orig-local@orig.domain". Writes the folded address into
 * buf and returns its length, or 0 if local is not SRS.
 */
static size_t
fold_srs(const char *local, size_t n, char *buf, size_t len)
{
	const char *p, *end = local + n, *domain, *dom_end;
	size_t ld, ll;

	if (has_prefix_ci(local, n, "SRS1=")) {
		p = memmem(local, n, "==", 2);
		if (!p)
			return 0;
		p += 2;
	} else if (has_prefix_ci(local, n, "SRS0=")) {
		p = local + 5;
	} else {
		return 0;
	}
	/* p: "HHH=TT=domain=local" */
	for (int skip = 0; skip < 2; skip++) {
		p = memchr(p, '=', (size_t)(end - p));
		if (!p)
			return 0;
		p++;
	}
	domain = p;
	dom_end = memchr(domain, '=', (size_t)(end - domain));
	if (!dom_end || dom_end == domain || dom_end + 1 >= end)
		return 0;
	ld = (size_t)(dom_end - domain);
	ll = (size_t)(end - dom_end - 1);
	if (ll + 1 + ld + 1 > len)
		return 0;
	memcpy(buf, dom_end + 1, ll);
	buf[ll] = '@';
	memcpy(buf + ll + 1, domain, ld);
	buf[ll + 1 + ld] = 0;
	return ll + 1 + ld;
}

/* BATV: "prvs=TAG=local" (RFC draft and most MTAs), "msprvs1=TAG=local"
 * (Microsoft), "btv1==TAG==local": the local part after the tag. */
static const char *
skip_batv(const char *local, size_t *n)
{
	static const char *const tags[] = {"prvs=", "msprvs1=", "btv1=="};

	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		const char *rest, *eq;
		size_t lt = strlen(tags[i]);

		if (!has_prefix_ci(local, *n, tags[i]))
			continue;
		rest = local + lt;
		eq = memchr(rest, '=', *n - lt);
		if (!eq)
			return local;
		while (eq < local + *n && *eq == '=')
			eq++;
		if (eq >= local + *n)
			return local;
		*n -= (size_t)(eq - local);
		return eq;
	}
	return local;
}

/* VERP and list tags: every run of digits that stands alone between
 * separators becomes '#', and a "+extension" becomes "+#", so
 * "bounce-1234-5@list" and "bounce-1299-7@list" share a key. */
static int
fold_tags(const char *local, size_t n, char *out, size_t len)
{
	size_t o = 0, i = 0;

	while (i < n) {
		char c = local[i];

		if (c == '+') {
			if (o + 2 >= len)
				return -ENAMETOOLONG;
			out[o++] = '+';
			out[o++] = '#';
			break;
		}
		/* A run starts after a separator, not inside a word: the
		 * 0 of "s10" is not one. */
		if (isdigit((unsigned char)c) &&
		    (i == 0 || !isalnum((unsigned char)local[i - 1]))) {
			size_t j = i;

			while (j < n && isdigit((unsigned char)local[j]))
				j++;
			if (j == n || !isalpha((unsigned char)local[j])) {
				if (o + 1 >= len)
					return -ENAMETOOLONG;
				out[o++] = '#';
				i = j;
				continue;
			}
		}
		if (o + 1 >= len)
			return -ENAMETOOLONG;
		out[o++] = (char)tolower((unsigned char)c);
		i++;
	}
	out[o] = 0;
	return (int)o;
}

int
grey_normalize_sender(const char *sender, char *out, size_t len)
{
	char srs[GREY_ADDR_MAX];
	const char *addr = sender, *at, *local;
	size_t n = strlen(sender), ln, srs_len;
	int r, d;

	at = n ? memrchr(sender, '@', n) : NULL;
	if (!at)
		return copy_lower(sender, n, out, len);
	srs_len = fold_srs(sender, (size_t)(at - sender), srs, sizeof(srs));
	if (srs_len) {
		addr = srs;
		n = srs_len;
		at = strrchr(srs, '@');
	}
	ln = (size_t)(at - addr);
	local = skip_batv(addr, &ln);
	r = fold_tags(local, ln, out, len);
	if (r < 0)
		return r;
	d = copy_lower(at, n - (size_t)(at - addr), out + r, len - (size_t)r);
	return d < 0 ? d : r + d;
}

void
grey_client_of(const struct grey_addr *addr, uint8_t prefix,
	       struct grey_client *out)
{
	unsigned max = addr->family == AF_INET ? 32 : 128;
	unsigned bits = prefix > max ? max : prefix;

	memset(out, 0, sizeof(*out));
	out->family = addr->family;
	out->prefix = (uint8_t)bits;
	memcpy(out->bytes, addr->bytes, bits / 8);
	if (bits % 8)
		out->bytes[bits / 8] =
			addr->bytes[bits / 8] & (uint8_t)(0xff << (8 - bits % 8));
}

bool
grey_client_contains(const struct grey_client *net,
		     const struct grey_addr *addr)
{
	struct grey_client cut;

	if (net->family != addr->family)
		return false;
	grey_client_of(addr, net->prefix, &cut);
	return memcmp(cut.bytes, net->bytes, 16) == 0;
}

char *
grey_client_format(const struct grey_client *client, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];

	if (client->family == GREY_FAMILY_POOL) {
		snprintf(buf, len, "spf");
		return buf;
	}
	if (!inet_ntop(client->family, client->bytes, ip, sizeof(ip)))
		snprintf(ip, sizeof(ip), "?");
	snprintf(buf, len, "%s/%u", ip, client->prefix);
	return buf;
}

/* ::ffff:0:0/96? (IN6_IS_ADDR_V4MAPPED wants an aligned in6_addr; these
 * bytes follow a one-byte family.) */
static bool
v4_mapped(const uint8_t *b)
{
	static const uint8_t map[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(b, map, sizeof(map)) == 0;
}

int
grey_cidr_parse(const char *text, struct grey_client *out)
{
	char ip[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(text, '/');
	size_t n = slash ? (size_t)(slash - text) : strlen(text);
	struct grey_addr addr = {0};
	unsigned long prefix;
	char *end;

	if (n == 0 || n >= sizeof(ip))
		return -EINVAL;
	memcpy(ip, text, n);
	ip[n] = 0;
	if (inet_pton(AF_INET, ip, addr.bytes) == 1)
		addr.family = AF_INET;
	else if (inet_pton(AF_INET6, ip, addr.bytes) == 1)
		addr.family = AF_INET6;
	else
		return -EINVAL;
	prefix = addr.family == AF_INET ? 32 : 128;
	if (slash) {
		unsigned long max = prefix;

		if (!isdigit((unsigned char)slash[1]) || strlen(slash + 1) > 3)
			return -EINVAL;
		prefix = strtoul(slash + 1, &end, 10);
		if (*end || prefix > max)
			return -EINVAL;
	}
	/* ::ffff:a.b.c.d is a.b.c.d: packets from it arrive as IPv4. */
	if (addr.family == AF_INET6 && v4_mapped(addr.bytes)) {
		if (prefix < 96)
			return -EINVAL; /* half in, half out of the map */
		memmove(addr.bytes, addr.bytes + 12, 4);
		memset(addr.bytes + 4, 0, 12);
		addr.family = AF_INET;
		prefix -= 96;
	}
	grey_client_of(&addr, (uint8_t)prefix, out);
	return 0;
}

void
grey_pool_client(struct grey_client *out)
{
	memset(out, 0, sizeof(*out));
	out->family = GREY_FAMILY_POOL;
}

int
grey_triplet_client_parse(const char *text, struct grey_client *out)
{
	if (strcmp(text, "spf") == 0) {
		grey_pool_client(out);
		return 0;
	}
	return grey_cidr_parse(text, out);
}

const char *
grey_action_name(enum grey_action action)
{
	switch (action) {
	case GREY_GREYLIST:
		return "greylist";
	case GREY_PASS:
		return "pass";
	case GREY_REFRESH:
		return "refresh";
	case GREY_TRAP:
		return "trap";
	case GREY_ALLOWED:
		return "allow";
	case GREY_REFUSE:
		return "refuse";
	case GREY_ACTION_NONE:
		break;
	}
	return "none";
}

const char *
grey_reason_name(enum grey_reason reason)
{
	static const char *const names[] = {
		[GREY_REASON_NONE] = "none",
		[GREY_REASON_NEW] = "new",
		[GREY_REASON_EARLY_RETRY] = "early-retry",
		[GREY_REASON_RETRY_PASSED] = "retry-passed",
		[GREY_REASON_FASTPATH_REFRESH] = "fastpath-refresh",
		[GREY_REASON_ALLOW_LIST] = "allow-list",
		[GREY_REASON_RECIPIENT_EXEMPT] = "recipient-exempt",
		[GREY_REASON_STARTTLS] = "starttls",
		[GREY_REASON_TRAPPED] = "trapped",
		[GREY_REASON_PASSED] = "passed",
		[GREY_REASON_TLS_HANDED] = "starttls-handed",
		[GREY_REASON_TRUSTED] = "trusted",
		[GREY_REASON_SPF_FAIL] = "spf-fail",
		[GREY_REASON_UNKNOWN_RECIPIENT] = "unknown-recipient",
		[GREY_REASON_STARTTLS_RETRY] = "starttls-retry",
		[GREY_REASON_SENDER_DOMAIN] = "sender-domain",
		[GREY_REASON_SENDER_NULL_MX] = "sender-null-mx",
	};

	if ((size_t)reason < sizeof(names) / sizeof(names[0]))
		return names[reason];
	return "none";
}
