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
#include "gateway-int.h"
#include "handoff.h"
#include "log.h"
#include "metrics.h"
#include "proc.h"
#include "resolver.h"
#include "signals.h"

#define RESTART_FIRST_MS 1000
/* A child asked to stop is killed this much later. */
#define STOP_GRACE_MS 2000
#define RESTART_MAX_MS 60000
/* A child that lived this long was healthy: restart the next one soon. */
#define CHILD_HEALTHY_SEC 60

/* Verdicts waiting for room in the child's socket (it takes at most
 * net.unix.max_dgram_qlen records at a time): at most this many, then
 * they are lost (the session times out to the plain 451). */
#define VERDICTS_QUEUED_MAX 65536


/* The child's supervision: its process, its restarts, what it sent that
 * was refused, the verdicts waiting for room in its socket. */
struct supervisor {
	/* the tarpit's listeners, bound by greygated, served by each
	 * child: tarpit v4, v6; stutter v4, v6 (-1: none) */
	int listen_fd[4];
	/* children before a reload, finishing the sessions they handed to
	 * the MTA (retiring.c), the newest first */
	struct retiring *retiring;
	int child_sock; /* the parent's end, -1 while no child */
	/* the tarpit's sessions, their addresses read from their sockets
	 * (sessions.h) */
	struct sessions *sessions;
	/* each session's DNS signals, looked up from its start ([signals]
	 * lookups; NULL: off) */
	struct signals *signals;
	bool caps_pending; /* what the tarpit's EHLO lists, to be told */
	pid_t child_pid;
	unsigned child_starts;
	int64_t child_since;
	struct proc *child_proc; /* watched on the loop (NULL: none) */
	bool child_stop_asked;   /* ended on purpose: a new one at once */
	uint32_t restart_delay_ms;
	struct loop_timer restart;
	struct ipc_stats child_stats;
	/* capture losses warned of: the child's count then (each child's
	 * capture counts from 0), and when */
	pid_t drops_child;
	uint64_t drops_warned_at_count;
	int64_t drops_warned;
	/* records of the child's refused (ipc_take_up), and how many were
	 * said in the log this minute */
	uint64_t records_refused;
	int64_t refusals_minute;
	unsigned refusals_said;
	uint64_t refusals_unsaid;
	uint64_t verdicts_unsent; /* lost: no child, or the queue full */
	/* verdicts waiting for room in the child's socket, a ring */
	struct queued_verdict {
		uint64_t session;
		uint32_t question;
		struct tarpit_verdict v; /* its handoff_fd held until sent */
	} *vq;
	size_t vq_head, vq_len, vq_size;
	bool verdicts_batching; /* queued, sent at the batch's end */
	bool vq_watching;       /* the child's socket watched for room */
};

struct supervisor *
supervise_new(void)
{
	struct supervisor *sup = calloc(1, sizeof(*sup));

	if (!sup)
		return NULL;
	sup->child_sock = -1;
	for (int i = 0; i < 4; i++)
		sup->listen_fd[i] = -1;
	return sup;
}

void
supervise_adopt_listener(struct gateway *gw, int slot, int fd)
{
	gw->sup->listen_fd[slot] = fd;
}

struct retiring **
supervise_retiring(const struct gateway *gw)
{
	return &gw->sup->retiring;
}

/* --- the hand-off's way to the child (struct handoff_child) --- */

static void
child_send_verdict(void *ctx, uint64_t session, uint32_t question,
		   const struct tarpit_verdict *v)
{
	supervise_send_verdict(ctx, session, question, v);
}

static void
child_caps_changed(void *ctx)
{
	supervise_send_caps(ctx);
}

static void
child_handed(void *ctx, uint64_t session)
{
	struct gateway *gw = ctx;
	struct session_info *si = sessions_find(gw->sup->sessions, session);

	if (si)
		si->handing = false;
}

struct handoff_child
supervise_handoff_child(struct gateway *gw)
{
	return (struct handoff_child){child_send_verdict, child_caps_changed,
				      child_handed, gw};
}

void
supervise_send_caps(struct gateway *gw)
{
	if (gw->sup->child_sock < 0)
		return;
	/* Down with the verdicts, never blocking: a child that does not
	 * read gets the latest once it does. */
	gw->sup->caps_pending = true;
	supervise_flush(gw);
}

