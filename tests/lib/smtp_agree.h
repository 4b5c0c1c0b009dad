/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The same EHLO, MAIL and RCPT lines heard by the sensor (the MTA
 * answering 250 to each) and said to the tarpit's dialogue: what each
 * takes from them, as "helo <sender> <recipient>", or "" when it takes no
 * triplet. The unit test of the SMTP recogniser and its fuzz target
 * compare the two. */
#ifndef GREYGATE_SMTP_AGREE_H
#define GREYGATE_SMTP_AGREE_H

#include <stddef.h>

void smtp_agree_sensor(const char *ehlo, size_t ehlo_len, const char *mail,
		       size_t mail_len, const char *rcpt, size_t rcpt_len,
		       char *out, size_t size);
void smtp_agree_tarpit(const char *ehlo, size_t ehlo_len, const char *mail,
		       size_t mail_len, const char *rcpt, size_t rcpt_len,
		       char *out, size_t size);

#endif
