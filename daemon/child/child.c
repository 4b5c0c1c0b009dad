// SPDX-License-Identifier: GPL-2.0-or-later
/* The unprivileged child (see child.h): its exec, then sensor and tarpit
 * on one loop, events, counters and log lines up to the parent as
 * fixed-size records. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "compat.h"
#include "ipc.h"
#include "log.h"
#include "loop.h"
#include "sandbox.h"

#define STATS_MS 1000
/* Records go up in batches, one system call a turn. */
#define SEND_BATCH 64
/* Fast-path events waiting to go up past this many are dropped (and
 * counted); a session's question never is (a session asks one at a time,
 * so they are at most max_connections). */
#define QUEUE_EVENTS_MAX 4096

/* A record waiting to go up, with the descriptor that goes with it (a
 * session's socket), or -1. The session's own descriptor is borrowed
 * while the session lasts; if it ends first, the record goes at once, or
 * holds a duplicate (the number may be reused by the next accept). */
struct up_record {
	struct ipc_record rec;
	int fd;
	bool borrowed; /* fd is the session's own: not ours to close */
};

struct child {
	struct loop *loop;
	struct ipc_config cfg;
	struct sensor *sensor;
	struct sensor_capture *cap;
	struct tarpit *tarpit;
	struct loop_timer tick;
	struct loop_timer flush; /* the end of this turn: questions go up */
	int sock;
	bool parent_gone;
	/* handing over to a new child (IPC_DRAIN): since when, and how many
	 * sessions handed to the MTA it waited for */
	bool draining;
	uint64_t drain_since_ms;
	size_t drain_waited;
	bool want_out; /* the socket is watched for room */
	uint64_t events_dropped;
	/* records waiting to go up, a ring that grows */
	struct up_record *queue;
	size_t head, len, size;
	size_t borrowed; /* of them, holding a session's own socket */
	struct ipc_batch in; /* records from the parent, read in batches */
};

/* --- before the exec, in the forked copy of greygated --- */

void
child_exec(const struct child_handles *h)
{
	char *const argv[] = {"greygated", "--child", NULL};
	int high[1 + IPC_LISTEN_MAX], null_fd;

	/* If greygated dies, so does the child: nothing may outlive it (kept
	 * across the exec of a binary that is not set-user-ID). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* Out of the way first, so that no dup2 below lands on a descriptor
	 * still to be moved: above every number the child's are given (not
	 * at 100: under an RLIMIT_NOFILE of 100 or less that failed, and no
	 * child ever started; tests/integration/test-descriptors.sh) */
	high[0] = fcntl(h->sock, F_DUPFD_CLOEXEC, IPC_FD_LISTEN + IPC_LISTEN_MAX);
	for (int i = 0; i < IPC_LISTEN_MAX; i++)
		high[1 + i] = h->listen_fd[i] < 0
				      ? -1
				      : fcntl(h->listen_fd[i], F_DUPFD_CLOEXEC,
					      IPC_FD_LISTEN + IPC_LISTEN_MAX);
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (high[0] < 0 || null_fd < 0 || dup2(null_fd, 0) < 0 ||
	    dup2(null_fd, 1) < 0 || (!h->keep_stderr && dup2(null_fd, 2) < 0))
		return;
	/* dup2 clears close-on-exec on the new number. */
	if (dup2(high[0], IPC_FD_SOCK) < 0)
		return;
	for (int i = 0; i < IPC_LISTEN_MAX; i++)
		if (high[1 + i] >= 0 &&
		    dup2(high[1 + i], IPC_FD_LISTEN + i) < 0)
			return;
	compat_close_from(IPC_FD_LISTEN + IPC_LISTEN_MAX);
#ifdef GREYGATE_TEST_SEAM
	/* Only in the tests' greygated-seam (tests/meson.build), never in
	 * the installed greygated: a program of the test's in the child's
	 * place, playing a compromised child. */
	if (getenv("GREYGATE_TEST_CHILD"))
		execv(getenv("GREYGATE_TEST_CHILD"), argv);
#endif
	execv("/proc/self/exe", argv);
}

/* --- the child --- */