void
supervise_free(struct supervisor *sup)
{
	if (!sup)
		return;
	for (int i = 0; i < 4; i++)
		if (sup->listen_fd[i] >= 0)
			close(sup->listen_fd[i]);
	signals_free(sup->signals);
	free(sup);
}

void
supervise_dns(const struct gateway *gw, struct metrics_snapshot *s)
{
	struct resolver_counters n;
	size_t held;

	if (!gw->sup->signals)
		return;
	signals_counters(gw->sup->signals, &n, &held);
	s->dns_on = true;
	s->dns.asked = n.asked;
	s->dns.cached = n.cached;
	s->dns.joined = n.joined;
	s->dns.timeouts = n.timeouts;
	s->dns.failures = n.failures;
	s->dns.held = held;
}

void
supervise_get_status(const struct gateway *gw, struct supervise_status *out)
{
	const struct supervisor *sup = gw->sup;

	out->pid = sup->child_pid;
	out->starts = sup->child_starts;
	out->since = sup->child_since;
	out->stats = &sup->child_stats;
	out->records_refused = sup->records_refused;
	out->verdicts_unsent = sup->verdicts_unsent;
}

static void
drop_queued_verdicts(struct gateway *gw)
{
	for (; gw->sup->vq_len; gw->sup->vq_len--) {
		struct queued_verdict *q = &gw->sup->vq[gw->sup->vq_head];

		if (q->v.handoff_fd >= 0)
			close(q->v.handoff_fd);
		gw->sup->verdicts_unsent++;
		gw->sup->vq_head = (gw->sup->vq_head + 1) % gw->sup->vq_size;
	}
}

static void
close_child_sock(struct gateway *gw)
{
	drop_queued_verdicts(gw);
	/* A new child numbers its sessions from 1 again: nothing of the
	 * old one's may reach it. */
	sessions_reset(gw->sup->sessions);
	handoff_abort_sessions(gw->handoff);
	if (gw->sup->child_sock < 0)
		return;
	loop_del_fd(gw->loop, gw->sup->child_sock);
	close(gw->sup->child_sock);
	gw->sup->child_sock = -1;
	gw->sup->vq_watching = false;
	gw->sup->caps_pending = false;
}

/* A capture that loses packets (its ring full: a burst, or a child short
 * of CPU) is said in the log, at most once a minute, with what to do:
 * the counter alone in greygatectl status is easy to miss. */
#define CAPTURE_LOSS_WARN_SEC 60

static void
warn_capture_losses(struct gateway *gw)
{
	uint64_t dropped = gw->sup->child_stats.pcap_dropped;
	int64_t now = loop_wall_sec(gw->loop);

	if (gw->sup->drops_child != gw->sup->child_pid) {
		gw->sup->drops_child = gw->sup->child_pid;
		gw->sup->drops_warned_at_count = 0;
	}
	if (dropped <= gw->sup->drops_warned_at_count ||
	    now - gw->sup->drops_warned < CAPTURE_LOSS_WARN_SEC)
		return;
	log_warnx("capture: %" PRIu64 " packets lost since %s (its ring was "
		  "full); the sensor did not see them: if this recurs, raise "
		  "capture_buffer (now %u KiB)",
		  dropped - gw->sup->drops_warned_at_count,
		  gw->sup->drops_warned_at_count ? "the last warning"
					    : "the child started",
		  gw->cfg->capture_buffer / 1024);
	gw->sup->drops_warned_at_count = dropped;
	gw->sup->drops_warned = now;
}

/* A question waiting for its decision (on a shared store, until Redis
 * answers). */
struct pending_attempt {
	struct gateway *gw;
	struct ipc_attempt at;
	unsigned child; /* the child that asked (gw->sup->child_starts): session
			   ids start again with each */
};

/* A tarpit session's question: decided, and answered (an answer the
 * child's socket cannot take is lost: the session times out to the plain
 * deferral, nothing else). Who the client is comes from the session's
 * socket (sessions.h); a session that ended meanwhile hears nothing. */
