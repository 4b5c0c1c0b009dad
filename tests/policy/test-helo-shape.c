// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of helo_shape_valid: the names and literals real MTAs say, and
 * what bots often say instead. */
#include "check.h"
#include "helo_shape.h"

static void
test_valid(void)
{
	static const char *const ok[] = {
		"mx.example.org", "mail-wr1-f41.google.com", "mx.example.org.",
		"a.b", "xn--bcher-kva.example", "1mail.example.org",
		"[192.0.2.1]", "[IPv6:2001:db8::1]", "[ipv6:2001:db8::25]"};

	for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++)
		CHECK(helo_shape_valid(ok[i]));
}

static void
test_invalid(void)
{
	static const char *const bad[] = {
		"", "localhost", "WIN-7H3K2", "192.0.2.1", "[192.0.2.1",
		"[300.0.2.1]", "[IPv6:zz]", "[2001:db8::1]", "mx..example.org",
		".example.org", "-mx.example.org", "mx-.example.org",
		"mx.example.org..", "mail_1.example.org", "mx example.org",
		"example.123", "[]", "."};

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		if (helo_shape_valid(bad[i]))
			fprintf(stderr, "taken: '%s'\n", bad[i]);
		CHECK(!helo_shape_valid(bad[i]));
	}
	CHECK(!helo_shape_valid(NULL));
}

int
main(void)
{
	RUN(test_valid);
	RUN(test_invalid);
	return 0;
}
