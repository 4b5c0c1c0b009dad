// SPDX-License-Identifier: GPL-2.0-or-later
/* greygated's side of the child: start it (fork, then exec greygated
 * --child with the tarpit's listeners and its settings), read its
 * records, and start it again when it dies (after 1 s, doubling up to a
 * minute while it keeps dying young). */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attempt.h"
#include "child.h"
#include "handoff.h"
#include "gateway-int.h"
#include "log.h"

#define RESTART_FIRST_MS 1000
#define RESTART_MAX_MS 60000
/* A child that lived this long was healthy: restart the next one soon. */
#define CHILD_HEALTHY_SEC 60

/* Verdicts waiting for room in the child's socket (it takes at most
 * net.unix.max_dgram_qlen records at a time): at most this many, then
 * they are lost (the session times out to the plain 451). */
#define VERDICTS_QUEUED_MAX 65536

static void
drop_queued_verdicts(struct gateway *gw)
{
	for (; gw->vq_len; gw->vq_len--) {
		struct queued_verdict *q = &gw->vq[gw->vq_head];

		if (q->v.handoff_fd >= 0)
			close(q->v.handoff_fd);
		gw->verdicts_unsent++;
		gw->vq_head = (gw->vq_head + 1) % gw->vq_size;
	}
}

static void
close_child_sock(struct gateway *gw)
{
	drop_queued_verdicts(gw);
	if (gw->child_sock < 0)
		return;
	loop_del_fd(gw->loop, gw->child_sock);
	close(gw->child_sock);
	gw->child_sock = -1;
	gw->vq_watching = false;
}

/* A capture that loses packets (its ring full: a burst, or a child short
 * of CPU) is said in the log, at most once a minute, with what to do:
 * the counter alone in greygatectl status is easy to miss. */
#define CAPTURE_LOSS_WARN_SEC 60

static void
warn_capture_losses(struct gateway *gw)
{
	uint64_t dropped = gw->child_stats.pcap_dropped;
	int64_t now = loop_wall_sec(gw->loop);

	if (gw->drops_child != gw->child_pid) {
		gw->drops_child = gw->child_pid;
		gw->drops_warned_at_count = 0;
	}
	if (dropped <= gw->drops_warned_at_count ||
	    now - gw->drops_warned < CAPTURE_LOSS_WARN_SEC)
		return;
	log_warnx("capture: %" PRIu64 " packets lost since %s (its ring was "
		  "full); the sensor did not see them: if this recurs, raise "
		  "capture_buffer (now %u KiB)",
		  dropped - gw->drops_warned_at_count,
		  gw->drops_warned_at_count ? "the last warning"
					    : "the child started",
		  gw->cfg->capture_buffer / 1024);
	gw->drops_warned_at_count = dropped;
	gw->drops_warned = now;
}

/* A tarpit session's question: decided, and answered (an answer the
 * child's socket cannot take is lost: the session times out to the plain
 * deferral, nothing else). */
static void
on_attempt_decided(struct gateway *gw, int r, const struct grey_attempt *a,
		   const struct grey_decision *d, void *ctx)
{
	struct ipc_event *e = ctx;
	struct tarpit_verdict v;

	gateway_verdict_of(gw, r, d, &v);
	/* A pass is handed to the MTA on its own connection, when the
	 * hand-off is on; the verdict goes with the connection then. */
	if (v.action == TARPIT_PASS && gw->cfg->handoff.mode != HANDOFF_OFF &&
	    handoff_begin(gw, e, &v) == 0) {
		free(e);
		return;
	}
	supervise_send_verdict(gw, e->session, &v);
	free(e);
}

static void
on_attempt(struct gateway *gw, const struct ipc_event *e)
{
	struct sensor_event ev;
	struct grey_attempt a;
	/* The session waits; on a shared store the answer comes later. */
	struct ipc_event *asked = malloc(sizeof(*asked));

	if (!asked) {
		struct tarpit_verdict v;

		gateway_verdict_of(gw, -ENOMEM, NULL, &v);
		supervise_send_verdict(gw, e->session, &v);
		return;
	}
	*asked = *e;
	ipc_event_view(asked, &ev);
	attempt_of_event(&ev, 0, &a);
	a.path = GREY_PATH_TARPIT;
	gateway_decide_async(gw, &a, true, on_attempt_decided, asked);
}

/* One verdict to the child, with its connection to the MTA if any.
 * Return: 0, -EAGAIN (no room now), or another -errno. */
