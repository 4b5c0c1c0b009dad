/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writing JSON strings safely: for the tools' one-object-per-line output. */
#ifndef GREYGATE_JSON_H
#define GREYGATE_JSON_H

#include <stdio.h>

/* json_put_string - s as a quoted JSON string (control bytes, quotes and
 * backslashes escaped; bytes >= 0x80 as \u00XX so output is always valid
 * JSON whatever the wire held). */
void json_put_string(FILE *out, const char *s);

#endif
