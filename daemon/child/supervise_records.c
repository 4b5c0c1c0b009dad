// SPDX-License-Identifier: GPL-2.0-or-later
/* What the child says and is told: its attempts (each decided, with its
 * DNS signals when they are on, and answered by a verdict), its
 * fast-path events, its counters; the verdicts queued while its socket
 * is full; records refused and said. */
#include <errno.h>
#include <stddef.h>
#include <sys/resource.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "attempt.h"
#include "supervise.h"
#include "handoff.h"
#include "log.h"
#include "signals.h"
#include "supervise-int.h"

void
supervise_drop_verdicts(struct supervisor *sup)
{
	for (; sup->vq_len; sup->vq_len--) {
		struct queued_verdict *q = &sup->vq[sup->vq_head];

		if (q->v.handoff_fd >= 0)
			close(q->v.handoff_fd);
		sup->verdicts_unsent++;
		sup->vq_head = (sup->vq_head + 1) % sup->vq_size;
	}
}

void
supervise_close_child_sock(struct supervisor *sup)
{
	supervise_drop_verdicts(sup);
	/* A new child numbers its sessions from 1 again: nothing of the
	 * old one's may reach it. */
	sessions_reset(sup->sessions);
	handoff_abort_sessions(sup->links.handoff);
	if (sup->child_sock < 0)
		return;
	loop_del_fd(sup->links.loop, sup->child_sock);
	close(sup->child_sock);
	sup->child_sock = -1;
	sup->vq_watching = false;
	sup->caps_pending = false;
}

/* A capture that loses packets (its ring full: a burst, or a child short
 * of CPU) is said in the log, at most once a minute, with what to do:
 * the counter alone in greygatectl status is easy to miss. */
#define CAPTURE_LOSS_WARN_SEC 60

static void
warn_capture_losses(struct supervisor *sup)
{
	uint64_t dropped = sup->child_stats.pcap_dropped;
	int64_t now = loop_wall_sec(sup->links.loop);

	if (sup->drops_child != sup->child_pid) {
		sup->drops_child = sup->child_pid;
		sup->drops_warned_at_count = 0;
	}
	if (dropped <= sup->drops_warned_at_count ||
	    now - sup->drops_warned < CAPTURE_LOSS_WARN_SEC)
		return;
	log_warnx("capture: %" PRIu64 " packets lost since %s (its ring was "
	          "full); the sensor did not see them: if this recurs, raise "
	          "capture_buffer (now %u KiB)",
	          dropped - sup->drops_warned_at_count,
	          sup->drops_warned_at_count ? "the last warning"
	                                     : "the child started",
	          sup->cfg.capture_buffer / 1024);
	sup->drops_warned_at_count = dropped;
	sup->drops_warned = now;
}

/* A question waiting for its decision (on a shared store, until Redis
 * answers). */
struct pending_attempt {
	struct supervisor *sup;
	struct ipc_attempt at;
	unsigned child; /* the child that asked (sup->child_starts): session
	                   ids start again with each */
	int64_t arrived; /* when it was asked: the attempt's time, however
	                    long its signals take (issue 57: a first attempt
	                    decided after the budget was 1.5 s late, and the
	                    report's delay as much short) */
	/* a pass waiting for auto's probe of the MTA (handoff.h) */
	struct tarpit_verdict v;
	struct handoff_waiter waiter;
	struct loop_timer wait_timer;
};

/* How long a pass waits for auto's first probe of the MTA: well inside
 * the tarpit's wait for a verdict (2 s), the signals' budget spent or
 * not (a local MTA answers its probe in milliseconds). */
#define PROBE_WAIT_MS 400

/* A tarpit session's question: decided, and answered (an answer the
 * child's socket cannot take is lost: the session times out to the plain
 * deferral, nothing else). Who the client is comes from the session's
 * socket (sessions.h); a session that ended meanwhile hears nothing. */