static int
send_verdict_now(struct gateway *gw, uint64_t session,
		 const struct tarpit_verdict *v)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct ipc_record rec;
	struct iovec iov = {&rec, sizeof(rec)};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

	ipc_fill_verdict(&rec, session, v);
	if (v->handoff_fd >= 0) {
		struct cmsghdr *cm;

		memset(&control, 0, sizeof(control));
		msg.msg_control = control.buf;
		msg.msg_controllen = sizeof(control.buf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &v->handoff_fd, sizeof(int));
	}
	if (sendmsg(gw->child_sock, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) !=
	    sizeof(rec))
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN
							       : -errno;
	return 0;
}

/* Sends what waits, in order and up to 64 a system call, as far as the
 * socket takes it; watches for room while some is left. */
static void
flush_verdicts(struct gateway *gw)
{
	enum { BATCH = 64 };
	static struct ipc_record recs[BATCH];
	static union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control[BATCH];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];

	while (gw->vq_len && gw->child_sock >= 0) {
		unsigned n = 0;
		int sent;

		for (; n < BATCH && n < gw->vq_len; n++) {
			struct queued_verdict *q =
				&gw->vq[(gw->vq_head + n) % gw->vq_size];
			struct msghdr *m = &msgs[n].msg_hdr;

			ipc_fill_verdict(&recs[n], q->session, &q->v);
			iov[n] = (struct iovec){&recs[n], sizeof(recs[n])};
			memset(&msgs[n], 0, sizeof(msgs[n]));
			m->msg_iov = &iov[n];
			m->msg_iovlen = 1;
			if (q->v.handoff_fd >= 0) {
				struct cmsghdr *cm;

				memset(&control[n], 0, sizeof(control[n]));
				m->msg_control = control[n].buf;
				m->msg_controllen = sizeof(control[n].buf);
				cm = CMSG_FIRSTHDR(m);
				cm->cmsg_level = SOL_SOCKET;
				cm->cmsg_type = SCM_RIGHTS;
				cm->cmsg_len = CMSG_LEN(sizeof(int));
				memcpy(CMSG_DATA(cm), &q->v.handoff_fd,
				       sizeof(int));
			}
		}
		sent = sendmmsg(gw->child_sock, msgs, n,
				MSG_DONTWAIT | MSG_NOSIGNAL);
		if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		/* A failure other than no room: the first is lost. */
		if (sent < 0) {
			gw->verdicts_unsent++;
			sent = 1;
		}
		for (int i = 0; i < sent; i++) {
			struct queued_verdict *q = &gw->vq[gw->vq_head];

			/* The child has its own copy now. */
			if (q->v.handoff_fd >= 0)
				close(q->v.handoff_fd);
			gw->vq_head = (gw->vq_head + 1) % gw->vq_size;
			gw->vq_len--;
		}
		if ((unsigned)sent < n)
			break;
	}
	if (gw->child_sock >= 0 && gw->vq_watching != (gw->vq_len > 0)) {
		gw->vq_watching = gw->vq_len > 0;
		loop_mod_fd(gw->loop, gw->child_sock,
			    EPOLLIN | (gw->vq_watching ? EPOLLOUT : 0));
	}
}

/* Room for one more at the queue's end, or NULL (full: lost). */
static struct queued_verdict *
queue_verdict(struct gateway *gw)
{
	if (gw->vq_len == gw->vq_size) {
		size_t size = gw->vq_size ? gw->vq_size * 2 : 256;
		struct queued_verdict *q;

		if (size > VERDICTS_QUEUED_MAX ||
		    !(q = malloc(size * sizeof(*q))))
			return NULL;
		for (size_t i = 0; i < gw->vq_len; i++)
			q[i] = gw->vq[(gw->vq_head + i) % gw->vq_size];
		free(gw->vq);
		gw->vq = q;
		gw->vq_head = 0;
		gw->vq_size = size;
	}
	return &gw->vq[(gw->vq_head + gw->vq_len++) % gw->vq_size];
}

void
supervise_send_verdict(struct gateway *gw, uint64_t session,
		       const struct tarpit_verdict *v)
{
	struct queued_verdict *q;
	int r = -EAGAIN;

	if (gw->child_sock < 0) {
		r = -ENOTCONN;
	} else if (!gw->vq_len && !gw->verdicts_batching) {
		r = send_verdict_now(gw, session, v);
	}
	if (r == -EAGAIN && (q = queue_verdict(gw))) {
		/* It goes with its batch, or when there is room (the
		 * descriptor with it). */
		q->session = session;
		q->v = *v;
		if (!gw->verdicts_batching)
			flush_verdicts(gw);
		return;
	}
	if (r < 0)
		gw->verdicts_unsent++;
	/* The child has its own copy now (or nobody will). */
	if (v->handoff_fd >= 0)
		close(v->handoff_fd);
}

static void
nothing_to_answer(struct gateway *gw, int r, const struct grey_attempt *a,
		  const struct grey_decision *d, void *ctx)
{
}

