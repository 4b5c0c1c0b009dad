/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A model of how Postfix's smtpd reads a command line, written for tests
 * from its documented behaviour (smtpd_token(3): words split at white
 * space, "<...>" and "\"...\"" kept whole with nesting, a backslash
 * escaping the next byte, "to:" and "from:" ending a word; the line a C
 * string, so a NUL ends it; the verb compared whole in any case; MAIL and
 * RCPT wanting "from:"/"to:" as their second word and the address as
 * the third). The recogniser's reading of a line must be the MTA's, or a
 * refusal: the fuzz target and the unit test hold common/smtp_command.c
 * to it. Test code only. */
#ifndef GREYGATE_POSTFIX_MODEL_H
#define GREYGATE_POSTFIX_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "smtp_command.h"

struct postfix_reading {
	enum smtp_verb verb;    /* SMTP_VERB_OTHER: none of greygate's */
	bool has_address;       /* MAIL/RCPT with "from:"/"to:" and a third
	                         * word that is no broken quote */
	bool plain;             /* ... and that word an address the model reads
	                         * plainly: no second '<', comment, list or
	                         * escape an RFC 822 parser would act on */
	char address[2048 + 1]; /* plain: the address, brackets and a
	                         * source route left out */
};

void postfix_read(const char *line, size_t len, struct postfix_reading *out);

#endif
