// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer target for the one SMTP command recogniser
 * (common/smtp_command.c), three ways: every line of the input is
 * recognised and each field it gives must lie inside that line; the
 * recogniser must read it as the model of Postfix's tokenizer does
 * (tests/lib/postfix_model.c: the same verb, the same address) or refuse
 * it, and so must the line smtp_command_rebuild writes from it, which
 * the recogniser must read as before (issue 55: the gate forwarded lines
 * Postfix read as other commands and other addresses); and the first
 * three lines, said as EHLO, MAIL and RCPT, must give the sensor and the
 * tarpit the same HELO name, sender and recipient (or neither a triplet):
 * the two readers of what clients send may never disagree. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "postfix_model.h"
#include "smtp_agree.h"
#include "smtp_command.h"

static void
inside(const char *line, size_t len, const char *p, size_t n)
{
	if (n && (!p || p < line || p + n > line + len))
		abort();
}

/* What the recogniser took from line is what Postfix takes from it. */
static void
as_postfix(const char *line, size_t len, const struct smtp_command *cmd)
{
	static struct postfix_reading pf;

	postfix_read(line, len, &pf);
	if (cmd->verb != SMTP_VERB_OTHER && pf.verb != cmd->verb)
		abort();
	if (cmd->path_status != SMTP_PATH_OK)
		return;
	if (!pf.has_address || !pf.plain ||
	    strlen(pf.address) != cmd->path_len ||
	    memcmp(pf.address, cmd->path, cmd->path_len) != 0)
		abort();
}

static void
check_fields(const char *line, size_t len)
{
	static char out[SMTP_REBUILT_MAX + 1];
	struct smtp_command cmd, again;
	size_t n;

	smtp_command_parse(line, len, &cmd);
	as_postfix(line, len, &cmd);
	n = smtp_command_rebuild(&cmd, out);
	if (n) {
		if (n > SMTP_REBUILT_MAX || strlen(out) != n)
			abort();
		smtp_command_parse(out, n, &again);
		as_postfix(out, n, &again);
		if (again.verb != cmd.verb ||
		    again.path_status != cmd.path_status ||
		    again.path_len != cmd.path_len ||
		    (cmd.path_len &&
		     memcmp(again.path, cmd.path, cmd.path_len) != 0))
			abort();
	}
	inside(line, len, cmd.arg, cmd.arg_len);
	inside(line, len, cmd.helo, cmd.helo_len);
	inside(line, len, cmd.params, cmd.params_len);
	if (cmd.path_status == SMTP_PATH_OK) {
		inside(line, len, cmd.path, cmd.path_len);
		if (cmd.path_len > SMTP_PATH_MAX)
			abort();
		for (size_t i = 0; i < cmd.path_len; i++)
			if (!smtp_path_byte_ok((unsigned char)cmd.path[i]))
				abort();
	}
	if ((cmd.path_status != SMTP_PATH_NONE) !=
	    (cmd.verb == SMTP_VERB_MAIL || cmd.verb == SMTP_VERB_RCPT))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *line[3] = {"", "", ""};
	size_t len[3] = {0, 0, 0}, lines = 0, start = 0;
	char s[2048], t[2048];

	for (size_t i = 0; i <= size; i++) {
		if (i < size && data[i] != '\n')
			continue;
		check_fields((const char *)data + start, i - start);
		if (lines < 3) {
			line[lines] = (const char *)data + start;
			len[lines++] = i - start;
		}
		start = i + 1;
	}
	/* Compared when the lines are an EHLO (or HELO), a MAIL and a RCPT
	 * (in another order, an MTA refuses what the harness answers 250);
	 * a line longer than SMTP_LINE_MAX must give neither a triplet. */
	for (size_t k = 0; k < 3; k++) {
		struct smtp_command cmd;

		smtp_command_parse(line[k], len[k], &cmd);
		if (k == 0 ? cmd.verb != SMTP_VERB_EHLO &&
		                     cmd.verb != SMTP_VERB_HELO
		           : cmd.verb !=
		                     (k == 1 ? SMTP_VERB_MAIL : SMTP_VERB_RCPT))
			return 0;
	}
	smtp_agree_sensor(line[0], len[0], line[1], len[1], line[2], len[2], s,
	                  sizeof(s));
	smtp_agree_tarpit(line[0], len[0], line[1], len[1], line[2], len[2], t,
	                  sizeof(t));
	if (strcmp(s, t) != 0)
		abort();
	return 0;
}
