// SPDX-License-Identifier: GPL-2.0-or-later
/* How greygated tells the MTA who the client is (see handoff.h): the
 * PROXY v2 header (the PROXY protocol's spec, section 2.2: signature,
 * version and command, family and protocol, length, addresses, ports),
 * RFC 3461's xtext for XCLIENT's values, and what the tarpit's EHLO may
 * list given the MTA's. Pure functions, apart from the hand-off's
 * connections, so that they are tested byte for byte. */
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "handoff.h"
#include "smtp_line.h"
#include "smtp_reply.h"

size_t
handoff_proxy_header(const struct sockaddr *src, const struct sockaddr *dst,
                     uint8_t *out)
{
	static const uint8_t sig[12] = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d,
	                                0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};
	uint8_t *p = out + 16;
	size_t alen;

	if (src->sa_family != dst->sa_family)
		return 0;
	memcpy(out, sig, sizeof(sig));
	out[12] = 0x21; /* version 2, PROXY */
	if (src->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)src;
		const struct sockaddr_in *d = (const void *)dst;

		out[13] = 0x11; /* TCP over IPv4 */
		alen = 12;
		memcpy(p, &s->sin_addr, 4);
		memcpy(p + 4, &d->sin_addr, 4);
		memcpy(p + 8, &s->sin_port, 2);
		memcpy(p + 10, &d->sin_port, 2);
	} else if (src->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)src;
		const struct sockaddr_in6 *d = (const void *)dst;

		out[13] = 0x21; /* TCP over IPv6 */
		alen = 36;
		memcpy(p, &s->sin6_addr, 16);
		memcpy(p + 16, &d->sin6_addr, 16);
		memcpy(p + 32, &s->sin6_port, 2);
		memcpy(p + 34, &d->sin6_port, 2);
	} else {
		return 0;
	}
	out[14] = (uint8_t)(alen >> 8);
	out[15] = (uint8_t)alen;
	return 16 + alen;
}

int
handoff_xtext(const char *text, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		bool plain = *p >= 33 && *p <= 126 && *p != '+' && *p != '=';

		if (o + (plain ? 1 : 3) >= len)
			return -1;
		if (plain) {
			out[o++] = (char)*p;
			continue;
		}
		out[o++] = '+';
		out[o++] = hex[*p >> 4];
		out[o++] = hex[*p & 15];
	}
	out[o] = 0;
	return (int)o;
}

bool
handoff_ehlo_offers(const char *ehlo, size_t len, const char *keyword)
{
	size_t line_len;

	return smtp_ehlo_line(ehlo, len, keyword, strlen(keyword), &line_len);
}

void
handoff_common_caps(const char *configured, const char *ehlo, size_t len,
		    char *out, size_t outlen, bool *starttls)
{
	size_t o = 0, line_len;

	out[0] = 0;
	*starttls = smtp_ehlo_line(ehlo, len, "STARTTLS", 8, &line_len) != NULL;
	while (*configured) {
		size_t il = strcspn(configured, ","), kl;
		const char *item = configured, *mta;
		int n;

		configured += il + (configured[il] == ',');
		while (il > 0 && *item == ' ') {
			item++;
			il--;
		}
		while (il > 0 && item[il - 1] == ' ')
			il--;
		kl = strcspn(item, " ,");
		kl = kl < il ? kl : il;
		mta = kl ? smtp_ehlo_line(ehlo, len, item, kl, &line_len) : NULL;
		if (!mta)
			continue;
		/* SIZE: the MTA's limit is the one that holds. */
		if (kl == 4 && !strncasecmp(item, "SIZE", 4))
			n = snprintf(out + o, outlen - o, "%s%.*s", o ? ", " : "",
				     (int)line_len, mta);
		else
			n = snprintf(out + o, outlen - o, "%s%.*s", o ? ", " : "",
				     (int)il, item);
		if (n < 0 || (size_t)n >= outlen - o) {
			out[o] = 0;
			return;
		}
		o += (size_t)n;
	}
}
