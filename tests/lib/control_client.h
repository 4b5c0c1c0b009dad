/* SPDX-License-Identifier: GPL-2.0-or-later */
/* greygatectl's side of the control socket, for the daemon's unit tests:
 * one request, its whole answer, the server's loop turning meanwhile. */
#ifndef GREYGATE_TEST_CONTROL_CLIENT_H
#define GREYGATE_TEST_CONTROL_CLIENT_H

#include "loop.h"

/* control_ask - the arguments (NULL-ended) as greygatectl sends them to
 * the socket at path; loop turns until the server closes (5 s at most:
 * else the test fails). Return: the answer ("ok\n..." or "error: ..."),
 * valid until the next call. */
const char *control_ask(struct loop *loop, const char *path, const char *first,
                        ...);

#endif
