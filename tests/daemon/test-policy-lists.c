// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of postgrey's whitelist files as the policy door reads them:
 * every shape of line postgrey's own files use (names and domain
 * suffixes, Perl regexes with \d, addresses, partial IPv4 addresses,
 * CIDRs of both families; domain, name@, name@domain with +extension),
 * the ".local" twin, bad lines skipped with their line number, and an
 * unreadable file refused. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "policy_lists.h"

static char dir[64], clients[128], recipients[128];
static char warned[1024];

static void
on_warn(const char *path, int line, const char *why, void *ctx)
{
	snprintf(warned + strlen(warned), sizeof(warned) - strlen(warned),
	         "%d: %s\n", line, why);
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f);
	fputs(text, f);
	fclose(f);
}

static struct grey_addr
ip(const char *text)
{
	struct grey_addr a = {0};

	if (inet_pton(AF_INET, text, a.bytes) == 1) {
		a.family = AF_INET;
	} else {
		CHECK_INT(inet_pton(AF_INET6, text, a.bytes), 1);
		a.family = AF_INET6;
	}
	return a;
}

static struct policy_lists *
load(void)
{
	struct policy_lists *l = NULL;
	char err[512];

	warned[0] = 0;
	CHECK_INT(
	        policy_lists_load(clients, recipients, on_warn, NULL, &l, err),
	        0);
	return l;
}

static void
test_clients(void)
{
	struct policy_lists *l;
	struct grey_addr some = ip("198.51.100.200");
	int nc, nr;

	write_file(clients, "# postgrey whitelist for mail client hostnames\n"
	                    "southwest.com\n"
	                    "  vger.kernel.org   # a comment after it\n"
	                    "/^smtp\\d+\\.tiscali\\.dk$/\n"
	                    "66.216.126.174\n"
	                    "203.0.113\n"
	                    "198.18\n"
	                    "192.0.2.0/25\n"
	                    "2001:db8:50::/48\n"
	                    "\n"
	                    "two words\n"
	                    "/unclosed(/\n");
	write_file(recipients, "");
	l = load();
	policy_lists_count(l, &nc, &nr);
	CHECK_INT(nc, 8);
	CHECK_INT(nr, 0);
	CHECK(strstr(warned, "11: does not look like"));
	CHECK(strstr(warned, "12: a regex that does not compile"));
	/* names: the name, or a name under it, case aside */
	CHECK(policy_lists_client(l, "southwest.com", &some));
	CHECK(policy_lists_client(l, "MX1.SouthWest.com", &some));
	CHECK(!policy_lists_client(l, "notsouthwest.com", &some));
	CHECK(!policy_lists_client(l, "southwest.com.evil.test", &some));
	CHECK(policy_lists_client(l, "vger.kernel.org", &some));
	/* Perl's regexes, case-insensitive */
	CHECK(policy_lists_client(l, "smtp12.Tiscali.dk", &some));
	CHECK(!policy_lists_client(l, "smtpx.tiscali.dk", &some));
	/* no name: never matched by name */
	CHECK(!policy_lists_client(l, "unknown", &some));
	CHECK(!policy_lists_client(l, NULL, &some));
	/* addresses, partial ones, CIDRs */
	CHECK(policy_lists_client(l, NULL, &(struct grey_addr){0}) == false);
	{
		struct grey_addr a1 = ip("66.216.126.174"),
		                 a2 = ip("66.216.126.175"),
		                 a3 = ip("203.0.113.77"), a4 = ip("198.18.9.9"),
		                 a5 = ip("192.0.2.127"), a6 = ip("192.0.2.128"),
		                 a7 = ip("2001:db8:50:1::1"),
		                 a8 = ip("2001:db8:51::1");

		CHECK(policy_lists_client(l, "unknown", &a1));
		CHECK(!policy_lists_client(l, "unknown", &a2));
		CHECK(policy_lists_client(l, "unknown", &a3));
		CHECK(policy_lists_client(l, "unknown", &a4));
		CHECK(policy_lists_client(l, "unknown", &a5));
		CHECK(!policy_lists_client(l, "unknown", &a6));
		CHECK(policy_lists_client(l, "unknown", &a7));
		CHECK(!policy_lists_client(l, "unknown", &a8));
	}
	policy_lists_free(l);
}

static void
test_recipients(void)
{
	struct policy_lists *l;
	char local[160];

	write_file(clients, "");
	write_file(recipients, "postmaster@\n"
	                       "abuse@\n"
	                       "bob@example.org\n"
	                       "lists.example.net\n"
	                       "/^noreply-.*@example\\.com$/\n"
	                       "@nolocal\n");
	snprintf(local, sizeof(local), "%s.local", recipients);
	write_file(local, "carol@example.org\n");
	l = load();
	CHECK(strstr(warned, "6: does not look like an address"));
	CHECK(policy_lists_recipient(l, "postmaster@anything.test"));
	CHECK(policy_lists_recipient(l, "Postmaster+x@anything.test"));
	CHECK(!policy_lists_recipient(l, "postmasterx@anything.test"));
	CHECK(policy_lists_recipient(l, "bob@example.org"));
	CHECK(policy_lists_recipient(l, "BOB+tag@Example.ORG"));
	CHECK(!policy_lists_recipient(l, "bob@example.net"));
	CHECK(!policy_lists_recipient(l, "bobby@example.org"));
	CHECK(policy_lists_recipient(l, "anyone@lists.example.net"));
	CHECK(policy_lists_recipient(l, "anyone@eu.lists.example.net"));
	CHECK(!policy_lists_recipient(l, "anyone@otherlists.example.net"));
	CHECK(policy_lists_recipient(l, "noreply-42@example.com"));
	/* the .local twin is read too */
	CHECK(policy_lists_recipient(l, "carol@example.org"));
	policy_lists_free(l);
	unlink(local);
}

static void
test_unreadable(void)
{
	struct policy_lists *l = NULL;
	char err[512];
	char missing[160];

	snprintf(missing, sizeof(missing), "%s/no-such-file", dir);
	CHECK_INT(policy_lists_load(missing, "", NULL, NULL, &l, err), -ENOENT);
	CHECK(strstr(err, "no-such-file: No such file or directory"));
	/* none configured: an empty list */
	CHECK_INT(policy_lists_load("", "", NULL, NULL, &l, err), 0);
	CHECK(!policy_lists_recipient(l, "postmaster@x.test"));
	policy_lists_free(l);
}

int
main(void)
{
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/gg-lists-XXXXXX");
	CHECK(mkdtemp(dir));
	snprintf(clients, sizeof(clients), "%s/postgrey_whitelist_clients",
	         dir);
	snprintf(recipients, sizeof(recipients),
	         "%s/postgrey_whitelist_recipients", dir);
	RUN(test_clients);
	RUN(test_recipients);
	RUN(test_unreadable);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
	return 0;
}
