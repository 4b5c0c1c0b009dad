/* SPDX-License-Identifier: GPL-2.0-or-later */
/* greygatectl's pieces: one request to greygated's control socket, and
 * the live view made of many. */
#ifndef GREYGATE_CTL_H
#define GREYGATE_CTL_H

#include <stddef.h>

/*
 * ctl_ask - send one request (its arguments NUL-ended, then a newline)
 * and read the whole answer.
 * @body: greygated's answer after its "ok" line (malloc'd: the caller
 *        frees it)
 * Return: 0; 1 (greygated refused: its error said on stderr); 2 (no
 * greygated to ask, said on stderr).
 */
int ctl_ask(const char *sock_path, const char *req, size_t req_len,
            char **body);

/* ctl_top - greygatectl top [--interval SEC] [--count N]: a frame of the
 * gateway's figures and rates every interval. Return: the exit status. */
int ctl_top(const char *sock_path, int argc, char **argv);

#endif
