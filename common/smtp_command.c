// SPDX-License-Identifier: GPL-2.0-or-later
/* The SMTP command recogniser (see smtp_command.h). It runs for every
 * line the sensor hears on the fast path, so a verb is told by its first
 * four bytes folded to lower case, one switch, before any comparison. */
#include "smtp_command.h"

#include <stdint.h>
#include <stdio.h>
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

/* White space as Postfix's tokenizer knows it (isspace, C locale). */
static bool
is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static size_t
skip_spaces(const char *p, size_t i, size_t len)
{
	while (i < len && is_space(p[i]))
		i++;
	return i;
}

static size_t
word_end(const char *p, size_t i, size_t len)
{
	while (i < len && !is_space(p[i]))
		i++;
	return i;
}

/* The verb of the word line[start, end): compared whole, in any case. */
static enum smtp_verb
verb_of(const char *line, size_t start, size_t end)
{
	static const struct {
		const char *upper;
		enum smtp_verb verb;
	} longer[] = {
	        {"STARTTLS", SMTP_VERB_STARTTLS},
	        {"XCLIENT", SMTP_VERB_XCLIENT},
	};
	const unsigned char *u = (const unsigned char *)line + start;
	size_t n = end - start;
	enum smtp_verb verb;

	if (n < 4)
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
	/* (x | 0x20 is a lower-case letter only when x is that letter in
	 * either case: the key matched letters) */
	for (size_t i = 0; i < sizeof(longer) / sizeof(longer[0]); i++)
		if (longer[i].verb == verb)
			return n == strlen(longer[i].upper) &&
			                       same_ci(line + start,
			                               longer[i].upper, n)
			               ? verb
			               : SMTP_VERB_OTHER;
	return n == 4 ? verb : SMTP_VERB_OTHER;
}

