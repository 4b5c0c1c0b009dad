// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the tarpit's dialogue state machine: every command's reply,
 * multi-line EHLO, the null sender's 451 moved to DATA, BDAT, bad
 * commands and their cap; asking greygated at RCPT and STARTTLS, what the
 * session is given to keep, each verdict's reply (and none in time), and
 * the recipient caps. */
#include "check.h"
#include "tarpit.h"

static struct tarpit_config cfg;
static struct tarpit_dialogue dlg;
static char out[TARPIT_REPLY_MAX];

static int
say(const char *line)
{
	size_t n;
	int r = tarpit_dialogue_line(&dlg, line, strlen(line), false, out, &n);

	CHECK_INT(n, strlen(out));
	CHECK(n >= 2 && out[n - 2] == '\r' && out[n - 1] == '\n');
	return r;
}

static void
start(void)
{
	tarpit_config_defaults(&cfg);
	cfg.hostname = "mx.test";
	cfg.retry_sec = 300;
	tarpit_dialogue_init(&dlg, &cfg);
}

static void
test_banner_and_ehlo(void)
{
	char b[128];

	start();
	CHECK_INT(tarpit_banner(&cfg, b, sizeof(b)), 19);
	CHECK_STR(b, "220 mx.test ESMTP\r\n");
	CHECK_INT(say("EHLO client.test"), 0);
	CHECK_STR(out, "250-mx.test\r\n250-PIPELINING\r\n250-SIZE 52428800\r\n"
		       "250-8BITMIME\r\n250-ENHANCEDSTATUSCODES\r\n"
		       "250 STARTTLS\r\n");
	cfg.offer_starttls = false;
	cfg.capabilities = " PIPELINING ,, ";
	CHECK_INT(say("ehlo client.test"), 0);
	CHECK_STR(out, "250-mx.test\r\n250 PIPELINING\r\n");
	cfg.capabilities = "";
	CHECK_INT(say("EHLO x"), 0);
	CHECK_STR(out, "250 mx.test\r\n");
	CHECK_INT(say("HELO x"), 0);
	CHECK_STR(out, "250 mx.test\r\n");
}

static void
test_rcpt_gets_451(void)
{
	start();
	say("EHLO c");
	CHECK_INT(say("RCPT TO:<bob@b.test>"), 0);
	CHECK_STR(out, "503 5.5.1 Error: need MAIL command\r\n");
	CHECK_INT(say("MAIL FROM:<alice@a.test> SIZE=100 BODY=8BITMIME"), 0);
	CHECK_STR(out, "250 2.1.0 Ok\r\n");
	CHECK_INT(say("MAIL FROM:<alice@a.test>"), 0);
	CHECK_STR(out, "503 5.5.1 Error: nested MAIL command\r\n");
	CHECK_INT(say("rcpt to:<bob@b.test>"), 0);
	CHECK_STR(out, "451 4.7.1 <bob@b.test>: Greylisted, please try again "
		       "in 300 seconds\r\n");
	CHECK_INT(say("RCPT TO: <carol@b.test> NOTIFY=NEVER"), 0);
	CHECK_STR(out, "451 4.7.1 <carol@b.test>: Greylisted, please try "
		       "again in 300 seconds\r\n");
	CHECK_INT(say("RCPT TO:<>"), 0);
	CHECK_STR(out, "501 5.1.3 Bad recipient address syntax\r\n");
	CHECK_INT(say("DATA"), 0);
	CHECK(out[0] == '4');
	/* DATA ended the transaction: a new MAIL is fine. */
	CHECK_INT(say("MAIL FROM:<alice@a.test>"), 0);
	CHECK_STR(out, "250 2.1.0 Ok\r\n");
	CHECK_INT(say("RSET"), 0);
	CHECK_STR(out, "250 2.0.0 Ok\r\n");
	CHECK_INT(say("QUIT"), TARPIT_CLOSE);
	CHECK_STR(out, "221 2.0.0 Bye\r\n");
}

