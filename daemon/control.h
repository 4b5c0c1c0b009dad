/* SPDX-License-Identifier: GPL-2.0-or-later */
/* greygatectl's unix socket. A request is one line: the arguments, each
 * ended by a NUL, then a newline. The answer is "ok" or "error: why" on
 * the first line, then the output, then the server closes. Root and the
 * greygate group may connect (mode 0660). */
#ifndef GREYGATE_CONTROL_H
#define GREYGATE_CONTROL_H

struct control;
struct gateway;
struct loop;

#define CONTROL_REQUEST_MAX 4096
#define CONTROL_ARGS_MAX 16

/*
 * control_open - bind path (its folder is made if missing) and serve it.
 * A socket left by a dead greygated is replaced; one that answers is
 * another greygated, and an error.
 * Return: 0 or -errno with err set (512 bytes).
 */
int control_open(const char *path, struct loop *loop, struct gateway *gw,
		 struct control **out, char *err);

/* control_close - close the socket and its connections, remove the path. */
void control_close(struct control *c);

#endif