static int
send_record(struct child *c, struct ipc_record *rec)
{
	rec->version = IPC_VERSION;
	if (send(c->sock, rec, sizeof(*rec), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		return -errno;
	return 0;
}

/* The parent closed its end: it is going away, and so do we (quietly:
 * there is nobody left to tell). */
static void
parent_gone(struct child *c)
{
	c->parent_gone = true;
	loop_quit(c->loop, 0);
}

/* A log line goes up as a record; one that cannot go is lost (never
 * logged about: that would come back here). */
static void
log_to_parent(enum log_level level, const char *line, void *ctx)
{
	struct child *c = ctx;
	struct ipc_record rec = {.type = IPC_LOG};
	size_t n = strnlen(line, sizeof(rec.u.log.text) - 1);

	if (c->parent_gone)
		return;
	rec.u.log.level = (uint8_t)level;
	memcpy(rec.u.log.text, line, n);
	if (send_record(c, &rec) == -EPIPE)
		parent_gone(c);
}

/* Room at the end of the queue for one more record, with no descriptor
 * (NULL: no memory). */
static struct up_record *
queue_push(struct child *c)
{
	struct up_record *u;

	if (c->len == c->size) {
		size_t size = c->size ? c->size * 2 : 256;
		struct up_record *q = malloc(size * sizeof(*q));

		if (!q)
			return NULL;
		/* unrolled in order at the start of the new ring */
		for (size_t i = 0; i < c->len; i++)
			q[i] = c->queue[(c->head + i) % c->size];
		free(c->queue);
		c->queue = q;
		c->head = 0;
		c->size = size;
	}
	u = &c->queue[(c->head + c->len++) % c->size];
	u->fd = -1;
	u->borrowed = false;
	return u;
}

/* Sent at the end of this turn of the loop, with the others queued in
 * it: one system call for the lot. */
static void
flush_soon(struct child *c)
{
	if (!loop_timer_is_armed(&c->flush))
		loop_timer_arm(c->loop, &c->flush, loop_now_ms(c->loop));
}

static void on_parent(struct loop *loop, int fd, uint32_t events, void *ctx);

/* Sends what waits, as much as the socket takes; the rest waits for room
 * (the socket is watched for it). */
static void
flush_queue(struct child *c)
{
	while (c->len && !c->parent_gone) {
		struct mmsghdr msgs[SEND_BATCH];
		struct iovec iov[SEND_BATCH];
		union ipc_fd_control control[SEND_BATCH];
		unsigned n = 0;
		int sent;

		/* up to the ring's end or a batch, whichever is first */
		while (n < SEND_BATCH && n < c->len &&
		       c->head + n < c->size) {
			struct up_record *u = &c->queue[c->head + n];
			struct msghdr *m = &msgs[n].msg_hdr;

			u->rec.version = IPC_VERSION;
			iov[n].iov_base = &u->rec;
			iov[n].iov_len = sizeof(u->rec);
			memset(&msgs[n], 0, sizeof(msgs[n]));
			m->msg_iov = &iov[n];
			m->msg_iovlen = 1;
			if (u->fd >= 0)
				ipc_attach_fd(m, &control[n], u->fd);
			n++;
		}
		sent = sendmmsg(c->sock, msgs, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (sent < 0) {
			if (errno == EPIPE)
				parent_gone(c);
			else if (errno != EAGAIN && errno != EINTR)
				log_warn("child: sending to greygated");
			break;
		}
		for (int i = 0; i < sent; i++) {
			struct up_record *u = &c->queue[c->head + (size_t)i];

			/* greygated has its own copy now */
			if (u->borrowed)
				c->borrowed--;
			else if (u->fd >= 0)
				close(u->fd);
		}
		c->head = (c->head + (size_t)sent) % c->size;
		c->len -= (size_t)sent;
	}
	if (!c->want_out != !c->len && !c->parent_gone) {
		c->want_out = c->len != 0;
		loop_mod_fd(c->loop, c->sock,
			    EPOLLIN | (c->want_out ? EPOLLOUT : 0));
	}
}

static void
on_sensor_event(const struct sensor_event *ev, void *ctx)
{
	struct child *c = ctx;
	struct up_record *u;

	/* The tarpit speaks for its own sessions: the sensor's view is of
	 * the fast path (greygated takes nothing else from it). */
	if ((ev->type != SENSOR_EV_RCPT && ev->type != SENSOR_EV_STARTTLS &&
	     ev->type != SENSOR_EV_HELO) ||
	    ev->path != SENSOR_PATH_FAST)
		return;
	if (c->len >= QUEUE_EVENTS_MAX || !(u = queue_push(c))) {
		c->events_dropped++;
		return;
	}
	ipc_fill_event(&u->rec, ev);
}

/* A tarpit session asks: queued whatever the queue holds (never dropped:
 * it waits for the answer). */
static int
ask_parent(const struct tarpit_attempt *a, void *ctx)
{
	struct child *c = ctx;
	struct up_record *u = queue_push(c);

	if (!u)
		return -ENOMEM;
	ipc_fill_attempt(&u->rec, a);
	flush_soon(c);
	return 0;
}

/* A session's opening or end waits for the next batch that goes up (its
 * first question's, or the next second's): greygated needs it before the
 * session's first question only, which comes after it in the queue, and
 * each batch is one wake-up of greygated. A full batch goes at once. */
static void
queued_session_record(struct child *c)
{
	if (c->len >= SEND_BATCH)
		flush_soon(c);
}

/* A tarpit session begins: its socket goes up once, so that greygated
 * reads who the client is from the kernel, never from us. A session
 * whose socket cannot go up asks in vain (greygated refuses its
 * questions: the plain deferral). */
static void
session_opened(uint64_t session, int fd, void *ctx)
{
	struct child *c = ctx;
	struct up_record *u = queue_push(c);

	if (!u) {
		log_warnx("child: session %llu cannot be told to greygated: "
			  "no memory",
			  (unsigned long long)session);
		return;
	}
	ipc_fill_session(&u->rec, IPC_OPEN, session);
	u->fd = fd;
	u->borrowed = true;
	c->borrowed++;
	queued_session_record(c);
}

/* A session ends while its opening may still wait to go up, holding its
 * socket: sent now, or given a duplicate of it to hold. */
static void
unborrow(struct child *c, uint64_t session)
{
	if (!c->borrowed)
		return;
	flush_queue(c);
	for (size_t i = 0; c->borrowed && i < c->len; i++) {
		struct up_record *u = &c->queue[(c->head + i) % c->size];

		if (!u->borrowed || u->rec.u.session.session != session)
			continue;
		u->borrowed = false;
		c->borrowed--;
		u->fd = fcntl(u->fd, F_DUPFD_CLOEXEC, 0);
		if (u->fd < 0)
			log_warn("child: session %llu's socket for greygated",
				 (unsigned long long)session);
	}
}

static void
session_closed(uint64_t session, int fd, void *ctx)
{
	struct child *c = ctx;
	struct up_record *u;

	unborrow(c, session);
	u = queue_push(c);
	if (!u)
		return;
	ipc_fill_session(&u->rec, IPC_CLOSE, session);
	queued_session_record(c);
}

static void
on_flush(struct loop *loop, struct loop_timer *t, void *ctx)
{
	flush_queue(ctx);
}

static bool
tarpit_holds_hook(int family, const uint8_t *client, uint16_t port, void *ctx)
{
	struct child *c = ctx;

	return tarpit_holds(c->tarpit, family, client, port);
}

static void
on_capture(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct child *c = ctx;

	if (sensor_capture_dispatch(c->cap, c->sensor, 256) < 0) {
		log_warnx("child: capture read failed");
		loop_quit(loop, 1);
	}
	flush_queue(c);
}

/* Handing over: done when the last session handed to the MTA is, or
 * at the bound. Return: true (over: the loop ends). */
static bool
drain_over(struct child *c)
{
	size_t left = tarpit_handed_open(c->tarpit);
	uint64_t sec = (loop_now_ms(c->loop) - c->drain_since_ms) / 1000;

	if (!left) {
		log_info("drained: %zu session(s) handed to the MTA finished, "
			 "in %llu s",
			 c->drain_waited, (unsigned long long)sec);
	} else if (sec >= IPC_DRAIN_MAX_SEC) {
		log_warnx("drain: %zu of %zu session(s) handed to the MTA "
			  "still open after %u s: ended",
			  left, c->drain_waited, IPC_DRAIN_MAX_SEC);
	} else {
		return false;
	}
	loop_quit(c->loop, 0);
	return true;
}

/* A new child takes over: this one listens and captures no more, and
 * ends once the sessions it handed to the MTA are over. */
static void
start_drain(struct child *c)
{
	if (c->draining)
		return;
	c->draining = true;
	c->drain_since_ms = loop_now_ms(c->loop);
	loop_del_fd(c->loop, sensor_capture_fd(c->cap));
	c->drain_waited = tarpit_drain(c->tarpit);
	if (c->drain_waited)
		log_info("draining: %zu session(s) handed to the MTA left to "
			 "finish (at most %u s); the new child takes every "
			 "new connection",
			 c->drain_waited, IPC_DRAIN_MAX_SEC);
	drain_over(c);
	flush_queue(c);
}

static void
on_tick(struct loop *loop, struct loop_timer *t, void *ctx)
{
	struct child *c = ctx;
	struct ipc_record rec = {.type = IPC_STATS};

	if (c->draining) {
		/* (its counters are the new child's business now) */
		flush_queue(c);
		if (!drain_over(c))
			loop_timer_arm(loop, t, loop_now_ms(loop) + STATS_MS);
		return;
	}

	sensor_expire(c->sensor, time(NULL));
	flush_queue(c);
	rec.u.stats.sensor = *sensor_get_counters(c->sensor);
	rec.u.stats.tarpit = *tarpit_get_counters(c->tarpit);
	sensor_capture_stats(c->cap, &rec.u.stats.pcap_received,
			     &rec.u.stats.pcap_dropped);
	rec.u.stats.events_dropped = c->events_dropped;
	if (send_record(c, &rec) == -EPIPE)
		parent_gone(c);
	loop_timer_arm(loop, t, loop_now_ms(loop) + STATS_MS);
}

/* What the tarpit's EHLO lists, as greygated learnt it from the MTA's
 * (the tarpit reads it from c->cfg.capabilities). */
static void
set_ehlo(struct child *c, const struct ipc_caps *caps)
{
	memcpy(c->cfg.capabilities, caps->capabilities,
	       sizeof(c->cfg.capabilities));
	c->cfg.capabilities[sizeof(c->cfg.capabilities) - 1] = 0;
	tarpit_set_ehlo(c->tarpit, c->cfg.capabilities, caps->starttls != 0);
}

/* One record from the parent (n: its length as ipc_recv says, passed_fd:
 * the descriptor that came with it, or -1). */
static void
from_parent(struct child *c, const struct ipc_record *rec, ssize_t n,
	    int passed_fd)
{
	struct tarpit_verdict v;

	if ((size_t)n == sizeof(*rec) && rec->version == IPC_VERSION &&
	    rec->type == IPC_DRAIN) {
		if (passed_fd >= 0)
			close(passed_fd);
		start_drain(c);
		return;
	}
	if ((size_t)n == sizeof(*rec) && rec->version == IPC_VERSION &&
	    rec->type == IPC_CAPS) {
		if (passed_fd >= 0)
			close(passed_fd);
		set_ehlo(c, &rec->u.caps);
		return;
	}
	if ((size_t)n != sizeof(*rec) || rec->version != IPC_VERSION ||
	    rec->type != IPC_VERDICT || !rec->u.verdict.handoff) {
		/* A descriptor that came unasked is not kept. */
		if (passed_fd >= 0)
			close(passed_fd);
		passed_fd = -1;
		if ((size_t)n != sizeof(*rec) || rec->version != IPC_VERSION ||
		    rec->type != IPC_VERDICT)
			return;
	}
	v.action = (enum tarpit_action)rec->u.verdict.action;
	v.wait_sec = rec->u.verdict.wait_sec;
	v.handoff_fd = passed_fd;
	v.greeted = rec->u.verdict.greeted != 0;
	v.refused = rec->u.verdict.refused;
	v.gated = rec->u.verdict.gated != 0;
	/* A session gone meanwhile has nobody to answer (the tarpit closes
	 * the connection that came for it). */
	tarpit_verdict(c->tarpit, rec->u.verdict.session,
		       rec->u.verdict.question, &v);
}

/* Verdicts from the parent, in batches (under a flood one system call
 * brings dozens); its end closed (or it died): nothing left to serve.
 * Room to send: what waits goes up. */
static void
on_parent(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct child *c = ctx;

	if (events & EPOLLOUT)
		flush_queue(c);
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	for (int turn = 0; turn < 4; turn++) {
		int n = ipc_recv_batch(fd, &c->in);

		if (n == -EAGAIN || n == -EINTR)
			return;
		if (n <= 0) {
			parent_gone(c);
			return;
		}
		for (int i = 0; i < n; i++) {
			/* (its end closed: an empty record, after the ones it
			 * sent before) */
			if (c->in.len[i] <= 0) {
				for (int j = i; j < n; j++)
					if (c->in.fd[j] >= 0)
						close(c->in.fd[j]);
				parent_gone(c);
				return;
			}
			from_parent(c, &c->in.rec[i], c->in.len[i],
				    c->in.fd[i]);
		}
		if (n < IPC_BATCH)
			return;
	}
}

static void
on_stop(struct loop *loop, int signo, void *ctx)
{
	loop_quit(loop, 0);
}

/* The settings: the first record greygated sent. */
static int
read_config(struct child *c)
{
	struct ipc_record rec;
	ssize_t n;

	do
		n = recv(c->sock, &rec, sizeof(rec), 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(rec) || rec.version != IPC_VERSION ||
	    rec.type != IPC_CONFIG)
		return -EPROTO;
	c->cfg = rec.u.config;
	c->cfg.interface[sizeof(c->cfg.interface) - 1] = 0;
	c->cfg.user[sizeof(c->cfg.user) - 1] = 0;
	c->cfg.hostname[sizeof(c->cfg.hostname) - 1] = 0;
	c->cfg.capabilities[sizeof(c->cfg.capabilities) - 1] = 0;
	c->cfg.tarpit.hostname = c->cfg.hostname;
	c->cfg.tarpit.capabilities = c->cfg.capabilities;
	return 0;
}

static int
child_setup(struct child *c)
{
	char err[256] = "";
	int r;

	/* While it still holds CAP_NET_RAW (greygated's bounding set). */
	r = sensor_capture_open_live(c->cfg.interface, (int)c->cfg.capture_buffer,
				     &c->cfg.sensor, &c->cap, err);
	if (r < 0) {
		log_warnx("child: capture on %s: %s", c->cfg.interface, err);
		return r;
	}
	c->tarpit = tarpit_new(&c->cfg.tarpit, c->loop);
	c->sensor = sensor_new(&c->cfg.sensor, on_sensor_event, c);
	if (!c->tarpit || !c->sensor)
		return -ENOMEM;
	tarpit_set_asker(c->tarpit,
			 &(struct tarpit_asker){.ask = ask_parent,
						.opened = session_opened,
						.closed = session_closed,
						.ctx = c,
						.wait_ms = c->cfg.verdict_wait_ms,
						/* greygated closes a
						   session's socket as it
						   reads its opening
						   (ipc_take_up), before
						   any question of it */
						.released_by_verdict = true});
	tarpit_set_handoff(c->tarpit, c->cfg.handoff_ms);
	/* A handed session's later recipients go up as the sensor's do. */
	tarpit_set_joined_events(c->tarpit, on_sensor_event, c);
	for (int i = 0; i < IPC_LISTEN_MAX; i++)
		if (c->cfg.listen[i] &&
		    tarpit_adopt(c->tarpit, IPC_FD_LISTEN + i, i >= 2) < 0)
			return -EIO;
	sensor_set_tarpit_hook(c->sensor, tarpit_holds_hook, c);
	loop_timer_init(&c->tick, on_tick, c);
	loop_timer_init(&c->flush, on_flush, c);
	if (loop_add_fd(c->loop, sensor_capture_fd(c->cap), EPOLLIN,
			on_capture, c) < 0 ||
	    loop_add_fd(c->loop, c->sock, EPOLLIN, on_parent, c) < 0 ||
	    loop_add_signal(c->loop, SIGTERM, on_stop, c) < 0 ||
	    loop_add_signal(c->loop, SIGINT, on_stop, c) < 0)
		return -EIO;
	r = sandbox_drop_to_user(c->cfg.user, err);
	if (r < 0) {
		log_warnx("child: %s", err);
		return r;
	}
	if (c->cfg.seccomp) {
		r = sandbox_seccomp(sensor_capture_fd(c->cap));
		if (r < 0) {
			log_warnx("child: seccomp filter not loaded: %s",
				  strerror(-r));
			return r;
		}
	}
	return loop_timer_arm(c->loop, &c->tick,
			      loop_now_ms(c->loop) + STATS_MS);
}

int
child_main(void)
{
	static struct child c;
	int code;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NAME, "greygated-child");
	c.sock = IPC_FD_SOCK;
	/* Everything it says goes to greygated, which logs it. */
	log_init("greygated", false, LOG_LEVEL_DEBUG);
	log_set_sink(log_to_parent, &c);
	if (read_config(&c) < 0)
		return 3;
	log_set_level((enum log_level)c.cfg.log_level);
	/* Started by a greygated that is gone already: PDEATHSIG came too
	 * late for it. Its pid, not 1: greygated may be PID 1 itself. */
	if (getppid() != c.cfg.parent_pid)
		return 0;
	c.loop = loop_new(timesrc_system());
	if (!c.loop || child_setup(&c) < 0) {
		log_warnx("child: cannot start");
		return 3;
	}
	log_debug("child: serving as %s%s", c.cfg.user,
		  c.cfg.seccomp ? " under seccomp" : "");
	code = loop_run(c.loop);
	flush_queue(&c);
	/* No cleanup: the process ends, the kernel closes everything. */
	return code < 0 ? 1 : code;
}