static void
on_attempt_decided(struct gateway *gw, int r, const struct grey_attempt *a,
		   const struct grey_decision *d, void *ctx)
{
	struct pending_attempt *p = ctx;
	const struct ipc_attempt *at = &p->at;
	struct session_info *si = p->child == gw->sup->child_starts
					  ? sessions_find(gw->sup->sessions,
							  at->session)
					  : NULL;
	struct tarpit_verdict v;

	gateway_verdict_of(gw, r, d, &v);
	if (!si) {
		free(p);
		return;
	}
	/* A pass is handed to the MTA on its own connection, when the
	 * hand-off is on (one at a time a session: a child asking again
	 * meanwhile gets no second connection); the verdict goes with the
	 * connection then. */
	if (v.action == TARPIT_PASS && gw->cfg->handoff.mode != HANDOFF_OFF &&
	    !si->handing) {
		si->handing = true;
		if (handoff_begin(gw->handoff, at->session, at->question, &si->ends,
				  at->helo, &v) == 0) {
			free(p);
			return;
		}
		si->handing = false;
	}
	supervise_send_verdict(gw, at->session, at->question, &v);
	free(p);
}

/* The session's signals are known, or their budget is spent: the
 * attempt is decided with them (NULL: the session ended first). */
static void
on_signals_ready(void *ctx, const struct session_signals *ss)
{
	struct pending_attempt *p = ctx;
	struct gateway *gw = p->gw;
	struct session_info *si = ss && p->child == gw->sup->child_starts
					  ? sessions_find(gw->sup->sessions,
							  p->at.session)
					  : NULL;
	char text[GREY_SIGNALS_MAX];
	struct grey_attempt a;

	if (!si) {
		free(p);
		return;
	}
	ipc_attempt_view(&p->at, &si->ends, &a);
	signals_apply(ss, &a, text);
	gateway_decide_async(gw, &a, true, on_attempt_decided, p);
}

static void
on_attempt(struct gateway *gw, const struct ipc_attempt *at,
	   const struct session_info *si)
{
	struct grey_attempt a;
	/* The session waits; on a shared store the answer comes later. */
	struct pending_attempt *p = malloc(sizeof(*p));

	if (!p) {
		struct tarpit_verdict v;

		gateway_verdict_of(gw, -ENOMEM, NULL, &v);
		supervise_send_verdict(gw, at->session, at->question, &v);
		return;
	}
	p->gw = gw;
	p->at = *at;
	p->child = gw->sup->child_starts;
	/* A RCPT with [signals] lookups: decided once they are known, or
	 * their budget is spent (no memory to wait: decided without). */
	if (si->attached && at->kind == TARPIT_ASK_RCPT &&
	    signals_when_ready(si->attached, p->at.from, p->at.helo,
	                       on_signals_ready, p) == 0)
		return;
	ipc_attempt_view(&p->at, &si->ends, &a);
	gateway_decide_async(gw, &a, true, on_attempt_decided, p);
}

/* One verdict to the child, with its connection to the MTA if any.
 * Return: 0, -EAGAIN (no room now), or another -errno. */
static int
send_verdict_now(struct gateway *gw, uint64_t session, uint32_t question,
		 const struct tarpit_verdict *v)
{
	union ipc_fd_control control;
	struct ipc_record rec;
	struct iovec iov = {&rec, sizeof(rec)};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

	ipc_fill_verdict(&rec, session, question, v);
	if (v->handoff_fd >= 0)
		ipc_attach_fd(&msg, &control, v->handoff_fd);
	if (sendmsg(gw->sup->child_sock, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) !=
	    sizeof(rec))
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN
							       : -errno;
	return 0;
}

/* What the tarpit's EHLO lists, if it changed since it was last told
 * (handoff_send_caps). Return: false while there is no room for it. */
