// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the policy delegation protocol: requests in every shape
 * Postfix or a careless client sends (attributes in any order, unknown,
 * empty, given twice, split across reads, several on one connection, bad
 * lines, too long) and postgrey's answers. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "policy_proto.h"

static ssize_t
parse(char *buf, struct policy_request *req)
{
	return policy_request_parse(buf, strlen(buf), req);
}

static void
test_full_request(void)
{
	char buf[] = "request=smtpd_access_policy\n"
	             "protocol_state=RCPT\n"
	             "protocol_name=ESMTP\n"
	             "client_address=203.0.113.10\n"
	             "client_name=mail.example.org\n"
	             "reverse_client_name=mail.example.org\n"
	             "helo_name=mail.example.org\n"
	             "sender=alice@example.org\n"
	             "recipient=bob@example.net\n"
	             "recipient_count=0\n"
	             "queue_id=\n"
	             "instance=1f2e.5a3b.0\n"
	             "size=0\n"
	             "etrn_domain=\n"
	             "stress=\n"
	             "\n"
	             "request=smtpd_access_policy\n";
	struct policy_request req;
	ssize_t n = parse(buf, &req);

	CHECK(n > 0);
	CHECK_STR(buf + n, "request=smtpd_access_policy\n");
	CHECK_STR(req.request, "smtpd_access_policy");
	CHECK_STR(req.protocol_state, "RCPT");
	CHECK_STR(req.client_address, "203.0.113.10");
	CHECK_STR(req.client_name, "mail.example.org");
	CHECK_STR(req.helo_name, "mail.example.org");
	CHECK_STR(req.sender, "alice@example.org");
	CHECK_STR(req.recipient, "bob@example.net");
	CHECK_STR(req.instance, "1f2e.5a3b.0");
	/* present and empty is not absent */
	CHECK(req.etrn_domain && !*req.etrn_domain);
	CHECK_STR(req.stress, "");
	CHECK(req.policy_test_time == NULL);
}

static void
test_shapes(void)
{
	char order[] = "recipient=b@x\nsender=\nrequest=smtpd_access_policy\n"
	               "client_address=2001:db8::1\n\n";
	char twice[] = "sender=a@x\nsender=c@y\n\n";
	char crlf[] = "sender=a@x\r\nrecipient=0\r\n\r\n";
	char value_eq[] = "sender=a=b@x\n\n";
	char empty[] = "\n";
	struct policy_request req;

	CHECK_INT(parse(order, &req), (ssize_t)sizeof(order) - 1);
	CHECK_STR(req.sender, "");
	CHECK_STR(req.recipient, "b@x");
	CHECK_STR(req.client_address, "2001:db8::1");
	CHECK(req.helo_name == NULL);
	CHECK_INT(parse(twice, &req), (ssize_t)sizeof(twice) - 1);
	CHECK_STR(req.sender, "c@y");
	CHECK_INT(parse(crlf, &req), (ssize_t)sizeof(crlf) - 1);
	CHECK_STR(req.sender, "a@x");
	CHECK_STR(req.recipient, "0");
	CHECK_INT(parse(value_eq, &req), (ssize_t)sizeof(value_eq) - 1);
	CHECK_STR(req.sender, "a=b@x");
	/* an empty request: every attribute absent */
	CHECK_INT(parse(empty, &req), 1);
	CHECK(req.request == NULL);
}

/* A request that comes in pieces is read whole once its empty line is
 * in, the same as in one read; the pieces before leave the bytes as
 * they were. */
static void
test_split_reads(void)
{
	const char *whole = "request=smtpd_access_policy\nsender=a@x\n"
	                    "recipient=b@y\n\n";
	char buf[256];

	for (size_t cut = 0; cut < strlen(whole); cut++) {
		struct policy_request req;

		memcpy(buf, whole, cut);
		CHECK_INT(policy_request_parse(buf, cut, &req), 0);
		CHECK(memcmp(buf, whole, cut) == 0);
	}
	memcpy(buf, whole, strlen(whole) + 1);
	{
		struct policy_request req;

		size_t len = strlen(whole);

		CHECK_INT(policy_request_parse(buf, len, &req), (ssize_t)len);
		CHECK_STR(req.recipient, "b@y");
	}
}