/* What the sensor saw on the fast path: decided, nobody waits. */
static void
on_fast_event(struct gateway *gw, const struct ipc_event *e)
{
	struct sensor_event ev;
	struct grey_attempt a;

	ipc_event_view(e, &ev);
	/* The tarpit speaks for its own sessions. */
	if (ev.path == SENSOR_PATH_TARPIT || !attempt_of_event(&ev, 0, &a))
		return;
	gateway_decide_async(gw, &a, true, nothing_to_answer, NULL);
}

static void
on_child_sock(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct gateway *gw = ctx;
	struct ipc_record rec;

	if (events & EPOLLOUT)
		flush_verdicts(gw);
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	/* The verdicts of this batch go down together at its end. */
	gw->verdicts_batching = true;
	for (int i = 0; i < 256; i++) {
		ssize_t n = recv(fd, &rec, sizeof(rec), MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n <= 0) {
			/* The child is gone; SIGCHLD tells how. */
			gw->verdicts_batching = false;
			close_child_sock(gw);
			return;
		}
		if (ipc_check_up(&rec, (size_t)n) < 0) {
			if (gw->records_bad++ == 0)
				log_warnx("child: record of %zd bytes, version "
					  "%u, type %u dropped (want %zu, %u)",
					  n, rec.version, rec.type, sizeof(rec),
					  IPC_VERSION);
			continue;
		}
		switch (rec.type) {
		case IPC_LOG:
			/* The child's words, said as the child's. */
			log_line((enum log_level)rec.u.log.level, "child: ",
				 rec.u.log.text);
			break;
		case IPC_ATTEMPT:
			on_attempt(gw, &rec.u.ev);
			break;
		case IPC_EVENT:
			on_fast_event(gw, &rec.u.ev);
			break;
		case IPC_STATS:
			gw->child_stats = rec.u.stats;
			warn_capture_losses(gw);
			break;
		}
	}
	gw->verdicts_batching = false;
	flush_verdicts(gw);
}

int
supervise_check_capture(struct gateway *gw, char *err)
{
	struct sensor_capture *cap;
	char perr[256] = "";
	int r = sensor_capture_open_live(gw->cfg->interface,
					 (int)gw->cfg->capture_buffer,
					 &gw->cfg->sensor, &cap, perr);

	if (r < 0)
		snprintf(err, 512, "capture on %s: %s", gw->cfg->interface,
			 perr);
	else
		sensor_capture_close(cap);
	return r;
}

/* The child's settings, the first record it reads. */
static int
send_config(struct gateway *gw, int sock)
{
	const struct config *cfg = gw->cfg;
	struct ipc_record rec = {.version = IPC_VERSION, .type = IPC_CONFIG};
	struct ipc_config *c = &rec.u.config;

	c->parent_pid = (int32_t)getpid();
	c->seccomp = cfg->seccomp;
	c->log_level = (uint8_t)cfg->log_level;
	for (int i = 0; i < IPC_LISTEN_MAX; i++)
		c->listen[i] = gw->listen_fd[i] >= 0;
	c->capture_buffer = cfg->capture_buffer;
	/* With the hand-off, a pass's verdict comes once greygated has opened
	 * the MTA's connection, which may take up to its timeout. */
	c->verdict_wait_ms = cfg->handoff.mode != HANDOFF_OFF
				     ? cfg->handoff.timeout_ms + 1000
				     : VERDICT_WAIT_MS;
	c->handoff_ms = cfg->handoff.timeout_ms;
	snprintf(c->interface, sizeof(c->interface), "%s", cfg->interface);
	snprintf(c->user, sizeof(c->user), "%s", cfg->user);
	snprintf(c->hostname, sizeof(c->hostname), "%s", cfg->hostname);
	snprintf(c->capabilities, sizeof(c->capabilities), "%s",
		 cfg->capabilities);
	c->tarpit = cfg->tarpit;
	c->tarpit.hostname = NULL; /* set by the child */
	c->tarpit.capabilities = NULL;
	c->sensor = cfg->sensor;
	return send(sock, &rec, sizeof(rec), MSG_NOSIGNAL) == sizeof(rec)
		       ? 0
		       : -errno;
}