/* The verdict goes down: a pass handed to the MTA on its own connection,
 * when the hand-off is on and ready (one at a time a session: a child
 * asking again meanwhile gets no second connection), the verdict with
 * the connection then; else as it is. p freed. */
static void
hand_or_answer(struct pending_attempt *p, struct session_info *si,
               struct tarpit_verdict *v)
{
	struct supervisor *sup = p->sup;
	const struct ipc_attempt *at = &p->at;

	if (v->action == TARPIT_PASS &&
	    sup->cfg.handoff_mode != HANDOFF_OFF &&
	    handoff_ready(sup->links.handoff) && !si->handing && !si->handed) {
		si->handing = true;
		if (handoff_begin(sup->links.handoff, at->session, at->question,
		                  &si->ends, at->helo, v) == 0) {
			free(p);
			return;
		}
		si->handing = false;
	}
	supervise_send_verdict(sup, at->session, at->question, v);
	free(p);
}

/* The probe ended, or the wait is over: handed now if it answered. */
static void
probe_wait_over(struct pending_attempt *p)
{
	struct supervisor *sup = p->sup;
	struct session_info *si =
	        p->child == sup->child_starts
	                ? sessions_find(sup->sessions, p->at.session)
	                : NULL;

	loop_timer_cancel(sup->links.loop, &p->wait_timer);
	handoff_wait_cancel(sup->links.handoff, &p->waiter);
	if (!si) {
		free(p);
		return;
	}
	hand_or_answer(p, si, &p->v);
}

static void
on_probe_ended(struct handoff_waiter *w)
{
	struct pending_attempt *p =
	        (struct pending_attempt *)((char *)w -
	                                   offsetof(struct pending_attempt,
	                                            waiter));

	probe_wait_over(p);
}

static void
on_probe_wait_over(struct loop *loop, struct loop_timer *t, void *ctx)
{
	(void)loop;
	(void)t;
	probe_wait_over(ctx);
}

static void
on_attempt_decided(int r, const struct grey_attempt *a,
                   const struct grey_decision *d, void *ctx)
{
	struct pending_attempt *p = ctx;
	struct supervisor *sup = p->sup;
	const struct ipc_attempt *at = &p->at;
	struct session_info *si =
	        p->child == sup->child_starts
	                ? sessions_find(sup->sessions, at->session)
	                : NULL;
	struct tarpit_verdict v;

	decider_verdict_of(sup->links.decider, r, d, &v);
	if (!si) {
		free(p);
		return;
	}
	/* auto's first probe of the MTA under way: the pass waits for it,
	 * a moment at most */
	if (v.action == TARPIT_PASS && !si->handing && !si->handed &&
	    handoff_probe_pending(sup->links.handoff)) {
		p->v = v;
		p->waiter.fn = on_probe_ended;
		handoff_wait_probe(sup->links.handoff, &p->waiter);
		loop_timer_init(&p->wait_timer, on_probe_wait_over, p);
		loop_timer_arm(sup->links.loop, &p->wait_timer,
		               loop_now_ms(sup->links.loop) + PROBE_WAIT_MS);
		return;
	}
	hand_or_answer(p, si, &v);
}

/* The session's signals are known, or their budget is spent: the
 * attempt is decided with them (NULL: the session ended first). */
static void
on_signals_ready(void *ctx, const struct session_signals *ss)
{
	struct pending_attempt *p = ctx;
	struct supervisor *sup = p->sup;
	struct session_info *si =
	        ss && p->child == sup->child_starts
	                ? sessions_find(sup->sessions, p->at.session)
	                : NULL;
	char text[GREY_SIGNALS_MAX];
	struct grey_attempt a;

	if (!si) {
		free(p);
		return;
	}
	ipc_attempt_view(&p->at, &si->ends, &a);
	a.now = p->arrived;
	signals_apply(ss, &a, text);
	decider_decide_async(sup->links.decider, &a, true, on_attempt_decided,
	                     p);
}

