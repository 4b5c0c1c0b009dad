// SPDX-License-Identifier: GPL-2.0-or-later
/* Patterns with the C library's POSIX extended regexes (see pattern.h):
 * the small build's, without PCRE2. */
#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

const char pattern_syntax[] = "POSIX extended";

struct pattern {
	regex_t re;
};

/* A backslash before a letter or digit: Perl's \d, \s, \w... POSIX leaves
 * them undefined, glibc reads some (\w) and takes others as the letter
 * (\d matches "d"), musl none: a pattern written for PCRE2 would match
 * something else without a word. Refused, with where. */
static size_t
perl_escape_at(const char *text, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (text[i] != '\\')
			continue;
		if (isalnum((unsigned char)text[i + 1]))
			return i + 1;
		i++; /* an escaped character: \\ or \. */
	}
	return 0;
}

struct pattern *
pattern_compile(const char *text, size_t len, char *err, size_t errlen)
{
	struct pattern *p;
	char *copy;
	size_t at = perl_escape_at(text, len);
	int r;

	if (at) {
		snprintf(err, errlen, "at byte %zu: \\%c is not %s syntax "
		         "(write a bracket expression, such as [0-9])", at,
		         text[at], pattern_syntax);
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	copy = strndup(text, len);
	if (!p || !copy) {
		free(p);
		free(copy);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r = regcomp(&p->re, copy, REG_EXTENDED | REG_ICASE | REG_NOSUB);
	free(copy);
	if (r != 0) {
		char what[120];

		regerror(r, &p->re, what, sizeof(what));
		snprintf(err, errlen, "%s (%s syntax)", what, pattern_syntax);
		free(p);
		return NULL;
	}
	return p;
}

int
pattern_search(struct pattern *p, const char *subject)
{
	return regexec(&p->re, subject, 0, NULL, 0) == 0;
}

void
pattern_free(struct pattern *p)
{
	if (!p)
		return;
	regfree(&p->re);
	free(p);
}
