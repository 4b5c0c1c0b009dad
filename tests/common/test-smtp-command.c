// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the one SMTP command recogniser: a table of command lines with
 * what it makes of each (verb, HELO name, path, parameters, BDAT size),
 * over the edge cases where the sensor and the tarpit once disagreed
 * (case, several spaces, spaces after the colon, "<>" and a path without
 * brackets, ESMTP parameters, a path over 256 bytes, bytes that are not
 * printable ASCII); then the same lines said to the tarpit's dialogue and
 * heard by the sensor, which must take the same HELO name (its printable
 * bytes, at most 255), sender and recipient from each, or both refuse
 * it. */
#include "check.h"
#include "postfix_model.h"
#include "smtp_agree.h"
#include "smtp_command.h"
#include "smtp_line.h"

#define LONG_PATH_257                                                        \
	"a123456789b123456789c123456789d123456789e123456789f123456789"        \
	"g123456789h123456789i123456789j123456789k123456789l123456789"        \
	"m123456789n123456789o123456789p123456789q123456789r123456789"        \
	"s123456789t123456789u123456789v123456789w123456789x123456789"        \
	"@y123456789z12345"
#define LONG_PATH_256                                                        \
	"a123456789b123456789c123456789d123456789e123456789f123456789"        \
	"g123456789h123456789i123456789j123456789k123456789l123456789"        \
	"m123456789n123456789o123456789p123456789q123456789r123456789"        \
	"s123456789t123456789u123456789v123456789w123456789x123456789"        \
	"@y123456789z1234"

#define ORCPT_2056                                                             \
	LONG_PATH_257 LONG_PATH_257 LONG_PATH_257 LONG_PATH_257 LONG_PATH_257  \
	        LONG_PATH_257 LONG_PATH_257 LONG_PATH_257

struct row {
	const char *line;
	enum smtp_verb verb;
	enum smtp_path_status status;
	const char *path;   /* MAIL, RCPT: the path when OK; HELO: the name */
	const char *params; /* MAIL, RCPT: the parameters when OK */
};

