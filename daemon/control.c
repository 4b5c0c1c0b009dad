// SPDX-License-Identifier: GPL-2.0-or-later
/* The control socket (see control.h): accept, read one request, run it,
 * write the answer without blocking greygated, close. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"
#include "gateway-int.h"
#include "log.h"

#define CONTROL_CONNS_MAX 16
#define CONTROL_TIMEOUT_MS 5000

struct control_conn {
	struct control *ctl;
	int fd;
	char req[CONTROL_REQUEST_MAX];
	size_t req_len;
	char *out; /* the answer, while it is written */
	size_t out_len, out_off;
	struct loop_timer deadline;
};

struct control {
	struct loop *loop;
	struct gateway *gw;
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct control_conn *conns[CONTROL_CONNS_MAX];
};

static void
conn_close(struct control_conn *c)
{
	struct control *ctl = c->ctl;

	for (int i = 0; i < CONTROL_CONNS_MAX; i++)
		if (ctl->conns[i] == c)
			ctl->conns[i] = NULL;
	loop_timer_cancel(ctl->loop, &c->deadline);
	loop_del_fd(ctl->loop, c->fd);
	close(c->fd);
	free(c->out);
	free(c);
}

static void
on_deadline(struct loop *loop, struct loop_timer *t, void *ctx)
{
	conn_close(ctx);
}

/* Splits "a\0b\0c\0" into argv. Return: argc, or -1 if malformed. */
static int
split_args(char *req, size_t len, char **argv)
{
	int argc = 0;
	size_t i = 0;

	while (i < len) {
		char *end = memchr(req + i, 0, len - i);

		if (!end || argc == CONTROL_ARGS_MAX)
			return -1;
		argv[argc++] = req + i;
		i = (size_t)(end - req) + 1;
	}
	return argc;
}

static void
answer(struct control_conn *c)
{
	char *argv[CONTROL_ARGS_MAX], err[512] = "", *body = NULL;
	size_t body_len = 0;
	FILE *out = open_memstream(&body, &body_len);
	int argc = split_args(c->req, c->req_len, argv), r;

	if (!out) {
		conn_close(c);
		return;
	}
	if (argc <= 0) {
		snprintf(err, sizeof(err), "malformed request");
		r = -EINVAL;
	} else {
		r = commands_run(c->ctl->gw, argc, argv, out, err, sizeof(err));
	}
	fclose(out);
	if (r < 0) {
		free(body);
		body = NULL;
		if (asprintf(&body, "error: %s\n",
			     err[0] ? err : strerror(-r)) < 0)
			body = NULL;
	} else {
		char *full = NULL;

		if (asprintf(&full, "ok\n%s", body ? body : "") < 0)
			full = NULL;
		free(body);
		body = full;
	}
	if (!body) {
		conn_close(c);
		return;
	}
	c->out = body;
	c->out_len = strlen(body);
	c->out_off = 0;
	loop_mod_fd(c->ctl->loop, c->fd, EPOLLOUT);
}

static void
on_conn(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct control_conn *c = ctx;
	ssize_t n;

	if (c->out) {
		n = write(fd, c->out + c->out_off, c->out_len - c->out_off);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			conn_close(c);
			return;
		}
		c->out_off += (size_t)n;
		if (c->out_off == c->out_len)
			conn_close(c);
		return;
	}
	n = read(fd, c->req + c->req_len, sizeof(c->req) - c->req_len);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	c->req_len += (size_t)n;
	if (c->req[c->req_len - 1] == '\n') {
		c->req_len--;
		answer(c);
	} else if (c->req_len == sizeof(c->req)) {
		conn_close(c);
	}
}

static void
on_accept(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct control *ctl = ctx;
	struct control_conn *c;
	int slot = -1, cfd;

	cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd < 0)
		return;
	for (int i = 0; i < CONTROL_CONNS_MAX && slot < 0; i++)
		if (!ctl->conns[i])
			slot = i;
	c = slot >= 0 ? calloc(1, sizeof(*c)) : NULL;
	if (!c) {
		close(cfd);
		return;
	}
	c->ctl = ctl;
	c->fd = cfd;
	loop_timer_init(&c->deadline, on_deadline, c);
	if (loop_add_fd(loop, cfd, EPOLLIN, on_conn, c) < 0) {
		close(cfd);
		free(c);
		return;
	}
	ctl->conns[slot] = c;
	loop_timer_arm(loop, &c->deadline,
		       loop_now_ms(loop) + CONTROL_TIMEOUT_MS);
}

/* Is a greygated answering on path? */
static bool
socket_answers(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool live;

	if (fd < 0)
		return false;
	live = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0;
	close(fd);
	return live;
}

int
control_open(const char *path, struct loop *loop, struct gateway *gw,
	     struct control **out, char *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct group *grp = getgrnam("greygate");
	gid_t gid = grp ? grp->gr_gid : 0;
	struct control *ctl;
	char dir[sizeof(sa.sun_path)];
	int r;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, 512, "control socket %s: path too long", path);
		return -ENAMETOOLONG;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	snprintf(dir, sizeof(dir), "%s", path);
	/* The folder lets the group through; the socket's mode does the
	 * rest. */
	if (mkdir(dirname(dir), 0750) == 0 && chown(dir, 0, gid) < 0)
		log_warn("control socket folder %s", dir);
	if (socket_answers(&sa)) {
		snprintf(err, 512, "control socket %s: another greygated is "
				   "running",
			 path);
		return -EADDRINUSE;
	}
	unlink(path);
	ctl = calloc(1, sizeof(*ctl));
	if (!ctl)
		return -ENOMEM;
	ctl->loop = loop;
	ctl->gw = gw;
	snprintf(ctl->path, sizeof(ctl->path), "%s", path);
	ctl->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ctl->fd < 0 ||
	    bind(ctl->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0660) < 0 || listen(ctl->fd, 16) < 0) {
		r = -errno;
		snprintf(err, 512, "control socket %s: %s", path, strerror(-r));
		if (ctl->fd >= 0)
			close(ctl->fd);
		free(ctl);
		return r;
	}
	if (chown(path, 0, gid) < 0)
		log_warn("control socket %s: chown", path);
	r = loop_add_fd(loop, ctl->fd, EPOLLIN, on_accept, ctl);
	if (r < 0) {
		snprintf(err, 512, "control socket: %s", strerror(-r));
		close(ctl->fd);
		unlink(path);
		free(ctl);
		return r;
	}
	*out = ctl;
	return 0;
}

void
control_close(struct control *ctl)
{
	if (!ctl)
		return;
	for (int i = 0; i < CONTROL_CONNS_MAX; i++)
		if (ctl->conns[i])
			conn_close(ctl->conns[i]);
	loop_del_fd(ctl->loop, ctl->fd);
	close(ctl->fd);
	unlink(ctl->path);
	free(ctl);
}
