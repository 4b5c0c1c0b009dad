/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One SMTP command line, recognised once for everything in greygate that
 * reads what a client sends (the sensor on the fast path, the tarpit's
 * dialogue): its verb, its argument and, for MAIL FROM and RCPT TO, the
 * path and the ESMTP parameters after it. Pure: (line, len) in, pointers
 * into that line out; nothing is copied or allocated.
 *
 * A verb is read as Postfix's tokenizer reads it (smtpd_token.c): white
 * space before it is skipped, it ends at any white space (space, TAB, VT,
 * FF, CR, LF: isspace in the C locale), and it is compared whole in any
 * case. So a line is never a command for the MTA and something else here
 * ("RCPT<TAB>TO:", " RCPT TO:" were forwarded unread by the gate once).
 *
 * A path is RFC 5321's Path and nothing wider: a Mailbox (a dot-string or
 * quoted local part without space or backslash, "@", a domain of letters,
 * digits, '-' and '_' labels or an address literal), or "<>", with an
 * optional source route (dropped); without its angle brackets too
 * (Postfix's default, strict_rfc821_envelopes = no), and the bare
 * "Postmaster" a RCPT may name. Anything the MTA's own parser could read
 * as another address (a '<' inside, text after the '>', a comment, a
 * list) is SMTP_PATH_BAD, so that what greygate decided on is the address
 * the MTA takes.
 *
 * What is sent on to an MTA is never the client's line but the one
 * smtp_command_rebuild writes from this parse. What a caller makes of the
 * rest (a syntax error, a refusal) is its own decision. */
#ifndef GREYGATE_SMTP_COMMAND_H
#define GREYGATE_SMTP_COMMAND_H

#include <stdbool.h>
#include <stddef.h>

/* The longest path, brackets left out (RFC 5321 4.5.3.1.3: 256 octets
 * with them; a longer one is refused by the tarpit and not seen by the
 * sensor). */
#define SMTP_PATH_MAX 256

/* The longest HELO name kept (RFC 5321 4.5.3.1.2: a domain is at most 255
 * octets): every reader cuts a longer one there, so that the sensor, the
 * tarpit and the records greygated keeps name the client alike. */
#define SMTP_HELO_NAME_MAX 255

enum smtp_verb {
	SMTP_VERB_OTHER, /* not one greygate knows (or not a verb at all) */
	SMTP_VERB_HELO,
	SMTP_VERB_EHLO,
	SMTP_VERB_MAIL,
	SMTP_VERB_RCPT,
	SMTP_VERB_DATA,
	SMTP_VERB_BDAT,
	SMTP_VERB_RSET,
	SMTP_VERB_NOOP,
	SMTP_VERB_QUIT,
	SMTP_VERB_VRFY,
	SMTP_VERB_EXPN,
	SMTP_VERB_HELP,
	SMTP_VERB_STARTTLS,
	SMTP_VERB_AUTH,
	SMTP_VERB_XCLIENT,
};

/* What followed MAIL or RCPT. */
enum smtp_path_status {
	SMTP_PATH_NONE,   /* not MAIL or RCPT */
	SMTP_PATH_SYNTAX, /* no "FROM:" after MAIL, no "TO:" after RCPT */
	SMTP_PATH_BAD,    /* not an RFC 5321 Path (an unclosed '<', a
	                   * '<' inside, text after the '>', a byte
	                   * outside the grammar), or longer than
	                   * SMTP_PATH_MAX */
	SMTP_PATH_OK,     /* a path, maybe empty ("<>") */
};

/* One command line, its fields pointing into the line given. */
struct smtp_command {
	enum smtp_verb verb;
	/* after the verb and the spaces that follow it (the HELO name and
	 * what comes after it, BDAT's size, AUTH's mechanism...) */
	const char *arg;
	size_t arg_len;
	/* HELO and EHLO: the first word of arg, the name the client gave */
	const char *helo;
	size_t helo_len;
	/* MAIL FROM: and RCPT TO: */
	enum smtp_path_status path_status;
	bool path_bracketed; /* given as <path>, not bare */
	const char *path;    /* the mailbox inside the brackets (a source
	                      * route left out); path_len 0 for "<>" */
	size_t path_len;
	const char *params; /* the ESMTP parameters after the path, white
	                     * space before them skipped (SIZE=...,
	                     * BODY=...) */
	size_t params_len;
	/* BDAT: the chunk's size (saturated at SMTP_BDAT_SIZE_MAX) and
	 * whether it is the LAST; bdat_ok false for a size that is no
	 * number or is followed by something else than " LAST" */
	bool bdat_ok;
	bool bdat_last;
	unsigned long long bdat_size;
};

/* A BDAT size above this is taken as this (no server skips that much). */
#define SMTP_BDAT_SIZE_MAX (1ull << 40)

/*
 * smtp_command_parse - recognise one command line.
 * @line: the line without its CRLF (or bare LF); need not end in NUL
 * @len: its length
 * @cmd: filled in; every pointer points into line (or is NULL)
 */
void smtp_command_parse(const char *line, size_t len, struct smtp_command *cmd);

/* The longest line smtp_command_rebuild writes, without its CRLF: with
 * the CRLF within Postfix's line_length_limit (2048), so the MTA never
 * cuts it into two commands. */
#define SMTP_REBUILT_MAX (2048 - 2)

/*
 * smtp_command_rebuild - the line an MTA is to read for cmd, written from
 * greygate's parse and never copied from the client's bytes: the verb in
 * upper case, one space where the grammar wants one, the path in angle
 * brackets, each ESMTP parameter checked (keyword, '=', a value without
 * '=', quotes, backslashes or angle brackets but for AUTH=<>) and
 * separated by one space.
 * @cmd: from smtp_command_parse, its line still alive
 * @out: at least SMTP_REBUILT_MAX + 1 bytes; NUL-terminated
 * Return: the line's length without CRLF, or 0 when cmd is none greygate
 * sends on: a verb outside HELO, EHLO, MAIL, RCPT, DATA, BDAT, RSET, NOOP,
 * QUIT and STARTTLS; a path not OK (or empty, for RCPT); a parameter that
 * is none; an argument after DATA, RSET, QUIT or STARTTLS; a HELO without
 * a name; a BDAT without a size; or a line that would be too long.
 */
size_t smtp_command_rebuild(const struct smtp_command *cmd, char *out);

/*
 * smtp_path_byte_ok - whether a byte may be part of a path as greygate
 * keeps it: printable ASCII, no space.
 */
static inline bool
smtp_path_byte_ok(unsigned char c)
{
	return c > 0x20 && c < 0x7f;
}

/*
 * smtp_printable_copy - the printable bytes of p[0..len) (no space, no
 * control, no byte over 0x7e) into out, NUL-terminated, at most size - 1
 * of them: the HELO name as the sensor and the tarpit both keep it.
 * Return: the length copied.
 */
size_t smtp_printable_copy(char *out, size_t size, const char *p, size_t len);

#endif
