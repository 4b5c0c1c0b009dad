/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where an SMTP line ends, and how long one may be: cut one way by
 * everything in greygate that reads SMTP (the sensor on the fast path, the
 * tarpit's server and its join, the hand-off reading the MTA's EHLO, the
 * reply parser), so that a line one of them takes is a line every other
 * takes too.
 *
 * A line ends at LF; one CR before it is not part of the line (a bare LF
 * ends a line as CRLF does: Debian 12's Postfix takes both, and the
 * tarpit must never refuse what the MTA behind it would take). */
#ifndef GREYGATE_SMTP_LINE_H
#define GREYGATE_SMTP_LINE_H

#include <stddef.h>

/* The longest command line read, without its CRLF. RFC 5321 4.5.3.1.4
 * says 512 with the CRLF, and lets extensions raise it: DSN (RFC 3461
 * section 5) adds 500 to a RCPT line and 100 to a MAIL line; Postfix reads
 * up to line_length_limit = 2048. A longer line is skipped to its LF and
 * refused (the tarpit's 500) or not seen (the sensor): by both. */
#define SMTP_LINE_MAX 2048

/*
 * smtp_line_next - the first line in buf.
 * @line_len: its length without the LF and a CR before it
 * Return: the bytes it takes with its LF, or 0 if buf holds no LF yet
 * (*line_len then untouched).
 */
size_t smtp_line_next(const char *buf, size_t len, size_t *line_len);

/*
 * smtp_line_trim - a line's length without the CR that ended it.
 * @len: its bytes up to (not with) the LF
 */
static inline size_t
smtp_line_trim(const char *line, size_t len)
{
	return len > 0 && line[len - 1] == '\r' ? len - 1 : len;
}

#endif
