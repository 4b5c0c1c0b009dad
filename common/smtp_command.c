// SPDX-License-Identifier: GPL-2.0-or-later
/* The SMTP command recogniser (see smtp_command.h). It runs for every
 * line the sensor hears on the fast path, so a verb is told by its first
 * four bytes folded to lower case, one switch, before any comparison. */
#include "smtp_command.h"

#include <stdint.h>
#include <string.h>

#define KEY(a, b, c, d)                                                        \
	((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 |            \
	 (uint32_t)(d) << 24)

/* line's first n bytes are upper's, letters in any case (ASCII letters
 * differ from their upper case in bit 5 only, and only letters fold onto
 * letters); other bytes compared as they are. */
static bool
same_ci(const char *line, const char *upper, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char want = upper[i];

		if ((want >= 'A' && want <= 'Z' ? (char)(line[i] & ~0x20)
		                                : line[i]) != want)
			return false;
	}
	return true;
}

/* line starts with the verb, then ends or has a space. */
static bool
is_verb(const char *line, size_t len, const char *upper, size_t n)
{
	return len >= n && same_ci(line, upper, n) &&
	       (len == n || line[n] == ' ');
}

static size_t
skip_spaces(const char *p, size_t i, size_t len)
{
	while (i < len && p[i] == ' ')
		i++;
	return i;
}

static enum smtp_verb
verb_of(const char *line, size_t len, size_t *verb_len)
{
	static const struct {
		const char *upper;
		enum smtp_verb verb;
	} longer[] = {
	        {"STARTTLS", SMTP_VERB_STARTTLS},
	        {"XCLIENT", SMTP_VERB_XCLIENT},
	};
	const unsigned char *u = (const unsigned char *)line;
	enum smtp_verb verb;

	if (len < 4)
		return SMTP_VERB_OTHER;
	switch (KEY(u[0] | 0x20, u[1] | 0x20, u[2] | 0x20, u[3] | 0x20)) {
	case KEY('h', 'e', 'l', 'o'):
		verb = SMTP_VERB_HELO;
		break;
	case KEY('e', 'h', 'l', 'o'):
		verb = SMTP_VERB_EHLO;
		break;
	case KEY('m', 'a', 'i', 'l'):
		verb = SMTP_VERB_MAIL;
		break;
	case KEY('r', 'c', 'p', 't'):
		verb = SMTP_VERB_RCPT;
		break;
	case KEY('d', 'a', 't', 'a'):
		verb = SMTP_VERB_DATA;
		break;
	case KEY('b', 'd', 'a', 't'):
		verb = SMTP_VERB_BDAT;
		break;
	case KEY('r', 's', 'e', 't'):
		verb = SMTP_VERB_RSET;
		break;
	case KEY('n', 'o', 'o', 'p'):
		verb = SMTP_VERB_NOOP;
		break;
	case KEY('q', 'u', 'i', 't'):
		verb = SMTP_VERB_QUIT;
		break;
	case KEY('v', 'r', 'f', 'y'):
		verb = SMTP_VERB_VRFY;
		break;
	case KEY('e', 'x', 'p', 'n'):
		verb = SMTP_VERB_EXPN;
		break;
	case KEY('h', 'e', 'l', 'p'):
		verb = SMTP_VERB_HELP;
		break;
	case KEY('a', 'u', 't', 'h'):
		verb = SMTP_VERB_AUTH;
		break;
	case KEY('s', 't', 'a', 'r'):
		verb = SMTP_VERB_STARTTLS;
		break;
	case KEY('x', 'c', 'l', 'i'):
		verb = SMTP_VERB_XCLIENT;
		break;
	default:
		return SMTP_VERB_OTHER;
	}
	for (size_t i = 0; i < sizeof(longer) / sizeof(longer[0]); i++) {
		size_t n = strlen(longer[i].upper);

		if (longer[i].verb != verb)
			continue;
		if (!is_verb(line, len, longer[i].upper, n))
			return SMTP_VERB_OTHER;
		*verb_len = n;
		return verb;
	}
	/* (x | 0x20 is a lower-case letter only when x is that letter in
	 * either case: the key matched letters) */
	if (len > 4 && line[4] != ' ')
		return SMTP_VERB_OTHER;
	*verb_len = 4;
	return verb;
}

/* The path at line[i..len) after "FROM:" or "TO:" (spaces skipped), and
 * the parameters after it. */
