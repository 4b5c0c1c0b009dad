// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of sender_domain_of: which MAIL FROM addresses have a domain to
 * ask about (the lookups themselves: tests/common/check-resolver.c,
 * against a real nsd). */
#include <string.h>

#include "check.h"
#include "sender_domain.h"

static void
domain_is(const char *sender, const char *want)
{
	char out[256];
	bool asked = sender_domain_of(sender, out, sizeof(out));

	if (asked != (want != NULL) || strcmp(out, want ? want : ""))
		fprintf(stderr, "'%s': %s '%s', want '%s'\n", sender,
		        asked ? "asked" : "not asked", out, want ? want : "");
	CHECK(asked == (want != NULL));
	CHECK_STR(out, want ? want : "");
}

static void
test_domains(void)
{
	char many[400], out[256];

	domain_is("alice@example.org", "example.org");
	domain_is("alice@example.org.", "example.org");
	domain_is("a@b@example.org", "example.org");
	domain_is("bounce+x=y@mail.example.org", "mail.example.org");
	/* no domain, or none to ask */
	domain_is("", NULL);
	domain_is("postmaster", NULL);
	domain_is("alice@", NULL);
	domain_is("alice@.", NULL);
	domain_is("alice@[192.0.2.1]", NULL);
	domain_is("alice@[IPv6:2001:db8::1]", NULL);
	CHECK(!sender_domain_of(NULL, out, sizeof(out)));
	/* longer than a name can be */
	memset(many, 'a', sizeof(many));
	memcpy(many, "x@", 2);
	many[2 + 254] = 0;
	domain_is(many, NULL);
	many[2 + 253] = 0;
	CHECK(sender_domain_of(many, out, sizeof(out)));
	CHECK_INT((int)strlen(out), 253);
	/* no room: not asked */
	CHECK(!sender_domain_of("alice@example.org", out, 5));
}

static void
test_names(void)
{
	CHECK_STR(sender_domain_result_name(SENDER_DOMAIN_MAIL), "mail");
	CHECK_STR(sender_domain_result_name(SENDER_DOMAIN_NONE), "none");
	CHECK_STR(sender_domain_result_name(SENDER_DOMAIN_NULL_MX), "null-mx");
	CHECK_STR(sender_domain_result_name(SENDER_DOMAIN_TEMPERROR),
	          "temperror");
}

int
main(void)
{
	RUN(test_domains);
	RUN(test_names);
	return 0;
}
