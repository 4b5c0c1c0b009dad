/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An SMTP server's reply, read one way everywhere greygate reads one: by
 * the sensor on the fast path (line by line) and by the hand-off in
 * greygated and in the tarpit (the first whole reply in a buffer). */
#ifndef GREYGATE_SMTP_REPLY_H
#define GREYGATE_SMTP_REPLY_H

#include <stddef.h>

enum smtp_reply_line_kind {
	SMTP_REPLY_BAD,  /* not a reply line: no three digits, or the
			  * fourth byte neither ' ' nor '-' */
	SMTP_REPLY_MORE, /* "250-...": the reply goes on */
	SMTP_REPLY_LAST, /* "250 ..." or "250": the reply's last line */
};

/*
 * smtp_reply_line - one line of a reply, without its CRLF (or bare LF).
 * @code: its three digits as a number (BAD: 0)
 */
enum smtp_reply_line_kind smtp_reply_line(const char *line, size_t len,
					  int *code);

/*
 * smtp_reply_whole - the first whole reply in buf: up to its last line,
 * or up to a line that is no reply line (code 0: never a 2xx, so every
 * caller takes it for a failure, at once rather than at its timeout).
 * @code: its code, or 0
 * Return: its length with the last LF, or 0 if not whole yet.
 */
size_t smtp_reply_whole(const char *buf, size_t len, int *code);

/*
 * smtp_ehlo_line - the line of an EHLO reply ehlo[0..len) that lists
 * keyword kw[0..kl) (in any case, past the greeting's first line).
 * @line_len: its length without CRLF
 * Return: its text after "250-" or "250 ", or NULL if none lists it.
 */
const char *smtp_ehlo_line(const char *ehlo, size_t len, const char *kw,
			   size_t kl, size_t *line_len);

#endif