static void
test_null_sender_defers_at_data(void)
{
	start();
	say("EHLO c");
	say("MAIL FROM:<>");
	CHECK_INT(say("RCPT TO:<bob@b.test>"), 0);
	CHECK_STR(out, "250 2.1.5 Ok\r\n");
	CHECK_INT(say("DATA"), 0);
	CHECK_STR(out, "451 4.7.1 Greylisted, please try again in 300 "
		       "seconds\r\n");
	/* Option off: the 451 stays at RCPT. */
	cfg.null_sender_at_data = false;
	say("MAIL FROM:<>");
	CHECK_INT(say("RCPT TO:<bob@b.test>"), 0);
	CHECK(strncmp(out, "451 4.7.1 <bob@b.test>", 22) == 0);
}

static void
test_other_commands(void)
{
	start();
	CHECK_INT(say("STARTTLS"), 0);
	CHECK_STR(out, "454 4.7.0 TLS not available due to temporary "
		       "reason\r\n");
	CHECK_INT(say("NOOP"), 0);
	CHECK_STR(out, "250 2.0.0 Ok\r\n");
	CHECK_INT(say("VRFY bob"), 0);
	CHECK(strncmp(out, "252 ", 4) == 0);
	CHECK_INT(say("HELP"), 0);
	CHECK_STR(out, "502 5.5.2 Error: command not recognized\r\n");
	CHECK_INT(say("EHLOX"), 0);
	CHECK(strncmp(out, "502 ", 4) == 0);
	CHECK_INT(say("MAIL FROM:<alice@a.test"), 0);
	CHECK_STR(out, "501 5.1.7 Bad sender address syntax\r\n");
	CHECK_INT(say("MAIL FROM:<a\001b@a.test>"), 0);
	CHECK(strncmp(out, "501 ", 4) == 0);
	CHECK_INT(say("MAIL"), 0);
	CHECK_STR(out, "501 5.5.4 Syntax: MAIL FROM:<address>\r\n");
}

/* A path without its brackets is taken, as the MTA behind takes it
 * (Postfix: strict_rfc821_envelopes = no): refused here, a printer's or a
 * script's mail would bounce although the MTA would have taken it. */
static void
test_bare_paths_are_taken(void)
{
	start();
	say("EHLO c");
	CHECK_INT(say("MAIL FROM:alice@a.test SIZE=10"), 0);
	CHECK_STR(out, "250 2.1.0 Ok\r\n");
	CHECK_INT(say("RCPT TO:bob@b.test"), 0);
	CHECK_STR(out, "451 4.7.1 <bob@b.test>: Greylisted, please try again "
		       "in 300 seconds\r\n");
	CHECK_INT(say("RCPT TO bob@b.test"), 0);
	CHECK_STR(out, "501 5.5.4 Syntax: RCPT TO:<address>\r\n");
}

static void
test_bdat_skips_chunk(void)
{
	start();
	say("EHLO c");
	say("MAIL FROM:<alice@a.test>");
	CHECK_INT(say("BDAT 1234 LAST"), 0);
	CHECK(out[0] == '4');
	CHECK_INT(dlg.skip_bytes, 1234);
	CHECK_INT(dlg.in_mail, 0);
	start();
	CHECK_INT(say("BDAT 99999999999999999999"), TARPIT_CLOSE);
	CHECK(strncmp(out, "421 ", 4) == 0);
	start();
	CHECK_INT(say("BDAT -5"), TARPIT_CLOSE);
	start();
	CHECK_INT(say("BDAT 0 LAST"), 0);
	CHECK_INT(dlg.skip_bytes, 0);
}

static void
test_bad_command_cap_and_long_line(void)
{
	size_t n;

	start();
	cfg.max_bad_commands = 3;
	CHECK_INT(tarpit_dialogue_line(&dlg, "x", 1, true, out, &n), 0);
	CHECK_STR(out, "500 5.5.0 Error: line too long\r\n");
	CHECK_INT(say("garbage"), 0);
	CHECK_INT(say("more garbage"), TARPIT_CLOSE);
	CHECK_STR(out, "421 4.7.0 mx.test Error: too many errors\r\n");
	/* NUL bytes inside a line are just bytes. */
	start();
	CHECK_INT(tarpit_dialogue_line(&dlg, "NO\0OP", 5, false, out, &n), 0);
	CHECK(strncmp(out, "502 ", 4) == 0);
}

