// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the recipients that exist (policy/recipients.c) and their
 * use by the decision: an unknown recipient at a listed domain is
 * refused at the tarpit with no triplet kept; domains not listed, "@"
 * domains, the policy door, are not refused; a bad line is refused with
 * its file and line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "policy.h"
#include "recipients.h"

static char path[] = "/tmp/greygate-recipients-XXXXXX";

static struct recipients *
load(const char *text, char *err)
{
	FILE *f = fopen(path, "w");

	CHECK(f);
	fputs(text, f);
	fclose(f);
	return recipients_load(path, err, 256);
}

static void
test_lookup(void)
{
	char err[256];
	struct recipients *r = load("# users\nBob@Example.org\n"
	                            "  carol@example.org   # the boss\n"
	                            "@catchall.example\n\n", err);

	CHECK(r);
	CHECK_INT(recipients_count(r), 2 + 2);
	CHECK(!recipients_unknown(r, "bob@example.org"));
	CHECK(!recipients_unknown(r, "carol@example.org"));
	CHECK(recipients_unknown(r, "dave@example.org"));
	CHECK(!recipients_unknown(r, "anyone@catchall.example"));
	CHECK(!recipients_unknown(r, "x@elsewhere.example"));
	CHECK(!recipients_unknown(r, "postmaster"));
	recipients_free(r);
	CHECK(!load("bob@example.org\nnot an address\n", err));
	CHECK(strstr(err, ":2: \"not an address\" is neither"));
	CHECK(!load("bob@\n", err));
	CHECK(!load("a@b@c\n", err));
	CHECK(!recipients_load("/nonexistent/recipients", err, sizeof(err)));
}

static void
test_decision(void)
{
	char err[256];
	struct grey_config cfg;
	struct store *store;
	struct grey *grey;
	struct grey_decision d;
	char dir[] = "/tmp/greygate-recipients-store-XXXXXX";
	struct grey_attempt a = {.kind = GREY_ATTEMPT_RCPT, .now = 1800000000,
	                         .helo = "h", .sender = "alice@a.test",
	                         .path = GREY_PATH_TARPIT, .reply = 451};

	CHECK(mkdtemp(dir));
	CHECK_INT(store_open(dir, false, &store), 0);
	grey_config_defaults(&cfg);
	grey = grey_new(&cfg, store);
	CHECK(grey);
	grey_set_valid_recipients(grey, load("bob@example.org\n", err));
	a.client.family = AF_INET;
	a.client.bytes[0] = 198;
	a.rcpt = "dave@example.org";
	CHECK_INT(grey_decide(grey, &a, &d), 0);
	CHECK_INT(d.action, GREY_REFUSE);
	CHECK_INT(d.reason, GREY_REASON_UNKNOWN_RECIPIENT);
	CHECK_INT(grey_get_counters(grey)->refused_recipient, 1);
	CHECK_INT(store_count(store, -1), 0); /* no triplet kept */
	a.rcpt = "bob@example.org";
	CHECK_INT(grey_decide(grey, &a, &d), 0);
	CHECK_INT(d.action, GREY_GREYLIST);
	/* the policy door: the MTA knows its own users */
	a.rcpt = "dave@example.org";
	a.path = GREY_PATH_POLICY;
	CHECK_INT(grey_decide(grey, &a, &d), 0);
	CHECK(d.action != GREY_REFUSE);
	/* SPF fail refused, where the site says so */
	a.path = GREY_PATH_TARPIT;
	a.rcpt = "bob@example.org";
	a.refuse_spf = true;
	a.client.bytes[0] = 203;
	CHECK_INT(grey_decide(grey, &a, &d), 0);
	CHECK_INT(d.action, GREY_REFUSE);
	CHECK_INT(d.reason, GREY_REASON_SPF_FAIL);
	grey_free(grey);
	store_close(store);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		CHECK_INT(system(cmd), 0);
	}
}

int
main(void)
{
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	RUN(test_lookup);
	RUN(test_decision);
	unlink(path);
	return 0;
}