static int
spawn(struct gateway *gw, char *err)
{
	struct child_handles h = {.keep_stderr = log_uses_stderr()};
	int sv[2], r;
	pid_t pid;

	memcpy(h.listen_fd, gw->listen_fd, sizeof(h.listen_fd));
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		r = -errno;
		snprintf(err, 512, "socketpair: %s", strerror(-r));
		return r;
	}
	/* Events come in bursts; room for a few thousand records. */
	setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &(int){4 << 20}, sizeof(int));
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &(int){4 << 20}, sizeof(int));
	r = send_config(gw, sv[0]);
	if (r < 0) {
		snprintf(err, 512, "child settings: %s", strerror(-r));
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	pid = fork();
	if (pid < 0) {
		r = -errno;
		snprintf(err, 512, "fork: %s", strerror(-r));
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	if (pid == 0) {
		h.sock = sv[1];
		child_exec(&h);
		_exit(127); /* the exec failed: the parent logs the status */
	}
	close(sv[1]);
	gw->child_pid = pid;
	gw->child_sock = sv[0];
	gw->child_since = loop_wall_sec(gw->loop);
	gw->child_starts++;
	/* A new child lists what the last probe learnt of the MTA. */
	handoff_send_caps(gw);
	metrics_child_gone(gw);
	memset(&gw->child_stats, 0, sizeof(gw->child_stats));
	r = loop_add_fd(gw->loop, sv[0], EPOLLIN, on_child_sock, gw);
	if (r < 0) {
		snprintf(err, 512, "child socket: %s", strerror(-r));
		return r;
	}
	log_info("child %d started (sensor on %s, tarpit on port %u)", pid,
		 gw->cfg->interface, gw->cfg->nft.tarpit_port);
	return 0;
}

static void
on_restart(struct loop *loop, struct loop_timer *t, void *ctx)
{
	struct gateway *gw = ctx;
	char err[512] = "";

	if (gw->child_pid > 0)
		return;
	if (spawn(gw, err) < 0) {
		log_warnx("child: cannot start: %s; trying again in %u s", err,
			  gw->restart_delay_ms / 1000);
		loop_timer_arm(loop, t, loop_now_ms(loop) + gw->restart_delay_ms);
		if (gw->restart_delay_ms < RESTART_MAX_MS)
			gw->restart_delay_ms *= 2;
	}
}

static void
describe_end(int status, char *buf, size_t len)
{
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		snprintf(buf, len, "could not be started (exec of "
				   "/proc/self/exe failed)");
	else if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
		snprintf(buf, len, "killed by SIGSYS: a system call outside "
				   "its seccomp filter (seccomp = no in the "
				   "config runs it without; please report it)");
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "ended (status %#x)", status);
}

static void
on_sigchld(struct loop *loop, int signo, void *ctx)
{
	struct gateway *gw = ctx;
	char why[256];
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid != gw->child_pid)
			continue;
		/* Read what it sent before it died, then let go. */
		if (gw->child_sock >= 0)
			on_child_sock(loop, gw->child_sock, EPOLLIN, gw);
		close_child_sock(gw);
		gw->child_pid = 0;
		describe_end(status, why, sizeof(why));
		if (loop_wall_sec(gw->loop) - gw->child_since >= CHILD_HEALTHY_SEC)
			gw->restart_delay_ms = RESTART_FIRST_MS;
		log_warnx("child %d %s; starting a new one in %u ms", pid, why,
			  gw->restart_delay_ms);
		loop_timer_arm(loop, &gw->restart,
			       loop_now_ms(loop) + gw->restart_delay_ms);
		if (gw->restart_delay_ms < RESTART_MAX_MS)
			gw->restart_delay_ms *= 2;
	}
}

int
supervise_start(struct gateway *gw, char *err)
{
	int r;

	loop_timer_init(&gw->restart, on_restart, gw);
	gw->restart_delay_ms = RESTART_FIRST_MS;
	r = loop_add_signal(gw->loop, SIGCHLD, on_sigchld, gw);
	if (r < 0) {
		snprintf(err, 512, "SIGCHLD: %s", strerror(-r));
		return r;
	}
	return spawn(gw, err);
}

/* Ends the child and waits for it (SIGKILL after 2 s). */
static void
end_child(struct gateway *gw)
{
	pid_t pid = gw->child_pid;

	if (pid <= 0)
		return;
	close_child_sock(gw);
	kill(pid, SIGTERM);
	for (int i = 0; i < 200; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			pid = 0;
			break;
		}
		usleep(10000);
	}
	if (pid) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	gw->child_pid = 0;
}

void
supervise_stop(struct gateway *gw)
{
	end_child(gw);
	drop_queued_verdicts(gw);
	free(gw->vq);
	gw->vq = NULL;
	gw->vq_size = 0;
	if (gw->restart.fn)
		loop_timer_cancel(gw->loop, &gw->restart);
}

void
supervise_restart(struct gateway *gw)
{
	end_child(gw);
	gw->restart_delay_ms = RESTART_FIRST_MS;
	loop_timer_arm(gw->loop, &gw->restart, loop_now_ms(gw->loop));
}