static const struct row rows[] = {
	{"EHLO client.test", SMTP_VERB_EHLO, SMTP_PATH_NONE, "client.test", NULL},
	{"ehlo client.test", SMTP_VERB_EHLO, SMTP_PATH_NONE, "client.test", NULL},
	{"EHLO  spaced.test", SMTP_VERB_EHLO, SMTP_PATH_NONE, "spaced.test", NULL},
	{"HELO name.test extra", SMTP_VERB_HELO, SMTP_PATH_NONE, "name.test", NULL},
	{"HELO", SMTP_VERB_HELO, SMTP_PATH_NONE, "", NULL},
	{"EHLOX a", SMTP_VERB_OTHER, SMTP_PATH_NONE, NULL, NULL},
	{"MAIL FROM:<a@a.test>", SMTP_VERB_MAIL, SMTP_PATH_OK, "a@a.test", ""},
	{"mail from:<a@a.test>", SMTP_VERB_MAIL, SMTP_PATH_OK, "a@a.test", ""},
	{"Mail From:<a@a.test> SIZE=10 BODY=8BITMIME", SMTP_VERB_MAIL,
	 SMTP_PATH_OK, "a@a.test", "SIZE=10 BODY=8BITMIME"},
	{"MAIL FROM: <a@a.test>", SMTP_VERB_MAIL, SMTP_PATH_OK, "a@a.test", ""},
	{"MAIL  FROM:<a@a.test>", SMTP_VERB_MAIL, SMTP_PATH_OK, "a@a.test", ""},
	{"MAIL FROM:a@a.test", SMTP_VERB_MAIL, SMTP_PATH_OK, "a@a.test", ""},
	{"MAIL FROM:a@a.test SIZE=1", SMTP_VERB_MAIL, SMTP_PATH_OK, "a@a.test",
	 "SIZE=1"},
	{"MAIL FROM:<>", SMTP_VERB_MAIL, SMTP_PATH_OK, "", ""},
	{"MAIL FROM:<> SIZE=1", SMTP_VERB_MAIL, SMTP_PATH_OK, "", "SIZE=1"},
	{"MAIL FROM :<a@a.test>", SMTP_VERB_MAIL, SMTP_PATH_SYNTAX, NULL, NULL},
	{"MAIL FROM<a@a.test>", SMTP_VERB_MAIL, SMTP_PATH_SYNTAX, NULL, NULL},
	{"MAIL TO:<a@a.test>", SMTP_VERB_MAIL, SMTP_PATH_SYNTAX, NULL, NULL},
	{"MAIL", SMTP_VERB_MAIL, SMTP_PATH_SYNTAX, NULL, NULL},
	{"MAIL FROM:<a@a.test", SMTP_VERB_MAIL, SMTP_PATH_BAD, NULL, NULL},
	{"MAIL FROM:<a b@a.test>", SMTP_VERB_MAIL, SMTP_PATH_BAD, NULL, NULL},
	{"MAIL FROM:<a\x01@a.test>", SMTP_VERB_MAIL, SMTP_PATH_BAD, NULL, NULL},
	{"MAIL FROM:<\xc3\xa9@a.test>", SMTP_VERB_MAIL, SMTP_PATH_BAD, NULL, NULL},
	{"MAIL FROM:a@a.test>", SMTP_VERB_MAIL, SMTP_PATH_BAD, NULL, NULL},
	{"MAIL FROM:<" LONG_PATH_256 ">", SMTP_VERB_MAIL, SMTP_PATH_OK,
	 LONG_PATH_256, ""},
	{"MAIL FROM:<" LONG_PATH_257 ">", SMTP_VERB_MAIL, SMTP_PATH_BAD, NULL,
	 NULL},
	{"RCPT TO:<b@b.test>", SMTP_VERB_RCPT, SMTP_PATH_OK, "b@b.test", ""},
	{"rcpt to:<b@b.test> NOTIFY=NEVER", SMTP_VERB_RCPT, SMTP_PATH_OK,
	 "b@b.test", "NOTIFY=NEVER"},
	{"RCPT TO:b@b.test", SMTP_VERB_RCPT, SMTP_PATH_OK, "b@b.test", ""},
	{"RCPT TO:<>", SMTP_VERB_RCPT, SMTP_PATH_OK, "", ""},
	{"RCPT TO:", SMTP_VERB_RCPT, SMTP_PATH_SYNTAX, NULL, NULL},
	{"MAIL FROM: ", SMTP_VERB_MAIL, SMTP_PATH_SYNTAX, NULL, NULL},
	/* issue 55: white space as Postfix's tokenizer knows it, before
	 * the verb and after it */
	{"RCPT\tTO:<v1@b.test>", SMTP_VERB_RCPT, SMTP_PATH_OK, "v1@b.test", ""},
	{" RCPT TO:<v2@b.test>", SMTP_VERB_RCPT, SMTP_PATH_OK, "v2@b.test", ""},
	{"\tRCPT TO:<v3@b.test>", SMTP_VERB_RCPT, SMTP_PATH_OK, "v3@b.test", ""},
	{"\rRCPT TO:<v6@b.test>", SMTP_VERB_RCPT, SMTP_PATH_OK, "v6@b.test", ""},
	{"\vRCPT\fTO:\v<v7@b.test>\tNOTIFY=NEVER\r", SMTP_VERB_RCPT,
	 SMTP_PATH_OK, "v7@b.test", "NOTIFY=NEVER\r"},
	{"MAIL\tFROM:<a@a.test>", SMTP_VERB_MAIL, SMTP_PATH_OK, "a@a.test", ""},
	{"EHLO\tname.test", SMTP_VERB_EHLO, SMTP_PATH_NONE, "name.test", NULL},
	{"HELO name.test\textra", SMTP_VERB_HELO, SMTP_PATH_NONE, "name.test",
	 NULL},
	{"\"RCPT\" TO:<a@b.test>", SMTP_VERB_OTHER, SMTP_PATH_NONE, NULL, NULL},
	{"<RCPT> TO:<a@b.test>", SMTP_VERB_OTHER, SMTP_PATH_NONE, NULL, NULL},
	{"RCPT\\ TO:<a@b.test>", SMTP_VERB_OTHER, SMTP_PATH_NONE, NULL, NULL},
	{"RCPT", SMTP_VERB_RCPT, SMTP_PATH_SYNTAX, NULL, NULL},
	{"RCPT TO:TO:<a@b.test>", SMTP_VERB_RCPT, SMTP_PATH_BAD, NULL, NULL},
	/* issue 55: only RFC 5321's Path: nothing another parser could read
	 * as another address */
	{"RCPT TO:<postmaster@example.org<victim4@example.org>>", SMTP_VERB_RCPT,
	 SMTP_PATH_BAD, NULL, NULL},
	{"RCPT TO:<<victim@example.org>>", SMTP_VERB_RCPT, SMTP_PATH_BAD, NULL,
	 NULL},
	{"RCPT TO:<postmaster@example.org>victim@example.org", SMTP_VERB_RCPT,
	 SMTP_PATH_BAD, NULL, NULL},
	{"RCPT TO:postmaster@example.org<victim@example.org>", SMTP_VERB_RCPT,
	 SMTP_PATH_BAD, NULL, NULL},
	{"RCPT TO:<a(comment)@b.test>", SMTP_VERB_RCPT, SMTP_PATH_BAD, NULL,
	 NULL},
	{"RCPT TO:<a@b.test,c@d.test>", SMTP_VERB_RCPT, SMTP_PATH_BAD, NULL,
	 NULL},
	{"RCPT TO:<a\\b@c.test>", SMTP_VERB_RCPT, SMTP_PATH_BAD, NULL, NULL},
	{"RCPT TO:<a@b..test>", SMTP_VERB_RCPT, SMTP_PATH_BAD, NULL, NULL},
	{"RCPT TO:<a@b.test.>", SMTP_VERB_RCPT, SMTP_PATH_BAD, NULL, NULL},
	{"RCPT TO:<a@>", SMTP_VERB_RCPT, SMTP_PATH_BAD, NULL, NULL},
	{"RCPT TO:<@b.test>", SMTP_VERB_RCPT, SMTP_PATH_BAD, NULL, NULL},
	{"RCPT TO:<ab.test>", SMTP_VERB_RCPT, SMTP_PATH_BAD, NULL, NULL},
	{"RCPT TO:<a@b.test;c>", SMTP_VERB_RCPT, SMTP_PATH_BAD, NULL, NULL},
	{"RCPT TO:<\"a b\"@c.test>", SMTP_VERB_RCPT, SMTP_PATH_BAD, NULL, NULL},
	{"RCPT TO:<\"a.b\"@c.test>", SMTP_VERB_RCPT, SMTP_PATH_OK,
	 "\"a.b\"@c.test", ""},
	{"RCPT TO:<first.o'neil+tag@c.test>", SMTP_VERB_RCPT, SMTP_PATH_OK,
	 "first.o'neil+tag@c.test", ""},
	{"RCPT TO:<a@[192.0.2.1]>", SMTP_VERB_RCPT, SMTP_PATH_OK, "a@[192.0.2.1]",
	 ""},
	{"RCPT TO:<a@[IPv6:2001:db8::1]>", SMTP_VERB_RCPT, SMTP_PATH_OK,
	 "a@[IPv6:2001:db8::1]", ""},
	{"RCPT TO:<@r.test,@s.test:a@b.test>", SMTP_VERB_RCPT, SMTP_PATH_OK,
	 "a@b.test", ""},
	{"RCPT TO:<@r.test:>", SMTP_VERB_RCPT, SMTP_PATH_BAD, NULL, NULL},
	{"RCPT TO:<@r..test:a@b.test>", SMTP_VERB_RCPT, SMTP_PATH_BAD, NULL,
	 NULL},
	{"RCPT TO:<Postmaster>", SMTP_VERB_RCPT, SMTP_PATH_OK, "Postmaster", ""},
	/* (found by the fuzz target against the model of Postfix) */
	{"RCPT TO:<a@[IPv6:db8:<v6:2001:db8::1]>", SMTP_VERB_RCPT, SMTP_PATH_BAD,
	 NULL, NULL},
	{"RCPT TO:<a@[\"x]>", SMTP_VERB_RCPT, SMTP_PATH_BAD, NULL, NULL},
	{"MAIL FROM:\"<ca>\"@tls x", SMTP_VERB_MAIL, SMTP_PATH_BAD, NULL, NULL},
	{"MAIL FROM:<Postmaster>", SMTP_VERB_MAIL, SMTP_PATH_BAD, NULL, NULL},
	{"RCPT FROM:<b@b.test>", SMTP_VERB_RCPT, SMTP_PATH_SYNTAX, NULL, NULL},
	{"RCPTTO:<b@b.test>", SMTP_VERB_OTHER, SMTP_PATH_NONE, NULL, NULL},
	{"DATA", SMTP_VERB_DATA, SMTP_PATH_NONE, NULL, NULL},
	{"data", SMTP_VERB_DATA, SMTP_PATH_NONE, NULL, NULL},
	{"DATAX", SMTP_VERB_OTHER, SMTP_PATH_NONE, NULL, NULL},
	{"RSET", SMTP_VERB_RSET, SMTP_PATH_NONE, NULL, NULL},
	{"NOOP x", SMTP_VERB_NOOP, SMTP_PATH_NONE, NULL, NULL},
	{"QUIT", SMTP_VERB_QUIT, SMTP_PATH_NONE, NULL, NULL},
	{"VRFY u", SMTP_VERB_VRFY, SMTP_PATH_NONE, NULL, NULL},
	{"EXPN l", SMTP_VERB_EXPN, SMTP_PATH_NONE, NULL, NULL},
	{"HELP", SMTP_VERB_HELP, SMTP_PATH_NONE, NULL, NULL},
	{"STARTTLS", SMTP_VERB_STARTTLS, SMTP_PATH_NONE, NULL, NULL},
	{"starttls", SMTP_VERB_STARTTLS, SMTP_PATH_NONE, NULL, NULL},
	{"STARTTL", SMTP_VERB_OTHER, SMTP_PATH_NONE, NULL, NULL},
	{"STARTTLSX", SMTP_VERB_OTHER, SMTP_PATH_NONE, NULL, NULL},
	{"START", SMTP_VERB_OTHER, SMTP_PATH_NONE, NULL, NULL},
	{"AUTH PLAIN", SMTP_VERB_AUTH, SMTP_PATH_NONE, NULL, NULL},
	{"XCLIENT ADDR=1.2.3.4", SMTP_VERB_XCLIENT, SMTP_PATH_NONE, NULL, NULL},
	{"XCLI", SMTP_VERB_OTHER, SMTP_PATH_NONE, NULL, NULL},
	{"M@IL FROM:<a@a.test>", SMTP_VERB_OTHER, SMTP_PATH_NONE, NULL, NULL},
	{"", SMTP_VERB_OTHER, SMTP_PATH_NONE, NULL, NULL},
	{"GET / HTTP/1.0", SMTP_VERB_OTHER, SMTP_PATH_NONE, NULL, NULL},
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

static char *
dup_n(const char *p, size_t n)
{
	char *s = malloc(n + 1);

	CHECK(s);
	memcpy(s, p, n);
	s[n] = 0;
	return s;
}

static void
test_the_table(void)
{
	for (size_t i = 0; i < NROWS; i++) {
		const struct row *r = &rows[i];
		struct smtp_command cmd;
		char *got;

		smtp_command_parse(r->line, strlen(r->line), &cmd);
		/* (the row, said only when it is wrong) */
		if (cmd.verb != r->verb || cmd.path_status != r->status)
			fprintf(stderr, "row %zu: %s\n", i, r->line);
		CHECK_INT(cmd.verb, r->verb);
		CHECK_INT(cmd.path_status, r->status);
		if (r->verb == SMTP_VERB_HELO || r->verb == SMTP_VERB_EHLO) {
			got = dup_n(cmd.helo, cmd.helo_len);
			CHECK_STR(got, r->path);
			free(got);
		}
		if (r->status == SMTP_PATH_OK) {
			got = dup_n(cmd.path, cmd.path_len);
			CHECK_STR(got, r->path);
			free(got);
			got = dup_n(cmd.params, cmd.params_len);
			CHECK_STR(got, r->params);
			free(got);
			CHECK(cmd.path >= r->line &&
			      cmd.path + cmd.path_len <= r->line + strlen(r->line));
		}
	}
}

/* The line need not end in NUL: nothing past len is read. */
static void
test_reads_only_len(void)
{
	struct smtp_command cmd;

	smtp_command_parse("MAIL FROM:<a@a.test>XYZ", 19, &cmd);
	CHECK_INT(cmd.path_status, SMTP_PATH_BAD); /* no '>' within len */
	smtp_command_parse("RCPT TO:b@b.test SIZE", 16, &cmd);
	CHECK_INT(cmd.path_status, SMTP_PATH_OK);
	CHECK_INT(cmd.path_len, 8);
	CHECK_INT(cmd.params_len, 0);
	smtp_command_parse("STARTTLS", 5, &cmd);
	CHECK_INT(cmd.verb, SMTP_VERB_OTHER);
	/* a NUL ends the line for a parser of C strings (Postfix's): never
	 * a path that goes on past it, nor a verb that starts after it */
	smtp_command_parse("RCPT TO:<a@b.test>\0x", 20, &cmd);
	CHECK_INT(cmd.path_status, SMTP_PATH_BAD);
	smtp_command_parse("RCPT TO:<a\0@b.test>", 19, &cmd);
	CHECK_INT(cmd.path_status, SMTP_PATH_BAD);
	smtp_command_parse("\0RCPT TO:<a@b.test>", 19, &cmd);
	CHECK_INT(cmd.verb, SMTP_VERB_OTHER);
	smtp_command_parse("RCPT\0TO:<a@b.test>", 18, &cmd);
	CHECK_INT(cmd.verb, SMTP_VERB_OTHER);
}

/* The recogniser reads each line of the table as the model of Postfix
 * does (the same verb, the same address), or refuses it. */
static void
check_as_postfix(const char *line, size_t len)
{
	static struct postfix_reading pf;
	struct smtp_command cmd;
	char path[SMTP_PATH_MAX + 1];

	smtp_command_parse(line, len, &cmd);
	postfix_read(line, len, &pf);
	if (cmd.verb != SMTP_VERB_OTHER && pf.verb != cmd.verb)
		fprintf(stderr, "postfix reads another verb: %s\n", line);
	CHECK(cmd.verb == SMTP_VERB_OTHER || pf.verb == cmd.verb);
	if (cmd.path_status != SMTP_PATH_OK)
		return;
	snprintf(path, sizeof(path), "%.*s", (int)cmd.path_len, cmd.path);
	if (!pf.has_address || !pf.plain || strcmp(pf.address, path))
		fprintf(stderr, "postfix reads another path: %s: %s\n", line,
			pf.address);
	CHECK(pf.has_address && pf.plain);
	CHECK_STR(pf.address, path);
}

static void
test_read_as_postfix_reads(void)
{
	for (size_t i = 0; i < NROWS; i++)
		check_as_postfix(rows[i].line, strlen(rows[i].line));
	/* and the model itself, on what the gate let through once */
	{
		struct postfix_reading pf;

		postfix_read("RCPT\tTO:<v@b.test>", 19, &pf);
		CHECK_INT(pf.verb, SMTP_VERB_RCPT);
		CHECK_STR(pf.address, "v@b.test");
		postfix_read(" RCPT TO:<postmaster@a.test<v@b.test>>", 39, &pf);
		CHECK_INT(pf.verb, SMTP_VERB_RCPT);
		CHECK(pf.has_address && !pf.plain);
		postfix_read("RCPT TO:<a@b.test>\0x", 20, &pf);
		CHECK_STR(pf.address, "a@b.test");
		postfix_read("\"RCPT\" TO:<a@b.test>", 20, &pf);
		CHECK_INT(pf.verb, SMTP_VERB_OTHER);
		postfix_read("MAIL FROM:<\"a>b\"@c.test>", 25, &pf);
		CHECK_STR(pf.address, "\"a>b\"@c.test");
	}
}

/* What goes to the MTA: a line written from the parse, or none. */
static void
test_rebuild(void)
{
	static const struct {
		const char *line, *rebuilt; /* "": not sent on */
	} rows[] = {
	        {"ehlo\tclient.test extra", "EHLO client.test"},
	        {"HELO c.test", "HELO c.test"},
	        {"EHLO", ""},
	        {"EHLO c\x01.test", ""},
	        {"  mail\tfrom: <a@a.test>\tSIZE=10  BODY=8BITMIME ",
	         "MAIL FROM:<a@a.test> SIZE=10 BODY=8BITMIME"},
	        {"MAIL FROM:a@a.test", "MAIL FROM:<a@a.test>"},
	        {"MAIL FROM:<>", "MAIL FROM:<>"},
	        {"MAIL FROM:<a@a.test> AUTH=<>", "MAIL FROM:<a@a.test> AUTH=<>"},
	        {"MAIL FROM:<a@a.test> X=\"y", ""},
	        {"MAIL FROM:<a@a.test> X=<y>", ""},
	        {"MAIL FROM:<a@a.test> X=", ""},
	        {"MAIL FROM:<a@a.test> =Y", ""},
	        {"MAIL FROM:<a@a.test> X_Y=1", ""},
	        {"MAIL FROM:<a@a.test> \xc3\xa9", ""},
	        {"MAIL FROM:<a@a.test> X=\x01", ""},
	        {"RCPT\tTO:<v@b.test>", "RCPT TO:<v@b.test>"},
	        {"\rRCPT TO:<v@b.test> NOTIFY=SUCCESS,FAILURE "
	         "ORCPT=rfc822;v+40b.test",
	         "RCPT TO:<v@b.test> NOTIFY=SUCCESS,FAILURE "
	         "ORCPT=rfc822;v+40b.test"},
	        {"RCPT TO:<@r.test:v@b.test>", "RCPT TO:<v@b.test>"},
	        {"RCPT TO:<>", ""},
	        {"RCPT TO:<postmaster@a.test<v@b.test>>", ""},
	        {"DATA", "DATA"},
	        {"data ", "DATA"},
	        {"DATA x", ""},
	        {"BDAT 10", "BDAT 10"},
	        {"bdat\t0\tlast", "BDAT 0 LAST"},
	        {"BDAT x", ""},
	        {"RSET", "RSET"},
	        {"NOOP whatever", "NOOP"},
	        {"QUIT", "QUIT"},
	        {"QUIT now", ""},
	        {"STARTTLS", "STARTTLS"},
	        {"VRFY a", ""},
	        {"EXPN a", ""},
	        {"HELP", ""},
	        {"AUTH PLAIN", ""},
	        {"XCLIENT ADDR=192.0.2.1", ""},
	        {"XFORWARD ADDR=192.0.2.1", ""},
	        {"ETRN a.test", ""},
	        {"GET / HTTP/1.0", ""},
	};
	char out[SMTP_REBUILT_MAX + 1];
	char *long_line = malloc(SMTP_LINE_MAX + 1);
	struct smtp_command cmd;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t n;

		smtp_command_parse(rows[i].line, strlen(rows[i].line), &cmd);
		n = smtp_command_rebuild(&cmd, out);
		if (strcmp(out, rows[i].rebuilt) != 0)
			fprintf(stderr, "rebuild row %zu: %s\n", i, rows[i].line);
		CHECK_STR(out, rows[i].rebuilt);
		CHECK_INT(n, strlen(rows[i].rebuilt));
		/* what is sent reads the same the second time */
		if (n) {
			struct smtp_command again;
			char out2[SMTP_REBUILT_MAX + 1];

			smtp_command_parse(out, n, &again);
			CHECK_INT(again.verb, cmd.verb);
			check_as_postfix(out, n);
			CHECK_INT(smtp_command_rebuild(&again, out2), n);
			CHECK_STR(out2, out);
		}
	}
	/* a bare path of a line at the limit would grow past it with its
	 * brackets: not sent (the MTA would cut it in two) */
	CHECK(long_line);
	memset(long_line, 'a', SMTP_LINE_MAX);
	memcpy(long_line, "RCPT TO:a@b.test NOTIFY=", 24);
	smtp_command_parse(long_line, SMTP_LINE_MAX, &cmd);
	CHECK_INT(cmd.path_status, SMTP_PATH_OK);
	CHECK_INT(smtp_command_rebuild(&cmd, out), 0);
	free(long_line);
}

