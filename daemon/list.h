/* SPDX-License-Identifier: GPL-2.0-or-later */
/* greygatectl list (see list.c). */
#ifndef GREYGATE_LIST_H
#define GREYGATE_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct control_stream;
struct gateway;

/*
 * list_start - the header of "list WHAT" (grey, pass, trap or allow) to
 * out, the rows left to stream. grey only: from, to (NULL: any) keep the
 * triplets whose sender, recipient holds that text (any case).
 * Return: 0, or -errno with err set.
 */
int list_start(struct gateway *gw, const char *what, bool json,
               const char *from, const char *to, FILE *out,
               struct control_stream *stream, char *err, size_t len);

#endif
