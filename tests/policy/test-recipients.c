// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the recipients that exist (policy/recipients.c) and their
 * use by the decision: an unknown recipient at a listed domain is
 * refused at the tarpit with no triplet kept; domains not listed, "@"
 * domains, the policy door, are not refused; a bad line is refused with
 * its file and line; a client that asked for unknown_suspicious of them
 * within the hour is suspicious (never trusted, the longer delay), its
 * neighbours not, and not after the hour; the tally stays bounded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "policy.h"
#include "store.h"
#include "recipients.h"
#include "unknown_tally.h"

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

/* The store of the latest grey_in (rcpt_from decides on it). */
static struct store *latest_store;

/* A grey over a store of its own in dir (a mkdtemp template), with cfg;
 * closed by grey_done. */
static struct grey *
grey_in(char *dir, const struct grey_config *cfg, struct store **store)
{
	struct grey *grey;

	CHECK(mkdtemp(dir));
	CHECK_INT(store_open(dir, false, store), 0);
	latest_store = *store;
	grey = grey_new(cfg);
	CHECK(grey);
	return grey;
}

static void
grey_done(struct grey *grey, struct store *store, const char *dir)
{
	char cmd[128];

	grey_free(grey);
	store_close(store);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
}

static void
test_decision(void)
{
	char err[256];
	struct grey_config cfg;
	struct store *store;
	struct grey *grey;
	struct grey_decision d;
	int64_t kept;
	char dir[] = "/tmp/greygate-recipients-store-XXXXXX";
	struct grey_attempt a = {.kind = GREY_ATTEMPT_RCPT, .now = 1800000000,
	                         .helo = "h", .sender = "alice@a.test",
	                         .path = GREY_PATH_TARPIT, .reply = 451};

	grey_config_defaults(&cfg);
	grey = grey_in(dir, &cfg, &store);
	grey_set_valid_recipients(grey, load("bob@example.org\n", err));
	a.client.family = AF_INET;
	a.client.bytes[0] = 198;
	a.rcpt = "dave@example.org";
	CHECK_INT(store_decide(store, grey, &a, &d), 0);
	CHECK_INT(d.action, GREY_REFUSE);
	CHECK_INT(d.reason, GREY_REASON_UNKNOWN_RECIPIENT);
	CHECK_INT(grey_get_counters(grey)->refused_recipient, 1);
	CHECK_INT(store_count(store, -1), 0); /* no triplet kept */
	a.rcpt = "bob@example.org";
	CHECK_INT(store_decide(store, grey, &a, &d), 0);
	CHECK_INT(d.action, GREY_GREYLIST);
	/* the policy door: the MTA knows its own users */
	a.rcpt = "dave@example.org";
	a.path = GREY_PATH_POLICY;
	CHECK_INT(store_decide(store, grey, &a, &d), 0);
	CHECK(d.action != GREY_REFUSE);
	/* SPF fail refused, where the site says so */
	a.path = GREY_PATH_TARPIT;
	a.rcpt = "bob@example.org";
	a.refuse_spf = true;
	a.client.bytes[0] = 203;
	CHECK_INT(store_decide(store, grey, &a, &d), 0);
	CHECK_INT(d.action, GREY_REFUSE);
	CHECK_INT(d.reason, GREY_REASON_SPF_FAIL);
	CHECK_INT(grey_get_counters(grey)->refused_spf, 1);
	/* a sender's domain that takes no mail, where the site says so */
	kept = store_count(store, -1);
	a.refuse_spf = false;
	a.client.bytes[0] = 192;
	a.refuse_sender = GREY_REASON_SENDER_DOMAIN;
	CHECK_INT(store_decide(store, grey, &a, &d), 0);
	CHECK_INT(d.action, GREY_REFUSE);
	CHECK_INT(d.reason, GREY_REASON_SENDER_DOMAIN);
	CHECK_STR(grey_reason_name(d.reason), "sender-domain");
	a.refuse_sender = GREY_REASON_SENDER_NULL_MX;
	CHECK_INT(store_decide(store, grey, &a, &d), 0);
	CHECK_INT(d.action, GREY_REFUSE);
	CHECK_STR(grey_reason_name(d.reason), "sender-null-mx");
	CHECK_INT(grey_get_counters(grey)->refused_sender_domain, 2);
	CHECK_INT(store_count(store, -1), kept); /* no triplet kept */
	/* the policy door: the MTA has its own sender checks */
	a.path = GREY_PATH_POLICY;
	CHECK_INT(store_decide(store, grey, &a, &d), 0);
	CHECK(d.action != GREY_REFUSE);
	grey_done(grey, store, dir);
}

