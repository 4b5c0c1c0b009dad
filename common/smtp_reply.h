/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An SMTP server's reply, as the hand-off reads them from the MTA (in
 * greygated and in the tarpit): where the first whole one ends, and its
 * code. */
#ifndef GREYGATE_SMTP_REPLY_H
#define GREYGATE_SMTP_REPLY_H

#include <stddef.h>

/*
 * smtp_reply_whole - the first whole reply in buf (multi-line ones end
 * at the line whose fourth byte is not '-').
 * @code: its code (three digits read as they are; 0 if not digits)
 * Return: its length with the last LF, or 0 if not whole yet.
 */
size_t smtp_reply_whole(const char *buf, size_t len, int *code);

#endif
