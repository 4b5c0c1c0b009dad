// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the DNS lists' sites (policy/dnsbl.c) in postscreen's
 * postscreen_dnsbl_sites syntax: zones, filters, weights, what is
 * refused. The lookups against a real rbldnsd: test-signals.sh. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "dnsbl.h"

static struct dnsbl_sites sites;
static char why[200];

static void
test_parse(void)
{
	CHECK_INT(dnsbl_sites_parse("zen.example.org=127.0.0.[2..11;15]*3, "
	                            "bl.example.net\tlist.dnswl.example="
	                            "127.0.[0..255].[1..3]*-5",
	                            &sites, why, sizeof(why)), 0);
	CHECK_INT(sites.n, 3);
	CHECK_STR(sites.site[0].zone, "zen.example.org");
	CHECK_INT(sites.site[0].weight, 3);
	CHECK(sites.site[0].filtered);
	CHECK_STR(sites.site[1].zone, "bl.example.net");
	CHECK_INT(sites.site[1].weight, 1);
	CHECK(!sites.site[1].filtered);
	CHECK_INT(sites.site[2].weight, -5);
	CHECK_INT(dnsbl_sites_parse("", &sites, why, sizeof(why)), 0);
	CHECK_INT(sites.n, 0);
	CHECK_INT(dnsbl_sites_parse(" , ", &sites, why, sizeof(why)), 0);
	CHECK_INT(sites.n, 0);
}

static void
test_filters(void)
{
	const struct dnsbl_site *s;

	CHECK_INT(dnsbl_sites_parse("zen.example.org=127.0.0.[2..11;15]",
	                            &sites, why, sizeof(why)), 0);
	s = &sites.site[0];
	CHECK(dnsbl_site_takes(s, (const uint8_t[]){127, 0, 0, 2}));
	CHECK(dnsbl_site_takes(s, (const uint8_t[]){127, 0, 0, 11}));
	CHECK(dnsbl_site_takes(s, (const uint8_t[]){127, 0, 0, 15}));
	CHECK(!dnsbl_site_takes(s, (const uint8_t[]){127, 0, 0, 12}));
	CHECK(!dnsbl_site_takes(s, (const uint8_t[]){127, 0, 0, 1}));
	CHECK(!dnsbl_site_takes(s, (const uint8_t[]){127, 0, 1, 2}));
	/* no filter: any answer */
	CHECK_INT(dnsbl_sites_parse("bl.example.net", &sites, why,
	                            sizeof(why)), 0);
	CHECK(dnsbl_site_takes(&sites.site[0], (const uint8_t[]){127, 9, 9, 9}));
}

/* The lists' error codes are never a listing, filter or not. */
static void
test_error_codes(void)
{
	CHECK(dnsbl_error_code((const uint8_t[]){127, 255, 255, 254}));
	CHECK(dnsbl_error_code((const uint8_t[]){127, 255, 255, 252}));
	CHECK(dnsbl_error_code((const uint8_t[]){127, 255, 255, 0}));
	CHECK(dnsbl_error_code((const uint8_t[]){127, 0, 0, 255}));
	CHECK(!dnsbl_error_code((const uint8_t[]){127, 0, 0, 2}));
	CHECK(!dnsbl_error_code((const uint8_t[]){127, 0, 10, 255}));
	CHECK(!dnsbl_error_code((const uint8_t[]){127, 255, 254, 1}));
}

static void
refused(const char *text, const char *what)
{
	if (dnsbl_sites_parse(text, &sites, why, sizeof(why)) != -EINVAL ||
	    !strstr(why, what)) {
		fprintf(stderr, "%s: not refused with \"%s\" (%s)\n", text, what,
		        why);
		CHECK(0);
	}
}

static void
test_refused(void)
{
	refused("zen.example.org*x", "a weight");
	refused("zen.example.org*2000", "a weight");
	refused("zen.example.org=127.0.0", "four octets");
	refused("zen.example.org=127.0.0.256", "four octets");
	refused("zen.example.org=127.0.0.[5..2]", "four octets");
	refused("zen.example.org=127.0.0.[2..", "four octets");
	refused("zen.example.org=127.0.0.2.3", "four octets");
	refused("localhost", "not a zone's name");
	refused("bad/zone.org", "not a zone's name");
	/* an allow list without a filter: its error codes would trust
	 * everyone (issue 55) */
	refused("list.dnswl.example*-5", "needs a reply filter");
	refused("bl.example.net, wl.example*-1", "needs a reply filter");
	refused("a.b c.d e.f g.h i.j k.l m.n o.p q.r s.t u.v w.x y.z "
	        "aa.b bb.c cc.d dd.e ee.f", "more than 16 sites");
}

int
main(void)
{
	RUN(test_parse);
	RUN(test_filters);
	RUN(test_refused);
	RUN(test_error_codes);
	return 0;
}
