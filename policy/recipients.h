/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The recipients that exist, checked at the tarpit before greylisting
 * (issue 31): a file of addresses ("bob@example.org") and whole domains
 * ("@example.net": any user there), one a line, # for comments. A
 * recipient at a domain the file names, not listed and with no "@" line
 * for its domain, is unknown: refused 550 at once, no triplet stored.
 * Domains the file does not name are not checked (relay domains, a
 * second MTA's). Sorted once, looked up by bisection. */
#ifndef GREYGATE_RECIPIENTS_H
#define GREYGATE_RECIPIENTS_H

#include <stdbool.h>
#include <stddef.h>

struct recipients;

/*
 * recipients_load - the file at path.
 * @err: why not (the file and line of an entry that is no address)
 * Return: them, or NULL.
 */
struct recipients *recipients_load(const char *path, char *err, size_t len);

/* recipients_free - NULL is fine. */
void recipients_free(struct recipients *r);

/* recipients_unknown - rcpt (normalised: grey_normalize_rcpt) is at a
 * domain the list names and is not in it. */
bool recipients_unknown(const struct recipients *r, const char *rcpt);

/* recipients_count - addresses and domains listed. */
size_t recipients_count(const struct recipients *r);

#endif
