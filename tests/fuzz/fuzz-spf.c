// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer target for SPF's record reader and macro expander
 * (policy/spf_record.c): the input's first line read as a TXT record,
 * the rest expanded as a domain-spec, for IPv4 and IPv6 clients; every
 * term kept must hold what its mechanism needs, every expansion be a
 * name of at most 253 characters. The first line is also read as a HELO
 * name (policy/helo_shape.c) and as a MAIL FROM address whose domain is
 * taken (policy/sender_domain.c: a name of 1 to 253 characters, or
 * nothing). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "helo_shape.h"
#include "sender_domain.h"
#include "spf_record.h"

static const uint8_t ip4[4] = {192, 0, 2, 3};
static const uint8_t ip6[16] = {0x20, 0x01, 0x0d, 0xb8, [14] = 0xcb, 0x01};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[1024], out[300], why[200];
	struct spf_record rec;
	const char *nl;
	size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;

	memcpy(text, data, n);
	text[n] = 0;
	nl = strchr(text, '\n');
	if (nl)
		text[nl - text] = 0;
	(void)helo_shape_valid(text);
	if (sender_domain_of(text, out, sizeof(out))) {
		size_t len = strlen(out);

		if (!len || len > 253 || out[0] == '[' || strchr(out, '@'))
			abort();
	} else if (out[0]) {
		abort();
	}
	if (spf_record_parse(text, &rec, why, sizeof(why)) == 0) {
		if (rec.nterms > SPF_TERMS_MAX)
			abort();
		for (size_t i = 0; i < rec.nterms; i++) {
			const struct spf_term *t = &rec.term[i];

			if ((t->mechanism == SPF_INCLUDE ||
			     t->mechanism == SPF_EXISTS) && !t->domain)
				abort();
			if (t->domain && (t->domain < rec.text ||
			                  t->domain >= rec.text + sizeof(rec.text)))
				abort();
			if (t->cidr4 > 32 || t->cidr6 > 128)
				abort();
		}
	}
	if (nl) {
		for (int v6 = 0; v6 < 2; v6++) {
			struct spf_macro_env env = {
			        .sender = "strong-bad@email.example.com",
			        .local = "strong-bad",
			        .sender_domain = "email.example.com",
			        .domain = "email.example.com",
			        .family = v6 ? AF_INET6 : AF_INET,
			        .ip = v6 ? ip6 : ip4,
			        .helo = "mx.example.org",
			};

			if (spf_macro_expand(nl + 1, &env, out, sizeof(out)) == 0 &&
			    strlen(out) > 253)
				abort();
		}
	}
	return 0;
}