static void
parse_path(const char *line, size_t i, size_t len, struct smtp_command *cmd)
{
	size_t start, end, next;

	i = skip_spaces(line, i, len);
	cmd->path_bracketed = i < len && line[i] == '<';
	if (cmd->path_bracketed) {
		const char *close;

		start = i + 1;
		close = memchr(line + start, '>', len - start);
		if (!close) {
			cmd->path_status = SMTP_PATH_BAD;
			return;
		}
		end = (size_t)(close - line);
		next = end + 1;
	} else {
		const char *space;

		start = i;
		space = memchr(line + start, ' ', len - start);
		end = space ? (size_t)(space - line) : len;
		next = end;
	}
	if (end - start > SMTP_PATH_MAX) {
		cmd->path_status = SMTP_PATH_BAD;
		return;
	}
	/* every byte checked without a branch each: paths are short */
	unsigned bad = 0;
	for (size_t k = start; k < end; k++) {
		unsigned char c = (unsigned char)line[k];

		bad |= (unsigned)!smtp_path_byte_ok(c) |
		       ((unsigned)!cmd->path_bracketed &
		        (unsigned)(c == '<' || c == '>'));
	}
	if (bad) {
		cmd->path_status = SMTP_PATH_BAD;
		return;
	}
	cmd->path_status = SMTP_PATH_OK;
	cmd->path = line + start;
	cmd->path_len = end - start;
	next = skip_spaces(line, next, len);
	cmd->params = line + next;
	cmd->params_len = len - next;
}

/* MAIL: 1+ spaces, "FROM:"; RCPT: "TO:". */
static void
parse_envelope(const char *line, size_t len, size_t verb_len,
               struct smtp_command *cmd)
{
	const char *word = cmd->verb == SMTP_VERB_MAIL ? "FROM:" : "TO:";
	size_t n = strlen(word), i = skip_spaces(line, verb_len, len);

	if (i == verb_len || len - i < n || !same_ci(line + i, word, n)) {
		cmd->path_status = SMTP_PATH_SYNTAX;
		return;
	}
	parse_path(line, i + n, len, cmd);
}

/* BDAT <size> [LAST] */
static void
parse_bdat(struct smtp_command *cmd)
{
	const char *a = cmd->arg;
	size_t i = 0, n = cmd->arg_len;
	unsigned long long size = 0;

	while (i < n && a[i] >= '0' && a[i] <= '9') {
		if (size < SMTP_BDAT_SIZE_MAX)
			size = size * 10 + (unsigned long long)(a[i] - '0');
		i++;
	}
	cmd->bdat_size = size < SMTP_BDAT_SIZE_MAX ? size : SMTP_BDAT_SIZE_MAX;
	if (i == 0)
		return;
	if (i == n) {
		cmd->bdat_ok = true;
	} else if (n - i == 5 && same_ci(a + i, " LAST", 5)) {
		cmd->bdat_ok = true;
		cmd->bdat_last = true;
	}
}

void
smtp_command_parse(const char *line, size_t len, struct smtp_command *cmd)
{
	size_t verb_len = 0, i;

	memset(cmd, 0, sizeof(*cmd));
	cmd->verb = verb_of(line, len, &verb_len);
	if (cmd->verb == SMTP_VERB_OTHER)
		return;
	i = skip_spaces(line, verb_len, len);
	cmd->arg = line + i;
	cmd->arg_len = len - i;
	switch (cmd->verb) {
	case SMTP_VERB_HELO:
	case SMTP_VERB_EHLO: {
		const char *space = memchr(cmd->arg, ' ', cmd->arg_len);

		cmd->helo = cmd->arg;
		cmd->helo_len =
		        space ? (size_t)(space - cmd->arg) : cmd->arg_len;
		break;
	}
	case SMTP_VERB_MAIL:
	case SMTP_VERB_RCPT:
		parse_envelope(line, len, verb_len, cmd);
		break;
	case SMTP_VERB_BDAT:
		parse_bdat(cmd);
		break;
	default:
		break;
	}
}

size_t
smtp_printable_copy(char *out, size_t size, const char *p, size_t len)
{
	size_t n = 0;

	if (size == 0)
		return 0;
	for (size_t i = 0; i < len && n + 1 < size; i++)
		if (smtp_path_byte_ok((unsigned char)p[i]))
			out[n++] = p[i];
	out[n] = 0;
	return n;
}
