// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the PTR name's shape (policy/rdns_shape.c) with the shipped
 * patterns (etc/dynamic-rdns): access lines' names are dynamic-looking,
 * the names big senders' servers have are not, the address is found in
 * the forms providers write it, and a pattern that does not compile is
 * refused with its file and line. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "rdns_shape.h"

static struct rdns_shape *shipped;

static int
dynamic(const char *addr, const char *name, char *why)
{
	uint8_t bytes[16];
	int family = strchr(addr, ':') ? AF_INET6 : AF_INET;

	CHECK_INT(inet_pton(family, addr, bytes), 1);
	why[0] = 0;
	return rdns_shape_dynamic(shipped, family, bytes, name, why, 160);
}

static void
test_embedded_address(void)
{
	static const char *const yes[] = {
	        "198-51-100-7.example.net",      "7.100.51.198.example.net",
	        "ip198.51.100.7.example.net",    "198.051.100.007.example.net",
	        "c6336407.example.net",          "C6336407.example.net",
	        "198051100007.example.net",      "host-7-100-51-198.example.net",
	};
	static const char *const no[] = {
	        "mx1.mail.test", "198-51-100-8.example.net",
	        "51-100-7.example.net", "mail198.example.net",
	};
	char why[160];

	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++) {
		if (dynamic("198.51.100.7", yes[i], why) != 1)
			fprintf(stderr, "not dynamic: %s\n", yes[i]);
		CHECK_INT(dynamic("198.51.100.7", yes[i], why), 1);
		CHECK_STR(why, "embeds the address");
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++) {
		if (dynamic("198.51.100.7", no[i], why) != 0)
			fprintf(stderr, "dynamic: %s (%s)\n", no[i], why);
		CHECK_INT(dynamic("198.51.100.7", no[i], why), 0);
	}
	CHECK_INT(dynamic("2001:db8::7", "2001-db8-0-0-0-0-0-7.example.net",
	                  why), 1);
	CHECK_INT(dynamic("2001:db8::7", "2001-db8-0-0-0-0-0-8.example.net",
	                  why), 0);
}

static void
test_patterns(void)
{
	static const char *const yes[] = {
	        "adsl-pool12.example.net",       "dsl.example.net",
	        "cpe-12.cable.example.net",      "dyn-12-34.example.net",
	        "dynamic.example.net",           "x.dhcp.example.net",
	        "ppp-12.example.net",            "customer-7.example.net",
	        "pool-12-34.example.net",        "unassigned.example.net",
	        "ftth-3.example.net",            "CABLE-7.EXAMPLE.NET",
	};
	/* names of big senders' servers and of mail hosts */
	static const char *const no[] = {
	        "mx1.mail.test",
	        "mail-wm1-f54.google.com",
	        "mail-db8eur05on2100.outbound.protection.outlook.com",
	        "a8-123.smtp-out.amazonses.com",
	        "o1.email.example.net",
	        "smtp.dslreports.example.net",
	        "mta-12.pools-of-mail.example.net",
	        "outbound.mailchannels.net",
	};
	char why[160];

	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++) {
		if (dynamic("198.51.100.7", yes[i], why) != 1)
			fprintf(stderr, "not dynamic: %s\n", yes[i]);
		CHECK_INT(dynamic("198.51.100.7", yes[i], why), 1);
		CHECK(!strncmp(why, "pattern ", 8));
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++) {
		if (dynamic("198.51.100.7", no[i], why) != 0)
			fprintf(stderr, "dynamic: %s (%s)\n", no[i], why);
		CHECK_INT(dynamic("198.51.100.7", no[i], why), 0);
	}
}

static void
test_bad_file(void)
{
	char path[] = "/tmp/greygate-rdns-XXXXXX", err[256];
	int fd = mkstemp(path);
	struct rdns_shape *s;

	CHECK(fd >= 0);
	CHECK(write(fd, "# fine\n\n(^|\\.)dsl\\.\n(unclosed\n", 30) == 30);
	close(fd);
	CHECK(rdns_shape_load(path, err, sizeof(err)) == NULL);
	fprintf(stderr, "refused: %s\n", err);
	CHECK(strstr(err, ":4: a pattern that does not compile"));
	unlink(path);
	CHECK(rdns_shape_load("/nonexistent/rdns", err, sizeof(err)) == NULL);
	CHECK(strstr(err, "No such file"));
	s = rdns_shape_load(NULL, err, sizeof(err));
	CHECK(s && rdns_shape_count(s) == 0);
	rdns_shape_free(s);
}

int
main(int argc, char **argv)
{
	char err[256];

	CHECK(argc == 2);
	shipped = rdns_shape_load(argv[1], err, sizeof(err));
	if (!shipped) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	CHECK(rdns_shape_count(shipped) > 5);
	RUN(test_embedded_address);
	RUN(test_patterns);
	RUN(test_bad_file);
	rdns_shape_free(shipped);
	return 0;
}