static void
test_bad_requests(void)
{
	char no_eq[] = "request=smtpd_access_policy\ngarbage\n\n";
	char no_name[] = "=value\n\n";
	char nul[] = "sender=a\0b\n\n";
	char early_bad[] = "garbage\n"; /* bad before its end came */
	char big[POLICY_REQUEST_MAX + 64];
	struct policy_request req;

	CHECK_INT(parse(no_eq, &req), -EBADMSG);
	CHECK_INT(parse(no_name, &req), -EBADMSG);
	CHECK_INT(policy_request_parse(nul, sizeof(nul) - 1, &req), -EBADMSG);
	CHECK_INT(parse(early_bad, &req), -EBADMSG);
	/* no end within the limit */
	memset(big, 'a', sizeof(big));
	memcpy(big, "sender=", 7);
	CHECK_INT(policy_request_parse(big, sizeof(big), &req), -EMSGSIZE);
	CHECK_INT(policy_request_parse(big, POLICY_REQUEST_MAX - 1, &req), 0);
	/* a request of exactly the limit is read */
	memset(big, 'a', POLICY_REQUEST_MAX);
	memcpy(big, "sender=", 7);
	big[POLICY_REQUEST_MAX - 2] = '\n';
	big[POLICY_REQUEST_MAX - 1] = '\n';
	CHECK_INT(policy_request_parse(big, POLICY_REQUEST_MAX, &req),
	          POLICY_REQUEST_MAX);
}

static void
test_answers(void)
{
	char out[POLICY_ANSWER_MAX];
	struct policy_answer a = {
	        .verdict = POLICY_DEFER,
	        .text_template = "Greylisted, see https://%r/help: %s s, 100%%",
	        .wait_sec = 287,
	        .recipient = "bob@example.net",
	};
	char long_text[2 * POLICY_ANSWER_MAX];
	size_t n;

	n = policy_answer_format(&a, out);
	CHECK_STR(out, "action=DEFER_IF_PERMIT Greylisted, see "
	               "https://example.net/help: 287 s, 100%\n\n");
	CHECK_INT(n, strlen(out));
	/* postgrey's Exchange fix: 4.2.0 when Postfix sent etrn_domain */
	a.etrn_domain = true;
	policy_answer_format(&a, out);
	CHECK(!strncmp(out, "action=DEFER_IF_PERMIT 4.2.0 Greylisted", 39));
	a.text_template = "4.7.1 Come back in %s seconds";
	policy_answer_format(&a, out);
	CHECK_STR(out, "action=DEFER_IF_PERMIT 4.7.1 Come back in 287 "
	               "seconds\n\n");
	/* one line, however the text came */
	a.text_template = "a\nb\rc";
	a.etrn_domain = false;
	policy_answer_format(&a, out);
	CHECK_STR(out, "action=DEFER_IF_PERMIT a b c\n\n");
	memset(long_text, 'x', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = 0;
	a.text_template = long_text;
	n = policy_answer_format(&a, out);
	CHECK(n < POLICY_ANSWER_MAX);
	CHECK_INT(n, strlen(out));
	CHECK(!strcmp(out + n - 3, "x\n\n"));

	a = (struct policy_answer){.verdict = POLICY_PREPEND,
	                           .delay_sec = 312,
	                           .version = "0.1",
	                           .host = "mx.example.net",
	                           .now = 1796083200};
	policy_answer_format(&a, out);
	CHECK_STR(out, "action=PREPEND X-Greylist: delayed 312 seconds by "
	               "greygate-0.1 at mx.example.net; Tue, 01 Dec 2026 "
	               "00:00:00 +0000\n\n");
	a = (struct policy_answer){.verdict = POLICY_DUNNO};
	policy_answer_format(&a, out);
	CHECK_STR(out, "action=DUNNO\n\n");
}

int
main(void)
{
	RUN(test_full_request);
	RUN(test_shapes);
	RUN(test_split_reads);
	RUN(test_bad_requests);
	RUN(test_answers);
	return 0;
}