static void
on_attempt(struct supervisor *sup, const struct ipc_attempt *at,
           const struct session_info *si)
{
	struct grey_attempt a;
	/* The session waits; on a shared store the answer comes later. */
	struct pending_attempt *p = malloc(sizeof(*p));

	if (!p) {
		struct tarpit_verdict v;

		decider_verdict_of(sup->links.decider, -ENOMEM, NULL, &v);
		supervise_send_verdict(sup, at->session, at->question, &v);
		return;
	}
	p->sup = sup;
	p->at = *at;
	p->child = sup->child_starts;
	p->arrived = loop_wall_sec(sup->links.loop);
	/* (auto without an address: the MTA is where clients go) */
	handoff_learn_destination(sup->links.handoff, &si->ends);
	/* With [signals] lookups: decided once they are known, or their
	 * budget is spent (no memory to wait: decided without); a RCPT
	 * waits for its sender's SPF too, a STARTTLS for what the
	 * connection says alone (no sender yet, and none seen after). */
	if (si->attached && at->kind == TARPIT_ASK_RCPT &&
	    signals_when_ready(si->attached, p->at.from, p->at.helo,
	                       on_signals_ready, p) == 0)
		return;
	if (si->attached && at->kind == TARPIT_ASK_STARTTLS &&
	    signals_when_connected(si->attached, on_signals_ready, p) == 0)
		return;
	ipc_attempt_view(&p->at, &si->ends, &a);
	a.now = p->arrived;
	decider_decide_async(sup->links.decider, &a, true, on_attempt_decided,
	                     p);
}

/* One verdict to the child, with its connection to the MTA if any.
 * Return: 0, -EAGAIN (no room now), or another -errno. */
static int
send_verdict_now(struct supervisor *sup, uint64_t session, uint32_t question,
                 const struct tarpit_verdict *v)
{
	union ipc_fd_control control;
	struct ipc_record rec;
	struct iovec iov = {&rec, sizeof(rec)};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

	ipc_fill_verdict(&rec, session, question, v);
	if (v->handoff_fd >= 0)
		ipc_attach_fd(&msg, &control, v->handoff_fd);
	if (sendmsg(sup->child_sock, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) !=
	    sizeof(rec))
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN
							       : -errno;
	return 0;
}

/* What the tarpit's EHLO lists, if it changed since it was last told
 * (handoff_send_caps). Return: false while there is no room for it. */