static bool
flush_caps(struct gateway *gw)
{
	struct ipc_record rec;

	if (!gw->sup->caps_pending)
		return true;
	handoff_fill_caps(gw->handoff, &rec);
	if (send(gw->sup->child_sock, &rec, sizeof(rec),
		 MSG_DONTWAIT | MSG_NOSIGNAL) == sizeof(rec)) {
		gw->sup->caps_pending = false;
		return true;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return false;
	log_warnx("hand-off: the tarpit's EHLO could not be told to the "
		  "child: %s", strerror(errno));
	gw->sup->caps_pending = false;
	return true;
}

/* Sends what waits (what the EHLO lists first, then the verdicts in
 * order, up to 64 a system call) as far as the socket takes it; watches
 * for room while some is left. Never waits. */
void
supervise_flush(struct gateway *gw)
{
	enum { BATCH = 64 };
	static struct ipc_record recs[BATCH];
	static union ipc_fd_control control[BATCH];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	bool waiting;

	if (gw->sup->child_sock < 0)
		return;
	waiting = !flush_caps(gw);
	while (!waiting && gw->sup->vq_len) {
		unsigned n = 0;
		int sent;

		for (; n < BATCH && n < gw->sup->vq_len; n++) {
			struct queued_verdict *q =
				&gw->sup->vq[(gw->sup->vq_head + n) % gw->sup->vq_size];
			struct msghdr *m = &msgs[n].msg_hdr;

			ipc_fill_verdict(&recs[n], q->session, q->question,
					 &q->v);
			iov[n] = (struct iovec){&recs[n], sizeof(recs[n])};
			memset(&msgs[n], 0, sizeof(msgs[n]));
			m->msg_iov = &iov[n];
			m->msg_iovlen = 1;
			if (q->v.handoff_fd >= 0)
				ipc_attach_fd(m, &control[n], q->v.handoff_fd);
		}
		sent = sendmmsg(gw->sup->child_sock, msgs, n,
				MSG_DONTWAIT | MSG_NOSIGNAL);
		if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		/* A failure other than no room: the first is lost. */
		if (sent < 0) {
			gw->sup->verdicts_unsent++;
			sent = 1;
		}
		for (int i = 0; i < sent; i++) {
			struct queued_verdict *q = &gw->sup->vq[gw->sup->vq_head];

			/* The child has its own copy now. */
			if (q->v.handoff_fd >= 0)
				close(q->v.handoff_fd);
			gw->sup->vq_head = (gw->sup->vq_head + 1) % gw->sup->vq_size;
			gw->sup->vq_len--;
		}
		if ((unsigned)sent < n)
			break;
	}
	waiting = waiting || gw->sup->vq_len > 0;
	if (gw->sup->vq_watching != waiting) {
		gw->sup->vq_watching = waiting;
		loop_mod_fd(gw->loop, gw->sup->child_sock,
			    EPOLLIN | (waiting ? EPOLLOUT : 0));
	}
}

/* Room for one more at the queue's end, or NULL (full: lost). */
static struct queued_verdict *
queue_verdict(struct gateway *gw)
{
	if (gw->sup->vq_len == gw->sup->vq_size) {
		size_t size = gw->sup->vq_size ? gw->sup->vq_size * 2 : 256;
		struct queued_verdict *q;

		if (size > VERDICTS_QUEUED_MAX ||
		    !(q = malloc(size * sizeof(*q))))
			return NULL;
		for (size_t i = 0; i < gw->sup->vq_len; i++)
			q[i] = gw->sup->vq[(gw->sup->vq_head + i) % gw->sup->vq_size];
		free(gw->sup->vq);
		gw->sup->vq = q;
		gw->sup->vq_head = 0;
		gw->sup->vq_size = size;
	}
	return &gw->sup->vq[(gw->sup->vq_head + gw->sup->vq_len++) % gw->sup->vq_size];
}

void
supervise_send_verdict(struct gateway *gw, uint64_t session,
		       uint32_t question, const struct tarpit_verdict *v)
{
	struct queued_verdict *q;
	int r = -EAGAIN;

	/* Answered, as far as greygated goes: the session may ask again. */
	ipc_answered(gw->sup->sessions, session);
	if (gw->sup->child_sock < 0) {
		r = -ENOTCONN;
	} else if (!gw->sup->vq_len && !gw->sup->verdicts_batching) {
		r = send_verdict_now(gw, session, question, v);
	}
	if (r == -EAGAIN && (q = queue_verdict(gw))) {
		/* It goes with its batch, or when there is room (the
		 * descriptor with it). */
		q->session = session;
		q->question = question;
		q->v = *v;
		if (!gw->sup->verdicts_batching)
			supervise_flush(gw);
		return;
	}
	if (r < 0)
		gw->sup->verdicts_unsent++;
	/* The child has its own copy now (or nobody will). */
	if (v->handoff_fd >= 0)
		close(v->handoff_fd);
}

static void
nothing_to_answer(struct gateway *gw, int r, const struct grey_attempt *a,
		  const struct grey_decision *d, void *ctx)
{
}

/* What the sensor saw on the fast path (ipc_take_up let nothing else
 * through): decided, nobody waits. */
static void
on_fast_event(struct gateway *gw, const struct ipc_event *e)
{
	struct sensor_event ev;
	struct grey_attempt a;

	ipc_event_view(e, &ev);
	if (!attempt_of_event(&ev, 0, &a))
		return;
	gateway_decide_async(gw, &a, true, nothing_to_answer, NULL);
}

/* A record greygated will not act on: counted, and said (every one, up
 * to REFUSALS_LOGGED a minute, then how many more once the minute is
 * over: a child that floods them must not flood the log). */
#define REFUSALS_LOGGED 60

static void
refused(struct gateway *gw, const struct ipc_record *rec, const char *why)
{
	int64_t now = loop_wall_sec(gw->loop);

	gw->sup->records_refused++;
	if (now - gw->sup->refusals_minute >= 60) {
		if (gw->sup->refusals_unsaid)
			log_warnx("child: %llu more records refused in the "
				  "last minute",
				  (unsigned long long)gw->sup->refusals_unsaid);
		gw->sup->refusals_minute = now;
		gw->sup->refusals_said = 0;
		gw->sup->refusals_unsaid = 0;
	}
	if (gw->sup->refusals_said >= REFUSALS_LOGGED) {
		gw->sup->refusals_unsaid++;
		return;
	}
	gw->sup->refusals_said++;
	if (rec->version == IPC_VERSION &&
	    (rec->type == IPC_OPEN || rec->type == IPC_CLOSE ||
	     rec->type == IPC_ATTEMPT))
		log_warnx("child: record refused (type %u, session %llu): %s; "
			  "nothing done with it",
			  rec->type,
			  (unsigned long long)rec->u.session.session, why);
	else
		log_warnx("child: record refused (type %u): %s; nothing done "
			  "with it",
			  rec->type, why);
}

/* One record from the child, as ipc_take_up takes it. */
static void
on_record(struct gateway *gw, struct ipc_record *rec, ssize_t len,
	  int passed_fd, bool extra)
{
	struct ipc_up up;

	if (extra) {
		if (passed_fd >= 0)
			close(passed_fd);
		refused(gw, rec, "more than one descriptor came with it");
		return;
	}
	switch (ipc_take_up(gw->sup->sessions, rec, (size_t)len, passed_fd, &up)) {
	case IPC_UP_LOG:
		/* The child's words, said as the child's. */
		log_line((enum log_level)rec->u.log.level, "child: ",
			 rec->u.log.text);
		break;
	case IPC_UP_ATTEMPT:
		on_attempt(gw, &rec->u.attempt, up.session);
		break;
	case IPC_UP_EVENT:
		on_fast_event(gw, &rec->u.ev);
		break;
	case IPC_UP_STATS:
		gw->sup->child_stats = rec->u.stats;
		warn_capture_losses(gw);
		break;
	case IPC_UP_DONE:
		break;
	default:
		refused(gw, rec, up.why);
		break;
	}
}

static void
on_child_sock(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct gateway *gw = ctx;
	/* (big: not on the stack; one loop, one call at a time) */
	static struct ipc_batch b;

	if (events & EPOLLOUT)
		supervise_flush(gw);
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	/* The verdicts of these records go down together at the end; at most
	 * 256 records a turn, so that the rest of the loop gets its turn. */
	gw->sup->verdicts_batching = true;
	for (int turn = 0; turn < 256 / IPC_BATCH; turn++) {
		int n = ipc_recv_batch(fd, &b);

		if (n == -EAGAIN || n == -EINTR)
			break;
		if (n <= 0) {
			/* The child is gone; its end comes as an event of
			 * its own (on_child_ended). */
			gw->sup->verdicts_batching = false;
			close_child_sock(gw);
			return;
		}
		for (int i = 0; i < n; i++)
			on_record(gw, &b.rec[i], b.len[i], b.fd[i], b.extra[i]);
		if (n < IPC_BATCH)
			break;
	}
	gw->sup->verdicts_batching = false;
	supervise_flush(gw);
}

/* The child hands over to a new one (retiring.c): told to drain, it
 * takes no new connection and keeps its sessions handed to the MTA
 * until they end. Return: false (it could not be told). */
static bool
retire_child(struct gateway *gw)
{
	if (!gw->sup->child_proc || gw->sup->child_sock < 0 ||
	    retiring_add(gw, gw->sup->child_proc, gw->sup->child_sock, gw->sup->sessions) < 0)
		return false;
	/* What greygated had under way for its sessions goes: they end
	 * there, and the new child numbers its own from 1. */
	drop_queued_verdicts(gw);
	handoff_abort_sessions(gw->handoff);
	gw->sup->sessions = NULL;
	gw->sup->child_proc = NULL;
	gw->sup->child_pid = 0;
	gw->sup->child_sock = -1;
	gw->sup->vq_watching = false;
	gw->sup->caps_pending = false;
	return true;
}

int
supervise_check_capture(struct gateway *gw, char *err)
{
	struct sensor_capture *cap;
	char perr[256] = "";
	int r = sensor_capture_open_live(gw->cfg->capture_device,
					 (int)gw->cfg->capture_buffer,
					 &gw->cfg->sensor, &cap, perr);

	if (r < 0)
		snprintf(err, 512, "capture on %s: %s%s",
		         gw->cfg->capture_device, perr,
		         gw->cfg->nflog_group
		                 ? " (the kernel's nfnetlink_log is needed; "
		                   "nflog_group = 0 captures on the interface)"
		                 : "");
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
		c->listen[i] = gw->sup->listen_fd[i] >= 0;
	c->capture_buffer = cfg->capture_buffer;
	/* With the hand-off, a pass's verdict comes once greygated has opened
	 * the MTA's connection, which may take up to its timeout. */
	c->verdict_wait_ms = cfg->handoff.mode != HANDOFF_OFF
				     ? cfg->handoff.timeout_ms + 1000
				     : VERDICT_WAIT_MS;
	c->handoff_ms = cfg->handoff.timeout_ms;
	snprintf(c->interface, sizeof(c->interface), "%s",
	         cfg->capture_device);
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

static proc_ended_fn on_child_ended;

/* A session's signals live as long as it does (sessions.h's hooks). */
static void *
session_opened(void *ctx, const struct session_info *si)
{
	struct supervisor *sup = ctx;

	return signals_session_start(sup->signals, &si->ends.client);
}

static void
session_ended(void *ctx, void *attached)
{
	(void)ctx;
	signals_session_end(attached);
}

static int
spawn(struct gateway *gw, char *err)
{
	struct child_handles h = {.keep_stderr = log_uses_stderr()};
	int sv[2], r;
	pid_t pid;

	memcpy(h.listen_fd, gw->sup->listen_fd, sizeof(h.listen_fd));
	/* Its sessions, as many as the tarpit holds (its own and those
	 * handed to the MTA), and some to spare for the ends in flight. */
	sessions_free(gw->sup->sessions);
	gw->sup->sessions = sessions_new(gw->cfg->tarpit.max_conns * 2 + 64,
				    (const uint16_t[]){gw->cfg->nft.tarpit_port,
						       gw->cfg->nft.trap_port},
				    gw->cfg->nft.trap_port ? 2 : 1);
	if (!gw->sup->sessions) {
		snprintf(err, 512, "the sessions' table: no memory");
		return -ENOMEM;
	}
	if (gw->sup->signals)
		sessions_set_hooks(gw->sup->sessions,
		                   &(struct sessions_hooks){session_opened,
		                                            session_ended,
		                                            gw->sup});
	/* Where each client was going: a PROXY header's destination, and a
	 * transparent hand-off's. */
	sessions_want_destination(gw->sup->sessions,
				  gw->cfg->handoff.mode == HANDOFF_PROXY_V2 ||
					  gw->cfg->handoff.mode ==
						  HANDOFF_TRANSPARENT);
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
	gw->sup->child_proc = proc_watch(gw->loop, pid, on_child_ended, gw);
	if (!gw->sup->child_proc) {
		r = -errno;
		snprintf(err, 512, "watching the child: %s", strerror(-r));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(sv[0]);
		return r;
	}
	gw->sup->child_pid = pid;
	gw->sup->child_sock = sv[0];
	gw->sup->child_since = loop_wall_sec(gw->loop);
	gw->sup->child_starts++;
	/* A new child lists what the last probe learnt of the MTA. */
	handoff_send_caps(gw->handoff);
	metrics_figures_child_gone(gw->figures, &gw->sup->child_stats);
	memset(&gw->sup->child_stats, 0, sizeof(gw->sup->child_stats));
	r = loop_add_fd(gw->loop, sv[0], EPOLLIN, on_child_sock, gw);
	if (r < 0) {
		snprintf(err, 512, "child socket: %s", strerror(-r));
		return r;
	}
	log_info("child %d started (sensor on %s, tarpit on port %u)", pid,
		 gw->cfg->capture_device, gw->cfg->nft.tarpit_port);
	return 0;
}

static void
on_restart(struct loop *loop, struct loop_timer *t, void *ctx)
{
	struct gateway *gw = ctx;
	char err[512] = "";

	if (gw->sup->child_proc)
		return;
	if (spawn(gw, err) < 0) {
		log_warnx("child: cannot start: %s; trying again in %u s", err,
			  gw->sup->restart_delay_ms / 1000);
		loop_timer_arm(loop, t, loop_now_ms(loop) + gw->sup->restart_delay_ms);
		if (gw->sup->restart_delay_ms < RESTART_MAX_MS)
			gw->sup->restart_delay_ms *= 2;
	}
}

void
supervise_describe_end(int status, char *buf, size_t len)
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

/* The child ended: read what it sent before, then let go; a new one
 * at once if it was ended on purpose, else after a delay that doubles
 * while children keep dying young. */
static void
on_child_ended(struct proc *p, pid_t pid, int status, void *ctx)
{
	struct gateway *gw = ctx;
	char why[256];

	if (gw->sup->child_sock >= 0)
		on_child_sock(gw->loop, gw->sup->child_sock, EPOLLIN, gw);
	close_child_sock(gw);
	gw->sup->child_proc = NULL;
	gw->sup->child_pid = 0;
	if (gw->sup->child_stop_asked) {
		gw->sup->child_stop_asked = false;
		log_info("child %d ended; starting a new one", (int)pid);
		loop_timer_arm(gw->loop, &gw->sup->restart, loop_now_ms(gw->loop));
		return;
	}
	supervise_describe_end(status, why, sizeof(why));
	if (loop_wall_sec(gw->loop) - gw->sup->child_since >= CHILD_HEALTHY_SEC)
		gw->sup->restart_delay_ms = RESTART_FIRST_MS;
	log_warnx("child %d %s; starting a new one in %u ms", (int)pid, why,
		  gw->sup->restart_delay_ms);
	loop_timer_arm(gw->loop, &gw->sup->restart,
		       loop_now_ms(gw->loop) + gw->sup->restart_delay_ms);
	if (gw->sup->restart_delay_ms < RESTART_MAX_MS)
		gw->sup->restart_delay_ms *= 2;
}

int
supervise_start(struct gateway *gw, char *err)
{
	loop_timer_init(&gw->sup->restart, on_restart, gw);
	gw->sup->restart_delay_ms = RESTART_FIRST_MS;
	if (gw->cfg->signals.lookups && !gw->sup->signals) {
		char why[400];

		gw->sup->signals = signals_new(gw->loop, gw->cfg, why, sizeof(why));
		if (!gw->sup->signals) {
			snprintf(err, 512, "[signals]: %s", why);
			return -EINVAL;
		}
		log_info("signals: FCrDNS, the PTR's shape and SPF looked up "
		         "for each tarpit client (DNS: %s; a decision waits "
		         "%u ms at most; trust %s)",
		         gw->cfg->signals.dns_servers[0]
		                 ? gw->cfg->signals.dns_servers
		                 : "the system's",
		         gw->cfg->signals.budget_ms,
		         signals_trust_name(gw->cfg->signals.trust));
	}
	return spawn(gw, err);
}

void
supervise_stop(struct gateway *gw)
{
	if (gw->sup->child_proc) {
		close_child_sock(gw);
		proc_stop_wait(gw->sup->child_proc, STOP_GRACE_MS);
		gw->sup->child_proc = NULL;
		gw->sup->child_pid = 0;
	}
	retiring_stop_all(gw);
	drop_queued_verdicts(gw);
	sessions_free(gw->sup->sessions);
	gw->sup->sessions = NULL;
	free(gw->sup->vq);
	gw->sup->vq = NULL;
	gw->sup->vq_size = 0;
	if (gw->sup->restart.fn)
		loop_timer_cancel(gw->loop, &gw->sup->restart);
}

void
supervise_restart(struct gateway *gw)
{
	gw->sup->restart_delay_ms = RESTART_FIRST_MS;
	/* Its sessions handed to the MTA finish where they are. */
	if (retire_child(gw) || !gw->sup->child_proc) {
		loop_timer_arm(gw->loop, &gw->sup->restart, loop_now_ms(gw->loop));
		return;
	}
	/* It could not be told: ended, and a new one once it has. */
	close_child_sock(gw);
	gw->sup->child_stop_asked = true;
	proc_stop(gw->sup->child_proc, STOP_GRACE_MS);
}