/* Asks are answered by a reply only once the verdict came. */
static int
say_ask(const char *line)
{
	size_t n;
	int r = tarpit_dialogue_line(&dlg, line, strlen(line), false, out, &n);

	CHECK_INT(n, 0);
	return r;
}

static void
verdict(const struct tarpit_verdict *v, const char *rcpt)
{
	size_t n;

	CHECK_INT(tarpit_dialogue_verdict(&dlg, v, rcpt, out, &n), 0);
	CHECK_INT(n, strlen(out));
}

/* RCPT TO:<rcpt> asked about, refused for why: the reply is want. */
static void
refused_is(uint8_t why, const char *rcpt, const char *want)
{
	struct tarpit_verdict v = {TARPIT_REFUSE, 0, -1, false, why, false};
	char line[64];

	snprintf(line, sizeof(line), "RCPT TO:<%s>", rcpt);
	CHECK_INT(say_ask(line), TARPIT_ASK);
	verdict(&v, rcpt);
	CHECK_STR(out, want);
}

/* Refused (issue 31): 550 at RCPT, saying why, whatever the sender. */
static void
test_refused_verdicts(void)
{
	start();
	dlg.ask = true;
	say("EHLO client.test");
	say("MAIL FROM:<>");
	refused_is(TARPIT_REFUSED_RECIPIENT, "f@b.test",
	           "550 5.1.1 <f@b.test>: Recipient address rejected: User "
	           "unknown\r\n");
	refused_is(TARPIT_REFUSED_SPF, "g@b.test",
	           "550 5.7.23 <g@b.test>: SPF does not let this client send "
	           "for the sender's domain\r\n");
	refused_is(TARPIT_REFUSED_SENDER_DOMAIN, "h@b.test",
	           "550 5.1.8 <h@b.test>: Sender address rejected: Domain not "
	           "found\r\n");
	refused_is(TARPIT_REFUSED_SENDER_NULL_MX, "i@b.test",
	           "550 5.7.27 <i@b.test>: Sender address rejected: Domain does "
	           "not accept mail (null MX)\r\n");
}

