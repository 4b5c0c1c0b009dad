/* SPDX-License-Identifier: GPL-2.0-or-later */
/* greygatectl's unix socket. A request is one line: the arguments, each
 * ended by a NUL, then a newline. The answer is "ok" or "error: why" on
 * the first line, then the output, then the server closes.
 * Who may ask: root, and members of the admin group (admin_group), never
 * the child's user, checked with the peer's credentials at accept; the
 * socket (0660) and its folder (0750) belong to that group. A long
 * answer is made a piece at a time while the client reads it, so no
 * listing holds up greygated, and no client holds up another. */
#ifndef GREYGATE_CONTROL_H
#define GREYGATE_CONTROL_H

#include <stdio.h>
#include <sys/types.h>

struct control;
struct loop;

#define CONTROL_REQUEST_MAX 4096
#define CONTROL_ARGS_MAX 16

/* Who may connect: root, the admin group (by primary or supplementary
 * group), never child_uid. */
struct control_access {
	gid_t admin_gid;   /* (gid_t)-1: no admin group (root only) */
	uid_t child_uid;   /* the unprivileged child's user */
	const char *group; /* its name, for messages */
};

/* More of a long answer. Return: 1 while more is to come, 0 at the end,
 * or -errno (the answer ends there). */
typedef int control_more_fn(void *state, FILE *out);

/* More of a long answer that may have nothing yet: as control_more_fn,
 * or CONTROL_MORE_LATER: nothing now; the answer waits (its deadline
 * too) until control_stream_wake(wake) says more is there. */
#define CONTROL_MORE_LATER 2
typedef int control_more_later_fn(void *state, FILE *out, void *wake);

/* A long answer the command left to be made in pieces (more or
 * more_later). */
struct control_stream {
	control_more_fn *more;
	control_more_later_fn *more_later;
	void (*free)(void *state);
	void *state;
};

/* control_stream_wake - a waiting answer has more: ask for it. */
void control_stream_wake(void *wake);

/* What a request is handed to: its arguments, who asked (the peer's
 * credentials, "uid U gid G pid P", for the log); a command with a long
 * answer writes its start to out and leaves the rest to stream
 * (stream->more set). Return: 0, or -errno with err set. */
typedef int control_run_fn(void *ctx, int argc, char **argv, const char *who,
			   FILE *out, struct control_stream *stream, char *err,
			   size_t err_len);

/*
 * control_open - bind path and serve it, each request handed to run(ctx,
 * ...). The socket's folder is made if
 * missing (0750, root and the admin group); the default folder
 * (/run/greygate, which systemd makes for root) is given to the admin
 * group too. A socket left by a dead greygated is replaced; one that
 * answers is another greygated, and an error.
 * Return: 0 or -errno with err set (512 bytes).
 */
int control_open(const char *path, const struct control_access *access,
		 struct loop *loop, control_run_fn *run, void *ctx,
		 struct control **out, char *err);

/* control_close - close the socket and its connections, remove the path. */
void control_close(struct control *c);

#endif