/* An attempt at the tarpit from 198.51.100.LAST to rcpt at now. */
static struct grey_decision
rcpt_from(struct grey *grey, int last, const char *rcpt, int64_t now,
          bool trusted)
{
	struct grey_decision d;
	struct grey_attempt a = {.kind = GREY_ATTEMPT_RCPT, .now = now,
	                         .helo = "h", .sender = "alice@a.test",
	                         .rcpt = rcpt, .path = GREY_PATH_TARPIT,
	                         .reply = 451, .trusted = trusted};

	a.client.family = AF_INET;
	a.client.bytes[0] = 198;
	a.client.bytes[1] = 51;
	a.client.bytes[2] = 100;
	a.client.bytes[3] = (uint8_t)last;
	CHECK_INT(store_decide(latest_store, grey, &a, &d), 0);
	return d;
}

/* With unknown_suspicious = limit, n unknown recipients from .LAST, a
 * second apart from at. */
static void
guesses(struct grey *grey, struct grey_config *cfg, uint32_t limit, int last,
        int n, int64_t at)
{
	cfg->unknown_suspicious = limit;
	grey_set_config(grey, cfg);
	for (int i = 0; i < n; i++)
		CHECK_INT(rcpt_from(grey, last, "x@example.org", at + i, false)
		                  .action,
		          GREY_REFUSE);
}

static void
test_guessing_client_is_suspicious(void)
{
	char err[256];
	struct grey_config cfg;
	struct store *store;
	struct grey *grey;
	struct grey_decision d;
	char dir[] = "/tmp/greygate-recipients-store-XXXXXX";
	const int64_t t0 = 1800000000;

	grey_config_defaults(&cfg);
	cfg.unknown_suspicious = 3;
	cfg.suspicious_delay_sec = 900;
	grey = grey_in(dir, &cfg, &store);
	grey_set_valid_recipients(grey, load("bob@example.org\n", err));
	/* two unknown: not yet */
	CHECK_INT(rcpt_from(grey, 7, "x1@example.org", t0, false).action,
	          GREY_REFUSE);
	CHECK_INT(rcpt_from(grey, 7, "x2@example.org", t0 + 1, false).action,
	          GREY_REFUSE);
	d = rcpt_from(grey, 7, "bob@example.org", t0 + 2, false);
	CHECK_INT(d.action, GREY_GREYLIST);
	CHECK_INT(d.wait_sec, 300);
	CHECK_INT(d.unknown_rcpts, 0);
	/* the third: suspicious, the longer delay, never trusted */
	CHECK_INT(rcpt_from(grey, 7, "x3@example.org", t0 + 3, false).action,
	          GREY_REFUSE);
	d = rcpt_from(grey, 7, "carol@elsewhere.example", t0 + 4, true);
	CHECK_INT(d.action, GREY_GREYLIST);
	CHECK_INT(d.wait_sec, 900);
	CHECK_INT(d.unknown_rcpts, 3);
	/* an hour after its last guess it is counted afresh */
	d = rcpt_from(grey, 7, "dan@elsewhere.example",
	              t0 + 3 + UNKNOWN_TALLY_WINDOW_SEC, false);
	CHECK_INT(d.wait_sec, 300);
	CHECK_INT(d.unknown_rcpts, 0);
	/* 0: never suspicious */
	guesses(grey, &cfg, 0, 9, 5, t0 + 10);
	d = rcpt_from(grey, 9, "erin@elsewhere.example", t0 + 20, false);
	CHECK_INT(d.wait_sec, 300);
	/* the guesser's neighbour in the same /24 is not suspicious (last:
	 * its pass is the /24's) */
	guesses(grey, &cfg, 3, 7, 3, t0 + 30);
	d = rcpt_from(grey, 8, "carol@elsewhere.example", t0 + 40, true);
	CHECK_INT(d.action, GREY_PASS);
	CHECK_INT(d.reason, GREY_REASON_TRUSTED);
	grey_done(grey, store, dir);
}

/* Many more guessers than slots: the table stays its size, the latest
 * are counted, one client's count is its own. */
static void
test_tally_bounded(void)
{
	struct unknown_tally *t = unknown_tally_new();
	struct grey_addr a = {.family = AF_INET6};
	const int64_t t0 = 1800000000;

	CHECK(t);
	for (uint32_t i = 0; i < 4 * UNKNOWN_TALLY_SLOTS; i++) {
		memcpy(a.bytes + 12, &i, sizeof(i));
		CHECK_INT(unknown_tally_add(t, &a, t0 + i / 1000), 1);
	}
	/* the latest is there; counted again, 2 */
	CHECK_INT(unknown_tally_count(t, &a, t0 + 20), 1);
	CHECK_INT(unknown_tally_add(t, &a, t0 + 20), 2);
	/* nobody else's count */
	a.bytes[0] = 0x20;
	CHECK_INT(unknown_tally_count(t, &a, t0 + 20), 0);
	unknown_tally_free(t);
}

int
main(void)
{
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	RUN(test_lookup);
	RUN(test_decision);
	RUN(test_guessing_client_is_suspicious);
	RUN(test_tally_bounded);
	unlink(path);
	return 0;
}