static void
test_bdat(void)
{
	struct smtp_command cmd;

	smtp_command_parse("BDAT 1000", 9, &cmd);
	CHECK(cmd.verb == SMTP_VERB_BDAT && cmd.bdat_ok && !cmd.bdat_last);
	CHECK_INT(cmd.bdat_size, 1000);
	smtp_command_parse("bdat 0 last", 11, &cmd);
	CHECK(cmd.bdat_ok && cmd.bdat_last);
	CHECK_INT(cmd.bdat_size, 0);
	smtp_command_parse("BDAT 99999999999999999999999", 28, &cmd);
	CHECK(cmd.bdat_ok);
	CHECK_INT(cmd.bdat_size, SMTP_BDAT_SIZE_MAX);
	smtp_command_parse("BDAT x", 6, &cmd);
	CHECK(!cmd.bdat_ok);
	smtp_command_parse("BDAT 10 MORE", 12, &cmd);
	CHECK(!cmd.bdat_ok);
	smtp_command_parse("BDAT", 4, &cmd);
	CHECK(!cmd.bdat_ok);
}

/* --- the tarpit and the sensor agree (tests/lib/smtp_agree.c) --- */

static void
test_tarpit_and_sensor_agree(void)
{
	static const char *const helos[] = {"EHLO client.test",
					    "EHLO  client.test", "helo c.test x",
					    "EHLO c\x01l\xc3\xa9.test",
					    "EHLO " LONG_PATH_257 LONG_PATH_257};
	static const char *const mails[] = {
		"MAIL FROM:<a@a.test>", "mail from:<a@a.test> SIZE=1",
		"MAIL FROM: <a@a.test>", "MAIL  FROM:<a@a.test>",
		"MAIL FROM:a@a.test", "MAIL FROM:<>",
		"MAIL FROM:<a b@a.test>", "MAIL FROM :<a@a.test>",
		"MAIL FROM:<" LONG_PATH_256 ">", "MAIL FROM:<" LONG_PATH_257 ">",
	};
	static const char *const rcpts[] = {
	        "RCPT TO:<b@b.test>",
	        "rcpt to:<b@b.test> NOTIFY=NEVER",
	        "RCPT TO: <b@b.test>",
	        "RCPT TO:b@b.test",
	        "RCPT TO:<>",
	        "RCPT TO:<b@b.test",
	        "RCPT TO:<" LONG_PATH_257 ">",
	        /* a DSN recipient line of 545 bytes, which both take, and one
	         * over SMTP_LINE_MAX, which both refuse */
	        "RCPT TO:<b@b.test> ORCPT=rfc822;" LONG_PATH_257 LONG_PATH_256,
	        "RCPT TO:<b@b.test> ORCPT=rfc822;" ORCPT_2056,
	};
	char s[4096], t[4096];
	unsigned agreed = 0, seen = 0;

	for (size_t h = 0; h < sizeof(helos) / sizeof(helos[0]); h++)
		for (size_t m = 0; m < sizeof(mails) / sizeof(mails[0]); m++)
			for (size_t r = 0; r < sizeof(rcpts) / sizeof(rcpts[0]);
			     r++) {
				const char *e = helos[h], *f = mails[m],
					   *g = rcpts[r];

				smtp_agree_sensor(e, strlen(e), f, strlen(f), g,
						  strlen(g), s, sizeof(s));
				smtp_agree_tarpit(e, strlen(e), f, strlen(f), g,
						  strlen(g), t, sizeof(t));
				if (strcmp(s, t) != 0)
					fprintf(stderr,
						"%s / %s / %s:\n  sensor: %s\n"
						"  tarpit: %s\n",
						helos[h], mails[m], rcpts[r],
						s, t);
				else
					agreed++;
				seen += s[0] != 0;
			}
	CHECK_INT(agreed, sizeof(helos) / sizeof(helos[0]) *
			      (sizeof(mails) / sizeof(mails[0])) *
			      (sizeof(rcpts) / sizeof(rcpts[0])));
	/* (and most of them were taken, not refused by both) */
	CHECK(seen >= 5 * 7 * 4);
}

/* Where a line ends: at LF, without one CR before it; bytes after the LF
 * wait for the next call; no LF yet, no line. */
static void
test_line_ends(void)
{
	static const struct {
		const char *buf;
		size_t took, len;
	} rows[] = {
	        {"QUIT\r\n", 6, 4},     {"QUIT\n", 5, 4},
	        {"QUIT\r\r\n", 7, 5},   {"QUIT\rNOOP\n", 10, 9},
	        {"\r\n", 2, 0},         {"\n", 1, 0},
	        {"QUIT\r\nNOOP", 6, 4}, {"QUIT\r", 0, 0},
	        {"QUIT", 0, 0},         {"", 0, 0},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t len = 0;

		CHECK_INT(
		        smtp_line_next(rows[i].buf, strlen(rows[i].buf), &len),
		        rows[i].took);
		CHECK_INT(len, rows[i].len);
	}
}

int
main(void)
{
	RUN(test_the_table);
	RUN(test_reads_only_len);
	RUN(test_bdat);
	RUN(test_read_as_postfix_reads);
	RUN(test_rebuild);
	RUN(test_tarpit_and_sensor_agree);
	RUN(test_line_ends);
	return 0;
}