/* RFC 5322 atext: what a dot-string's atoms are made of. */
static bool
is_atext(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-/=?^_`{|}~", c) != NULL);
}

static bool
is_label_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* p[0..n) is a domain: labels joined by single dots, or an address
 * literal ("[" printable bytes without brackets, backslash, space or
 * what Postfix's tokenizer nests ('<', '"') "]"). */
static bool
domain_ok(const char *p, size_t n)
{
	size_t label = 0;

	if (n >= 2 && p[0] == '[') {
		if (p[n - 1] != ']')
			return false;
		for (size_t i = 1; i + 1 < n; i++)
			if (!smtp_path_byte_ok((unsigned char)p[i]) ||
			    strchr("[]\\<>\"", p[i]))
				return false;
		return n > 2;
	}
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '.') {
			if (!label)
				return false;
			label = 0;
		} else if (is_label_byte((unsigned char)p[i])) {
			label++;
		} else {
			return false;
		}
	}
	return label > 0;
}

/* p[0..n) is a local part: atext and dots (lenient about where the dots
 * are, as MTAs are), or a quoted string of printable bytes without
 * space, quote, backslash or angle bracket. */
static bool
local_ok(const char *p, size_t n)
{
	if (n >= 2 && p[0] == '"') {
		if (p[n - 1] != '"')
			return false;
		for (size_t i = 1; i + 1 < n; i++)
			if (!smtp_path_byte_ok((unsigned char)p[i]) ||
			    strchr("\"\\<>", p[i]))
				return false;
		return true;
	}
	for (size_t i = 0; i < n; i++)
		if (p[i] != '.' && !is_atext((unsigned char)p[i]))
			return false;
	return n > 0;
}

/* p[0..n) is a Mailbox (local "@" domain), or, for RCPT, the bare
 * "Postmaster" (RFC 5321 4.1.1.3). */
static bool
mailbox_ok(const char *p, size_t n, enum smtp_verb verb)
{
	const char *at;

	if (verb == SMTP_VERB_RCPT && n == 10 && same_ci(p, "POSTMASTER", 10))
		return true;
	/* the local part's end: after its closing quote, or the last '@'
	 * (a dot-string has none of its own) */
	if (n && p[0] == '"') {
		const char *close = memchr(p + 1, '"', n - 1);

		at = close && close + 1 < p + n && close[1] == '@' ? close + 1
		                                                   : NULL;
	} else {
		at = memchr(p, '@', n);
	}
	return at && local_ok(p, (size_t)(at - p)) &&
	       domain_ok(at + 1, n - (size_t)(at - p) - 1);
}

/* A source route (RFC 5321 A-d-l: "@domain,@domain:") at the start of
 * p[0..n): its length with the colon, or 0 when there is none; -1 when it
 * is broken. */
static long
source_route_len(const char *p, size_t n)
{
	const char *colon;
	size_t i = 0;

	if (!n || p[0] != '@')
		return 0;
	colon = memchr(p, ':', n);
	if (!colon)
		return -1;
	while (p + i < colon) {
		const char *end;

		if (p[i] != '@')
			return -1;
		end = memchr(p + i, ',', (size_t)(colon - (p + i)));
		if (!end)
			end = colon;
		if (!domain_ok(p + i + 1, (size_t)(end - (p + i + 1))))
			return -1;
		i = (size_t)(end - p) + (end != colon);
	}
	return (long)(colon - p) + 1;
}

/* The path at line[i..len) after "FROM:" or "TO:" (white space skipped),
 * and the parameters after it. */
static void
parse_path(const char *line, size_t i, size_t len, struct smtp_command *cmd)
{
	size_t start, end, next;
	long route;

	cmd->path_status = SMTP_PATH_BAD;
	i = skip_spaces(line, i, len);
	if (i == len) {
		cmd->path_status = SMTP_PATH_SYNTAX; /* no path at all */
		return;
	}
	cmd->path_bracketed = line[i] == '<';
	if (cmd->path_bracketed) {
		const char *close;

		start = i + 1;
		close = memchr(line + start, '>', len - start);
		if (!close)
			return;
		end = (size_t)(close - line);
		next = end + 1;
		/* a second '<' is nesting to Postfix's tokenizer */
		if (memchr(line + start, '<', end - start))
			return;
		/* "<a@b>c" is one word to Postfix: "a@bc" */
		if (next < len && !is_space(line[next]))
			return;
	} else {
		start = i;
		end = next = word_end(line, start, len);
	}
	/* a source route is dropped (RFC 5321 C: accepted, ignored) */
	route = cmd->path_bracketed
	                ? source_route_len(line + start, end - start)
	                : 0;
	if (route < 0)
		return;
	start += (size_t)route;
	if (end - start > SMTP_PATH_MAX)
		return;
	/* "<>" alone is the null path; any other is a mailbox */
	if (end > start && !mailbox_ok(line + start, end - start, cmd->verb))
		return;
	if (end == start && (!cmd->path_bracketed || route))
		return;
	cmd->path_status = SMTP_PATH_OK;
	cmd->path = line + start;
	cmd->path_len = end - start;
	next = skip_spaces(line, next, len);
	cmd->params = line + next;
	cmd->params_len = len - next;
}

/* MAIL: white space, "FROM:"; RCPT: "TO:" (Postfix's tokenizer ends a
 * word right after either). */
static void
parse_envelope(const char *line, size_t len, size_t verb_end,
               struct smtp_command *cmd)
{
	const char *word = cmd->verb == SMTP_VERB_MAIL ? "FROM:" : "TO:";
	size_t n = strlen(word), i = skip_spaces(line, verb_end, len);

	if (i == verb_end || len - i < n || !same_ci(line + i, word, n)) {
		cmd->path_status = SMTP_PATH_SYNTAX;
		return;
	}
	parse_path(line, i + n, len, cmd);
}

/* BDAT <size> [LAST], white space as anywhere else. */
static void
parse_bdat(struct smtp_command *cmd)
{
	const char *a = cmd->arg;
	size_t i = 0, j, n = cmd->arg_len;
	unsigned long long size = 0;

	while (i < n && a[i] >= '0' && a[i] <= '9') {
		if (size < SMTP_BDAT_SIZE_MAX)
			size = size * 10 + (unsigned long long)(a[i] - '0');
		i++;
	}
	cmd->bdat_size = size < SMTP_BDAT_SIZE_MAX ? size : SMTP_BDAT_SIZE_MAX;
	if (i == 0)
		return;
	j = skip_spaces(a, i, n);
	if (j == n) {
		cmd->bdat_ok = true;
	} else if (j > i && n - j >= 4 && same_ci(a + j, "LAST", 4) &&
	           skip_spaces(a, j + 4, n) == n) {
		cmd->bdat_ok = true;
		cmd->bdat_last = true;
	}
}

void
smtp_command_parse(const char *line, size_t len, struct smtp_command *cmd)
{
	size_t start, verb_end, i;

	memset(cmd, 0, sizeof(*cmd));
	start = skip_spaces(line, 0, len);
	verb_end = word_end(line, start, len);
	cmd->verb = verb_of(line, start, verb_end);
	if (cmd->verb == SMTP_VERB_OTHER)
		return;
	i = skip_spaces(line, verb_end, len);
	cmd->arg = line + i;
	cmd->arg_len = len - i;
	switch (cmd->verb) {
	case SMTP_VERB_HELO:
	case SMTP_VERB_EHLO:
		cmd->helo = cmd->arg;
		cmd->helo_len = word_end(cmd->arg, 0, cmd->arg_len);
		break;
	case SMTP_VERB_MAIL:
	case SMTP_VERB_RCPT:
		parse_envelope(line, len, verb_end, cmd);
		break;
	case SMTP_VERB_BDAT:
		parse_bdat(cmd);
		break;
	default:
		break;
	}
}

/* An ESMTP parameter (RFC 5321 4.1.2): keyword [ "=" value ], the value
 * without what Postfix's tokenizer would read as a quote or a path. */
static bool
param_ok(const char *p, size_t n)
{
	size_t i = 0;

	if (!n || p[0] == '-')
		return false;
	for (; i < n && p[i] != '='; i++)
		if (p[i] == '_' || !is_label_byte((unsigned char)p[i]))
			return false;
	if (i == 0 || i == n)
		return i > 0;
	if (n - i == 1)
		return false; /* "KEY=" without a value */
	if (n - i == 3 && p[i + 1] == '<' && p[i + 2] == '>')
		return true; /* AUTH=<> (RFC 4954 5) */
	for (i++; i < n; i++)
		if (!smtp_path_byte_ok((unsigned char)p[i]) ||
		    strchr("=<>\"\\", p[i]))
			return false;
	return true;
}

/* out[*o...] += s[0..n), if it fits. */
static bool
put(char *out, size_t *o, const char *s, size_t n)
{
	if (*o + n > SMTP_REBUILT_MAX)
		return false;
	memcpy(out + *o, s, n);
	*o += n;
	return true;
}

/* The parameters, checked one by one and joined by single spaces. */
static bool
put_params(char *out, size_t *o, const char *p, size_t n)
{
	size_t i = skip_spaces(p, 0, n);

	while (i < n) {
		size_t end = word_end(p, i, n);

		if (!param_ok(p + i, end - i) || !put(out, o, " ", 1) ||
		    !put(out, o, p + i, end - i))
			return false;
		i = skip_spaces(p, end, n);
	}
	return true;
}

size_t
smtp_command_rebuild(const struct smtp_command *cmd, char *out)
{
	static const char *const verbs[] = {
	        [SMTP_VERB_HELO] = "HELO",         [SMTP_VERB_EHLO] = "EHLO",
	        [SMTP_VERB_DATA] = "DATA",         [SMTP_VERB_RSET] = "RSET",
	        [SMTP_VERB_NOOP] = "NOOP",         [SMTP_VERB_QUIT] = "QUIT",
	        [SMTP_VERB_STARTTLS] = "STARTTLS",
	};
	size_t o = 0, arg_end = word_end(cmd->arg, 0, cmd->arg_len);
	char size[32];
	bool ok;

	out[0] = 0;
	switch (cmd->verb) {
	case SMTP_VERB_HELO:
	case SMTP_VERB_EHLO:
		ok = cmd->helo_len > 0 && put(out, &o, verbs[cmd->verb], 4) &&
		     put(out, &o, " ", 1) &&
		     put(out, &o, cmd->helo, cmd->helo_len);
		for (size_t i = 0; ok && i < cmd->helo_len; i++)
			ok = smtp_path_byte_ok((unsigned char)cmd->helo[i]);
		break;
	case SMTP_VERB_MAIL:
	case SMTP_VERB_RCPT:
		ok = cmd->path_status == SMTP_PATH_OK &&
		     (cmd->verb == SMTP_VERB_MAIL || cmd->path_len) &&
		     put(out, &o,
		         cmd->verb == SMTP_VERB_MAIL ? "MAIL FROM:<"
		                                     : "RCPT TO:<",
		         cmd->verb == SMTP_VERB_MAIL ? 11 : 9) &&
		     put(out, &o, cmd->path, cmd->path_len) &&
		     put(out, &o, ">", 1) &&
		     put_params(out, &o, cmd->params, cmd->params_len);
		break;
	case SMTP_VERB_BDAT:
		ok = cmd->bdat_ok &&
		     put(out, &o, size,
		         (size_t)snprintf(size, sizeof(size), "BDAT %llu%s",
		                          cmd->bdat_size,
		                          cmd->bdat_last ? " LAST" : ""));
		break;
	case SMTP_VERB_NOOP:
		ok = put(out, &o, "NOOP", 4);
		break;
	case SMTP_VERB_DATA:
	case SMTP_VERB_RSET:
	case SMTP_VERB_QUIT:
	case SMTP_VERB_STARTTLS:
		/* (nothing after it but white space) */
		ok = arg_end == 0 &&
		     put(out, &o, verbs[cmd->verb], strlen(verbs[cmd->verb]));
		break;
	default:
		ok = false;
		break;
	}
	if (!ok)
		o = 0;
	out[o] = 0;
	return o;
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