static bool
flush_caps(struct supervisor *sup)
{
	struct ipc_record rec;

	if (!sup->caps_pending)
		return true;
	handoff_fill_caps(sup->links.handoff, &rec);
	if (send(sup->child_sock, &rec, sizeof(rec),
	         MSG_DONTWAIT | MSG_NOSIGNAL) == sizeof(rec)) {
		sup->caps_pending = false;
		return true;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return false;
	log_warnx("hand-off: the tarpit's EHLO could not be told to the "
		  "child: %s", strerror(errno));
	sup->caps_pending = false;
	return true;
}

/* Sends what waits (what the EHLO lists first, then the verdicts in
 * order, up to 64 a system call) as far as the socket takes it; watches
 * for room while some is left. Never waits. */
void
supervise_flush(struct supervisor *sup)
{
	enum { BATCH = 64 };
	static struct ipc_record recs[BATCH];
	static union ipc_fd_control control[BATCH];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	bool waiting;

	if (sup->child_sock < 0)
		return;
	waiting = !flush_caps(sup);
	while (!waiting && sup->vq_len) {
		unsigned n = 0;
		int sent;

		for (; n < BATCH && n < sup->vq_len; n++) {
			struct queued_verdict *q =
			        &sup->vq[(sup->vq_head + n) % sup->vq_size];
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
		sent = sendmmsg(sup->child_sock, msgs, n,
		                MSG_DONTWAIT | MSG_NOSIGNAL);
		if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		/* A failure other than no room: the first is lost. */
		if (sent < 0) {
			sup->verdicts_unsent++;
			sent = 1;
		}
		for (int i = 0; i < sent; i++) {
			struct queued_verdict *q = &sup->vq[sup->vq_head];

			/* The child has its own copy now. */
			if (q->v.handoff_fd >= 0)
				close(q->v.handoff_fd);
			sup->vq_head = (sup->vq_head + 1) % sup->vq_size;
			sup->vq_len--;
		}
		if ((unsigned)sent < n)
			break;
	}
	waiting = waiting || sup->vq_len > 0;
	if (sup->vq_watching != waiting) {
		sup->vq_watching = waiting;
		loop_mod_fd(sup->links.loop, sup->child_sock,
		            EPOLLIN | (waiting ? EPOLLOUT : 0));
	}
}

/* Room for one more at the queue's end, or NULL (full: lost). */
static struct queued_verdict *
queue_verdict(struct supervisor *sup)
{
	if (sup->vq_len == sup->vq_size) {
		size_t size = sup->vq_size ? sup->vq_size * 2 : 256;
		struct queued_verdict *q;

		if (size > VERDICTS_QUEUED_MAX ||
		    !(q = malloc(size * sizeof(*q))))
			return NULL;
		for (size_t i = 0; i < sup->vq_len; i++)
			q[i] = sup->vq[(sup->vq_head + i) % sup->vq_size];
		free(sup->vq);
		sup->vq = q;
		sup->vq_head = 0;
		sup->vq_size = size;
	}
	return &sup->vq[(sup->vq_head + sup->vq_len++) % sup->vq_size];
}

void
supervise_send_verdict(struct supervisor *sup, uint64_t session,
                       uint32_t question, const struct tarpit_verdict *v)
{
	struct queued_verdict *q;
	struct session_info *si;
	int r = -EAGAIN;

	/* Answered, as far as greygated goes: the session may ask again. */
	ipc_answered(sup->sessions, session);
	/* Handed: its later recipients come up as events naming it. */
	if (v->handoff_fd >= 0 && (si = sessions_find(sup->sessions, session)))
		si->handed = true;
	if (sup->child_sock < 0) {
		r = -ENOTCONN;
	} else if (!sup->vq_len && !sup->verdicts_batching) {
		r = send_verdict_now(sup, session, question, v);
	}
	if (r == -EAGAIN && (q = queue_verdict(sup))) {
		/* It goes with its batch, or when there is room (the
		 * descriptor with it). */
		q->session = session;
		q->question = question;
		q->v = *v;
		if (!sup->verdicts_batching)
			supervise_flush(sup);
		return;
	}
	if (r < 0)
		sup->verdicts_unsent++;
	/* The child has its own copy now (or nobody will). */
	if (v->handoff_fd >= 0)
		close(v->handoff_fd);
}

static void
nothing_to_answer(int r, const struct grey_attempt *a,
                  const struct grey_decision *d, void *ctx)
{
}

/* What the sensor saw on the fast path (ipc_take_up let nothing else
 * through): decided, nobody waits. */
static void
on_fast_event(struct supervisor *sup, const struct ipc_event *e)
{
	struct sensor_event ev;
	struct grey_attempt a;

	ipc_event_view(e, &ev);
	if (!attempt_of_event(&ev, 0, &a))
		return;
	decider_decide_async(sup->links.decider, &a, true, nothing_to_answer,
	                     NULL);
}

/* A record greygated will not act on: counted, and said (every one, up
 * to REFUSALS_LOGGED a minute, then how many more once the minute is
 * over: a child that floods them must not flood the log). */
#define REFUSALS_LOGGED 60

static void
refused(struct supervisor *sup, const struct ipc_record *rec, const char *why)
{
	int64_t now = loop_wall_sec(sup->links.loop);

	sup->records_refused++;
	if (now - sup->refusals_minute >= 60) {
		if (sup->refusals_unsaid)
			log_warnx("child: %llu more records refused in the "
			          "last minute",
			          (unsigned long long)sup->refusals_unsaid);
		sup->refusals_minute = now;
		sup->refusals_said = 0;
		sup->refusals_unsaid = 0;
	}
	if (sup->refusals_said >= REFUSALS_LOGGED) {
		sup->refusals_unsaid++;
		return;
	}
	sup->refusals_said++;
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

/* A record whose descriptor greygated could not take: its own table is
 * full. Said as that (once a minute), not as the child's fault; the
 * session goes without greygated (the child ends it). */
static void
out_of_descriptors(struct supervisor *sup, const struct ipc_record *rec)
{
	struct rlimit lim = {0};
	int64_t now = loop_wall_sec(sup->links.loop);

	sup->fds_lost++;
	if (now < sup->fds_lost_said + 60)
		return;
	sup->fds_lost_said = now;
	(void)getrlimit(RLIMIT_NOFILE, &lim);
	log_warnx("out of descriptors: a session's socket from the child "
	          "could not be taken (session %llu; %llu so far): greygated "
	          "holds as many as it may (RLIMIT_NOFILE %llu; raise "
	          "LimitNOFILE in greygated.service, or lower [tarpit] "
	          "max_connections)",
	          (unsigned long long)rec->u.session.session,
	          (unsigned long long)sup->fds_lost,
	          (unsigned long long)lim.rlim_cur);
}

/* One record from the child, as ipc_take_up takes it. */
static void
on_record(struct supervisor *sup, struct ipc_record *rec, ssize_t len,
          int passed_fd, bool extra)
{
	struct ipc_up up;

	if (passed_fd == IPC_FD_LOST) {
		out_of_descriptors(sup, rec);
		return;
	}
	if (extra) {
		if (passed_fd >= 0)
			close(passed_fd);
		refused(sup, rec, "more than one descriptor came with it");
		return;
	}
	switch (ipc_take_up(sup->sessions, rec, (size_t)len, passed_fd, &up)) {
	case IPC_UP_LOG:
		/* The child's words, said as the child's. */
		log_line((enum log_level)rec->u.log.level, "child: ",
			 rec->u.log.text);
		break;
	case IPC_UP_ATTEMPT:
		on_attempt(sup, &rec->u.attempt, up.session);
		break;
	case IPC_UP_EVENT:
		on_fast_event(sup, &rec->u.ev);
		break;
	case IPC_UP_STATS:
		sup->child_stats = rec->u.stats;
		warn_capture_losses(sup);
		break;
	case IPC_UP_DONE:
		break;
	default:
		refused(sup, rec, up.why);
		break;
	}
}

void
supervise_on_child_sock(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct supervisor *sup = ctx;
	/* (big: not on the stack; one loop, one call at a time) */
	static struct ipc_batch b;

	if (events & EPOLLOUT)
		supervise_flush(sup);
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	/* The verdicts of these records go down together at the end; at most
	 * 256 records a turn, so that the rest of the loop gets its turn. */
	sup->verdicts_batching = true;
	for (int turn = 0; turn < 256 / IPC_BATCH; turn++) {
		int n = ipc_recv_batch(fd, &b);

		if (n == -EAGAIN || n == -EINTR)
			break;
		if (n <= 0) {
			/* The child is gone; its end comes as an event of
			 * its own (on_child_ended). */
			sup->verdicts_batching = false;
			supervise_close_child_sock(sup);
			return;
		}
		for (int i = 0; i < n; i++)
			on_record(sup, &b.rec[i], b.len[i], b.fd[i],
			          b.extra[i]);
		if (n < IPC_BATCH)
			break;
	}
	sup->verdicts_batching = false;
	supervise_flush(sup);
}

