// SPDX-License-Identifier: GPL-2.0-or-later
/* The control socket (see control.h): accept (checking who asks), read
 * one request, run it, write the answer without blocking greygated (a
 * long one a piece at a time), close. */
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

#include "accept_pause.h"
#include "control.h"
#include "log.h"

#define CONTROL_CONNS_MAX 64
/* greygatectl sends its request at once: a client that has not within
 * this long is making others wait. */
#define CONTROL_REQUEST_MS 2000
/* A client that reads nothing of its answer for this long is dropped. */
#define CONTROL_STALL_MS 10000
/* A long answer is made again once less than this waits to be sent. */
#define CONTROL_REFILL_BYTES 65536
#define CONTROL_DEFAULT_DIR "/run/greygate"

struct control_conn {
	struct control *ctl;
	int fd;
	uint64_t accepted_ms;
	char req[CONTROL_REQUEST_MAX];
	size_t req_len;
	char *out; /* the answer so far, while it is written */
	size_t out_len, out_off;
	bool answering;
	bool refused; /* not root, not of the admin group: told so */
	char who[128]; /* the peer: "uid U gid G pid P", for the log */
	struct control_stream stream; /* more to come (stream.more) */
	bool waiting; /* stream.more_later had nothing: until woken */
	struct loop_timer deadline;
};

struct control {
	struct loop *loop;
	control_run_fn *run; /* each request's */
	void *run_ctx;
	struct control_access access;
	int fd;
	struct accept_pause pause; /* out of descriptors: rests, no spin */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct control_conn *conns[CONTROL_CONNS_MAX];
	uint64_t refused;
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
	if (c->stream.free)
		c->stream.free(c->stream.state);
	free(c->out);
	free(c);
}

static void
on_deadline(struct loop *loop, struct loop_timer *t, void *ctx)
{
	conn_close(ctx);
}

