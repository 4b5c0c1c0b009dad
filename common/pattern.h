/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A regular expression an admin wrote (the dynamic-looking PTR names,
 * the policy door's /re/ lines), searched for, in any case, in text a
 * client chose. Two engines, one chosen when greygate is built:
 * pattern_pcre2.c (-Dpcre2=enabled, the default: Perl's syntax, compiled
 * to machine code where the system allows, each search bounded) and
 * pattern_posix.c (the C library's POSIX extended regexes, for the small
 * build). The shipped patterns are written in what both take. */
#ifndef GREYGATE_PATTERN_H
#define GREYGATE_PATTERN_H

#include <stddef.h>

struct pattern;

/* The syntax this build's patterns are written in: "PCRE2" or "POSIX
 * extended". */
extern const char pattern_syntax[];

/*
 * pattern_compile - text (len bytes, no NUL needed) as a caseless
 * pattern.
 * @err: on failure, why (the engine's words, and where PCRE2 says), len
 *       bytes
 * Return: the pattern (pattern_free), or NULL with err set.
 */
struct pattern *pattern_compile(const char *text, size_t len, char *err,
                                size_t errlen);

/* pattern_search - does p match anywhere in subject (NUL-terminated)? A
 * search that would take more than PCRE2's bound on backtracking is no
 * match. */
int pattern_search(struct pattern *p, const char *subject);

/* pattern_free - p's memory (NULL is fine). */
void pattern_free(struct pattern *p);

#endif
