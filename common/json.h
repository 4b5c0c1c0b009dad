/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writing JSON strings safely: for the tools' one-object-per-line output. */
#ifndef GREYGATE_JSON_H
#define GREYGATE_JSON_H

#include <stddef.h>
#include <stdio.h>

/* Room json_escape needs for len input bytes: "\u00XX" is the longest. */
#define JSON_ESCAPED_MAX(len) ((len) * 6 + 2)

/* json_put_string - s as a quoted JSON string: control bytes, quotes and
 * backslashes escaped, UTF-8 characters as they are, and any byte that is
 * not part of a valid UTF-8 character as \ufffd, so the output is valid
 * JSON text whatever the wire held. */
void json_put_string(FILE *out, const char *s);

/* json_escape - the len bytes at s escaped as json_put_string does, without
 * quotes, to dst (room for JSON_ESCAPED_MAX(len)); returns the end. */
char *json_escape(char *dst, const char *s, size_t len);

/* json_append_string - s quoted and escaped at dst (room for
 * JSON_ESCAPED_MAX(strlen(s))); returns the end. No stdio: for output
 * built a line at a time. */
char *json_append_string(char *dst, const char *s);

#endif