static void
test_asks_and_verdicts(void)
{
	struct tarpit_verdict grey = {TARPIT_GREYLIST, 217, -1, false, 0, false};
	struct tarpit_verdict pass = {TARPIT_PASS, 0, -1, false, 0, false};
	struct tarpit_verdict trap = {TARPIT_TRAP, 0, -1, false, 0, false};
	const char *line;
	size_t n;

	start();
	dlg.ask = true;
	say("EHLO  client.test extra");
	CHECK_INT(dlg.said, TARPIT_SAID_HELO);
	CHECK_INT(dlg.arg_len, 11);
	CHECK(!memcmp(dlg.arg, "client.test", 11));
	line = "MAIL FROM:<a@a.test> SIZE=100 BODY=8BITMIME";
	say(line);
	CHECK_INT(dlg.said, TARPIT_SAID_MAIL);
	CHECK_INT(dlg.arg_len, 8);
	CHECK(!memcmp(dlg.arg, "a@a.test", 8));

	CHECK_INT(say_ask("RCPT TO:<bob@b.test> NOTIFY=NEVER"), TARPIT_ASK);
	CHECK_INT(dlg.asking, TARPIT_ASK_RCPT);
	CHECK_INT(dlg.said, TARPIT_SAID_RCPT);
	CHECK_INT(dlg.arg_len, 10);
	verdict(&grey, "bob@b.test");
	CHECK_STR(out, "451 4.7.1 <bob@b.test>: Greylisted, please try again "
		       "in 217 seconds\r\n");
	CHECK_INT(dlg.asking, TARPIT_ASK_NONE);
	CHECK_INT(say_ask("RCPT TO:<c@b.test>"), TARPIT_ASK);
	verdict(&pass, "c@b.test");
	CHECK_STR(out, "451 4.7.1 <c@b.test>: Passed greylisting, please try "
		       "again now\r\n");
	CHECK_INT(say_ask("RCPT TO:<d@b.test>"), TARPIT_ASK);
	verdict(&trap, "d@b.test");
	CHECK_STR(out, "451 4.7.1 <d@b.test>: Greylisted, please try again in "
		       "300 seconds\r\n");
	/* None in time: the plain deferral. */
	CHECK_INT(say_ask("RCPT TO:<e@b.test>"), TARPIT_ASK);
	verdict(NULL, "e@b.test");
	CHECK_STR(out, "451 4.7.1 <e@b.test>: Greylisted, please try again in "
		       "300 seconds\r\n");
	CHECK_INT(dlg.asks, 4);

	/* The null sender: 250 at RCPT, and DATA tells the verdict's wait. */
	say("RSET");
	CHECK_INT(dlg.said, TARPIT_SAID_RESET);
	say("MAIL FROM:<>");
	CHECK_INT(say_ask("RCPT TO:<bob@b.test>"), TARPIT_ASK);
	verdict(&grey, "bob@b.test");
	CHECK_STR(out, "250 2.1.5 Ok\r\n");
	CHECK_INT(say("DATA"), 0);
	CHECK_STR(out, "451 4.7.1 Greylisted, please try again in 217 "
		       "seconds\r\n");

	/* STARTTLS asks too; without a hand-off to the MTA's TLS the
	 * session ends unanswered whatever the verdict (any reply but 220
	 * would let the client go on in the clear). */
	CHECK_INT(say_ask("STARTTLS"), TARPIT_ASK);
	CHECK_INT(dlg.asking, TARPIT_ASK_STARTTLS);
	CHECK_INT(tarpit_dialogue_verdict(&dlg, &pass, "", out, &n),
		  TARPIT_CLOSE);
	CHECK_INT(n, 0);
	CHECK_INT(say_ask("STARTTLS"), TARPIT_ASK);
	CHECK_INT(tarpit_dialogue_verdict(&dlg, NULL, "", out, &n),
		  TARPIT_CLOSE);
	CHECK_INT(n, 0);
}

static void
test_recipient_caps(void)
{
	start();
	dlg.ask = true;
	say("EHLO c");
	say("MAIL FROM:<a@a.test>");
	for (int i = 0; i < TARPIT_RCPTS_MAX; i++) {
		CHECK_INT(say_ask("RCPT TO:<x@b.test>"), TARPIT_ASK);
		verdict(NULL, "x@b.test");
	}
	/* Past 100 in a transaction: 452, nothing asked. */
	CHECK_INT(say("RCPT TO:<x@b.test>"), 0);
	CHECK_STR(out, "452 4.5.3 Error: too many recipients\r\n");
	CHECK_INT(dlg.asks, TARPIT_RCPTS_MAX);
	/* A new transaction may ask again, up to the session's cap. */
	while (dlg.asks < TARPIT_ASKS_MAX) {
		say("RSET");
		say("MAIL FROM:<a@a.test>");
		for (int i = 0; i < TARPIT_RCPTS_MAX; i++) {
			CHECK_INT(say_ask("RCPT TO:<x@b.test>"), TARPIT_ASK);
			verdict(NULL, "x@b.test");
		}
	}
	say("RSET");
	say("MAIL FROM:<a@a.test>");
	CHECK_INT(say("RCPT TO:<x@b.test>"), TARPIT_CLOSE);
	CHECK_STR(out, "421 4.7.0 mx.test Error: too many recipients this "
		       "session\r\n");
}

int
main(void)
{
	RUN(test_banner_and_ehlo);
	RUN(test_rcpt_gets_451);
	RUN(test_null_sender_defers_at_data);
	RUN(test_other_commands);
	RUN(test_bare_paths_are_taken);
	RUN(test_bdat_skips_chunk);
	RUN(test_bad_command_cap_and_long_line);
	RUN(test_asks_and_verdicts);
	RUN(test_refused_verdicts);
	RUN(test_recipient_caps);
	return 0;
}
