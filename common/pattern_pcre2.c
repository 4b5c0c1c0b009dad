// SPDX-License-Identifier: GPL-2.0-or-later
/* Patterns with PCRE2 (see pattern.h). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

/* The backtracking one search may take at most: the pattern is the
 * admin's, the subject a client's. */
#define MATCH_LIMIT 100000

const char pattern_syntax[] = "PCRE2";

struct pattern {
	pcre2_code *re;
	pcre2_match_data *md;
	pcre2_match_context *mc;
};

struct pattern *
pattern_compile(const char *text, size_t len, char *err, size_t errlen)
{
	struct pattern *p = calloc(1, sizeof(*p));
	size_t off;
	int code;

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->re = pcre2_compile((PCRE2_SPTR)text, len, PCRE2_CASELESS, &code,
	                      &off, NULL);
	if (!p->re) {
		char what[120];

		pcre2_get_error_message(code, (PCRE2_UCHAR *)what, sizeof(what));
		snprintf(err, errlen, "at byte %zu: %s", off + 1, what);
		free(p);
		return NULL;
	}
	/* Machine code where PCRE2 can make it; interpreted where it cannot,
	 * as under the shipped unit's MemoryDenyWriteExecute=yes. */
	pcre2_jit_compile(p->re, PCRE2_JIT_COMPLETE);
	p->md = pcre2_match_data_create(1, NULL);
	p->mc = pcre2_match_context_create(NULL);
	if (!p->md || !p->mc) {
		pattern_free(p);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pcre2_set_match_limit(p->mc, MATCH_LIMIT);
	return p;
}

int
pattern_search(struct pattern *p, const char *subject)
{
	return pcre2_match(p->re, (PCRE2_SPTR)subject, strlen(subject), 0, 0,
	                   p->md, p->mc) >= 0;
}

void
pattern_free(struct pattern *p)
{
	if (!p)
		return;
	pcre2_code_free(p->re);
	pcre2_match_data_free(p->md);
	pcre2_match_context_free(p->mc);
	free(p);
}
