/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One SMTP command line, recognised once for everything in greygate that
 * reads what a client sends (the sensor on the fast path, the tarpit's
 * dialogue): its verb, its argument and, for MAIL FROM and RCPT TO, the
 * path and the ESMTP parameters after it. Pure: (line, len) in, pointers
 * into that line out; nothing is copied or allocated.
 *
 * Where a real MTA is lenient, so is this, so that the tarpit never refuses
 * what the MTA behind it would take and the sensor sees every triplet the
 * MTA accepted: verbs in any case, several spaces between MAIL and FROM,
 * spaces after the colon, and a path without its angle brackets (Postfix's
 * default, strict_rfc821_envelopes = no). What a caller makes of the rest
 * (a syntax error, a refusal) is its own decision. */
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
	SMTP_PATH_BAD,    /* an unclosed '<', a byte that is not printable
	                   * ASCII, or longer than SMTP_PATH_MAX */
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
	const char *path;    /* inside the brackets; path_len 0 for "<>" */
	size_t path_len;
	const char *params; /* the ESMTP parameters after the path, spaces
	                     * before them skipped (SIZE=..., BODY=...) */
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