static void
arm_deadline(struct control_conn *c, uint32_t ms)
{
	loop_timer_arm(c->ctl->loop, &c->deadline,
		       loop_now_ms(c->ctl->loop) + ms);
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

/* Appends the next piece of a long answer to what waits to be sent.
 * Return: false if the connection was closed. */
static bool
refill(struct control_conn *c)
{
	char *piece = NULL;
	size_t len = 0;
	FILE *out;
	int r;

	if (!c->stream.more && !c->stream.more_later)
		return true;
	out = open_memstream(&piece, &len);
	if (!out) {
		conn_close(c);
		return false;
	}
	r = c->stream.more ? c->stream.more(c->stream.state, out)
			   : c->stream.more_later(c->stream.state, out, c);
	fclose(out);
	c->waiting = r == CONTROL_MORE_LATER;
	if (r <= 0) {
		if (r < 0)
			log_warnx("control: an answer ended early: %s",
				  strerror(-r));
		c->stream.free(c->stream.state);
		memset(&c->stream, 0, sizeof(c->stream));
	}
	if (len) {
		char *grown;

		/* What was sent is dropped before the piece is added. */
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
		grown = realloc(c->out, c->out_len + len);
		if (!grown) {
			free(piece);
			conn_close(c);
			return false;
		}
		c->out = grown;
		memcpy(c->out + c->out_len, piece, len);
		c->out_len += len;
	}
	free(piece);
	return true;
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
	if (c->refused) {
		snprintf(err, sizeof(err),
			 "permission denied: greygatectl is for root and the "
			 "%s group",
			 c->ctl->access.group);
		r = -EPERM;
	} else if (argc <= 0) {
		snprintf(err, sizeof(err), "malformed request");
		r = -EINVAL;
	} else {
		r = c->ctl->run(c->ctl->run_ctx, argc, argv, c->who, out,
				&c->stream, err, sizeof(err));
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
	c->answering = true;
	c->out = body;
	c->out_len = strlen(body);
	c->out_off = 0;
	arm_deadline(c, CONTROL_STALL_MS);
	loop_mod_fd(c->ctl->loop, c->fd, EPOLLOUT);
}

static void
write_some(struct control_conn *c)
{
	ssize_t n;

	/* (an answer that said "later" is asked again once woken only) */
	if (!c->waiting && c->out_len - c->out_off < CONTROL_REFILL_BYTES &&
	    !refill(c))
		return;
	if (c->out_off == c->out_len && c->waiting) {
		/* Nothing to send until the stream has more. */
		loop_mod_fd(c->ctl->loop, c->fd, 0);
		return;
	}
	if (c->out_off == c->out_len) {
		conn_close(c); /* all sent */
		return;
	}
	n = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	c->out_off += (size_t)n;
	arm_deadline(c, CONTROL_STALL_MS);
	if (c->out_off == c->out_len && !c->stream.more &&
	    !c->stream.more_later)
		conn_close(c);
}

void
control_stream_wake(void *wake)
{
	struct control_conn *c = wake;

	c->waiting = false;
	arm_deadline(c, CONTROL_STALL_MS);
	loop_mod_fd(c->ctl->loop, c->fd, EPOLLOUT);
}

static void
on_conn(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct control_conn *c = ctx;
	ssize_t n;

	if (c->answering) {
		write_some(c);
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

/* Is the peer root, or of the admin group, and not the child's user?
 * Writes why not to why. */
static bool
peer_allowed(const struct control *ctl, int fd, char *why, size_t len)
{
	const struct control_access *a = &ctl->access;
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	gid_t groups[256];
	socklen_t gl = sizeof(groups);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
		snprintf(why, len, "peer unknown: %s", strerror(errno));
		return false;
	}
	snprintf(why, len, "uid %u gid %u pid %d", (unsigned)cred.uid,
		 (unsigned)cred.gid, (int)cred.pid);
	if (cred.uid == 0)
		return true;
	/* The child's user never, even if someone put it in the group: it
	 * is the side that talks to the internet. */
	if (cred.uid == a->child_uid || a->admin_gid == (gid_t)-1)
		return false;
	if (cred.gid == a->admin_gid)
		return true;
	/* Supplementary groups as they were at connect (Linux 4.13). */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &gl) < 0)
		return false;
	for (size_t i = 0; i < gl / sizeof(*groups); i++)
		if (groups[i] == a->admin_gid)
			return true;
	return false;
}

/* The first and every hundredth refusal is logged: a loop of them must
 * not fill the log. */
static void
log_refusal(struct control *ctl, const char *who)
{
	if (ctl->refused++ % 100 == 0)
		log_warnx("control: refused %s: not root, not in group %s "
			  "(%llu refused so far)",
			  who, ctl->access.group,
			  (unsigned long long)ctl->refused);
}

/* A slot for a new connection: a free one, or the one that has waited
 * longest without saying its request (it is making others wait). */
static int
free_slot(struct control *ctl)
{
	int oldest = -1;

	for (int i = 0; i < CONTROL_CONNS_MAX; i++) {
		struct control_conn *c = ctl->conns[i];

		if (!c)
			return i;
		if (!c->answering &&
		    (oldest < 0 ||
		     c->accepted_ms < ctl->conns[oldest]->accepted_ms))
			oldest = i;
	}
	if (oldest >= 0)
		conn_close(ctl->conns[oldest]);
	return oldest;
}

static void
on_accept(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct control *ctl = ctx;
	struct control_conn *c;
	char who[128];
	int slot, cfd;

	cfd = accept_pause_accept(&ctl->pause, NULL, NULL);
	if (cfd < 0)
		return;
	slot = free_slot(ctl);
	c = slot >= 0 ? calloc(1, sizeof(*c)) : NULL;
	if (!c) {
		close(cfd);
		return;
	}
	c->ctl = ctl;
	c->fd = cfd;
	c->accepted_ms = loop_now_ms(loop);
	/* A refused peer is answered like any other (its request is read
	 * first: closing on unread bytes would reset the connection before
	 * it could read why). */
	if (!peer_allowed(ctl, cfd, who, sizeof(who))) {
		c->refused = true;
		log_refusal(ctl, who);
	}
	snprintf(c->who, sizeof(c->who), "%s", who);
	loop_timer_init(&c->deadline, on_deadline, c);
	if (loop_add_fd(loop, cfd, EPOLLIN, on_conn, c) < 0) {
		close(cfd);
		free(c);
		return;
	}
	ctl->conns[slot] = c;
	arm_deadline(c, CONTROL_REQUEST_MS);
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

/* The socket's folder: made if missing; given to root and the admin
 * group (0750) if greygated made it, or it is the default one, which
 * systemd's RuntimeDirectory= makes for root alone. A folder the admin
 * chose is left as it is. */
static int
prepare_folder(const char *path, gid_t gid, char *err)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bool ours;

	snprintf(dir, sizeof(dir), "%s", path);
	dirname(dir);
	ours = mkdir(dir, 0750) == 0;
	if (!ours && errno != EEXIST) {
		snprintf(err, 512, "control socket folder %s: %s", dir,
			 strerror(errno));
		return -errno;
	}
	if (!ours && strcmp(dir, CONTROL_DEFAULT_DIR) != 0)
		return 0;
	if (chown(dir, 0, gid == (gid_t)-1 ? 0 : gid) < 0 ||
	    chmod(dir, 0750) < 0)
		log_warn("control socket folder %s", dir);
	return 0;
}

int
control_open(const char *path, const struct control_access *access,
	     struct loop *loop, control_run_fn *run, void *ctx,
	     struct control **out, char *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	gid_t gid = access->admin_gid;
	struct control *ctl;
	int r;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, 512, "control socket %s: path too long", path);
		return -ENAMETOOLONG;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	r = prepare_folder(path, gid, err);
	if (r < 0)
		return r;
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
	ctl->run = run;
	ctl->run_ctx = ctx;
	ctl->access = *access;
	snprintf(ctl->path, sizeof(ctl->path), "%s", path);
	ctl->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ctl->fd < 0 ||
	    bind(ctl->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, gid == (gid_t)-1 ? 0600 : 0660) < 0 ||
	    listen(ctl->fd, 64) < 0) {
		r = -errno;
		snprintf(err, 512, "control socket %s: %s", path, strerror(-r));
		if (ctl->fd >= 0)
			close(ctl->fd);
		free(ctl);
		return r;
	}
	if (gid != (gid_t)-1 && chown(path, 0, gid) < 0)
		log_warn("control socket %s: chown", path);
	r = loop_add_fd(loop, ctl->fd, EPOLLIN, on_accept, ctl);
	if (r < 0) {
		snprintf(err, 512, "control socket: %s", strerror(-r));
		close(ctl->fd);
		unlink(path);
		free(ctl);
		return r;
	}
	accept_pause_init(&ctl->pause, loop, ctl->fd, EPOLLIN);
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
	accept_pause_cancel(&ctl->pause);
	loop_del_fd(ctl->loop, ctl->fd);
	close(ctl->fd);
	unlink(ctl->path);
	free(ctl);
}
