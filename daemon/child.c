// SPDX-License-Identifier: GPL-2.0-or-later
/* The unprivileged child (see child.h): sensor and tarpit on one loop,
 * events up to the parent as fixed-size records. */
#include <errno.h>
#include <grp.h>
#include <linux/close_range.h>
#include <pwd.h>
#include <seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "ipc.h"
#include "log.h"
#include "loop.h"

#define STATS_MS 1000
/* Events go up in batches, one system call per capture turn. */
#define BATCH_MAX 64

struct child {
	struct loop *loop;
	struct sensor *sensor;
	struct sensor_capture *cap;
	struct tarpit *tarpit;
	struct loop_timer tick;
	int sock;
	uint64_t events_dropped;
	struct ipc_record *batch; /* BATCH_MAX events waiting to go up */
	unsigned nbatch;
};

static void
send_record(struct child *c, struct ipc_record *rec)
{
	rec->version = IPC_VERSION;
	/* The parent reads as fast as it can; if it cannot keep up the
	 * event is dropped here (and counted) rather than stalling the
	 * tarpit. */
	if (send(c->sock, rec, sizeof(*rec), MSG_DONTWAIT) < 0) {
		if (errno != EAGAIN)
			log_warn("child: sending to greygated");
		c->events_dropped++;
	}
}

/* Sends the waiting events in one sendmmsg. */
static void
flush_events(struct child *c)
{
	struct mmsghdr msgs[BATCH_MAX];
	struct iovec iov[BATCH_MAX];
	int n;

	if (!c->nbatch)
		return;
	memset(msgs, 0, sizeof(msgs[0]) * c->nbatch);
	for (unsigned i = 0; i < c->nbatch; i++) {
		iov[i].iov_base = &c->batch[i];
		iov[i].iov_len = sizeof(c->batch[i]);
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	n = sendmmsg(c->sock, msgs, c->nbatch, MSG_DONTWAIT);
	if (n < 0) {
		if (errno != EAGAIN)
			log_warn("child: sending to greygated");
		n = 0;
	}
	/* What the parent's socket could not take is dropped, not waited
	 * for: the tarpit must not stall. */
	c->events_dropped += c->nbatch - (unsigned)n;
	c->nbatch = 0;
}

static void
copy_text(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = 0;
}

static void
on_sensor_event(const struct sensor_event *ev, void *ctx)
{
	struct child *c = ctx;
	struct ipc_record *rec;
	struct ipc_event *e;

	if (ev->type != SENSOR_EV_RCPT && ev->type != SENSOR_EV_STARTTLS)
		return;
	if (c->nbatch == BATCH_MAX)
		flush_events(c);
	rec = &c->batch[c->nbatch++];
	memset(rec, 0, sizeof(*rec));
	rec->version = IPC_VERSION;
	rec->type = IPC_EVENT;
	e = &rec->u.ev;
	e->ts_sec = ev->ts.tv_sec;
	e->ts_usec = (int32_t)ev->ts.tv_usec;
	e->type = (uint8_t)ev->type;
	e->path = (uint8_t)ev->path;
	e->family = ev->family;
	memcpy(e->client, ev->client, 16);
	memcpy(e->server, ev->server, 16);
	e->client_port = ev->client_port;
	e->server_port = ev->server_port;
	e->reply = ev->reply;
	copy_text(e->helo, sizeof(e->helo), ev->helo);
	copy_text(e->from, sizeof(e->from), ev->from);
	copy_text(e->to, sizeof(e->to), ev->to);
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
	flush_events(c);
}

static void
on_tick(struct loop *loop, struct loop_timer *t, void *ctx)
{
	struct child *c = ctx;
	struct ipc_record rec = {.type = IPC_STATS};

	sensor_expire(c->sensor, time(NULL));
	flush_events(c);
	rec.u.stats.sensor = *sensor_get_counters(c->sensor);
	rec.u.stats.tarpit = *tarpit_get_counters(c->tarpit);
	sensor_capture_stats(c->cap, &rec.u.stats.pcap_received,
			     &rec.u.stats.pcap_dropped);
	rec.u.stats.events_dropped = c->events_dropped;
	send_record(c, &rec);
	loop_timer_arm(loop, t, loop_now_ms(loop) + STATS_MS);
}

/* The parent closed its end (or died): nothing left to serve. */
static void
on_parent(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct ipc_record rec;
	ssize_t n = recv(fd, &rec, sizeof(rec), MSG_DONTWAIT);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		loop_quit(loop, 0);
}

static void
on_stop(struct loop *loop, int signo, void *ctx)
{
	loop_quit(loop, 0);
}

static int
cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Closes every descriptor but the ones in keep (the parent's store,
 * netlink socket, control socket and loop are not the child's). */
static void
close_all_but(int *keep, int n)
{
	unsigned lo = 3;

	qsort(keep, (size_t)n, sizeof(*keep), cmp_int);
	for (int i = 0; i < n; i++) {
		if (keep[i] < 0 || (unsigned)keep[i] < lo)
			continue;
		if ((unsigned)keep[i] > lo)
			close_range(lo, (unsigned)keep[i] - 1, 0);
		lo = (unsigned)keep[i] + 1;
	}
	close_range(lo, ~0u, 0);
}

static int
drop_to_user(const char *user)
{
	struct passwd *pw = getpwnam(user);
	cap_t none;

	if (!pw) {
		log_warnx("child: user %s does not exist (create it: adduser "
			  "--system --group %s)",
			  user, user);
		return -ENOENT;
	}
	if (setgroups(0, NULL) < 0 || setresgid(pw->pw_gid, pw->pw_gid,
						pw->pw_gid) < 0 ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0) {
		log_warn("child: cannot become %s", user);
		return -errno;
	}
	/* setresuid cleared the effective and permitted sets; clear the
	 * rest too, so nothing can be regained. */
	none = cap_init();
	if (!none || cap_set_proc(none) < 0) {
		log_warn("child: cannot drop capabilities");
		cap_free(none);
		return -EPERM;
	}
	cap_free(none);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		log_warn("child: no_new_privs");
		return -errno;
	}
	return 0;
}

/* Only what the sensor, the tarpit, the loop, malloc and logging use.
 * Anything else kills the child; the parent logs SIGSYS and restarts it. */
static int
install_seccomp(void)
{
	static const int allowed[] = {
		SCMP_SYS(read),	       SCMP_SYS(write),
		SCMP_SYS(writev),      SCMP_SYS(close),
		SCMP_SYS(fstat),       SCMP_SYS(newfstatat),
		SCMP_SYS(lseek),       SCMP_SYS(mmap),
		SCMP_SYS(munmap),      SCMP_SYS(mremap),
		SCMP_SYS(brk),	       SCMP_SYS(madvise),
		SCMP_SYS(futex),       SCMP_SYS(epoll_wait),
		SCMP_SYS(epoll_pwait), SCMP_SYS(epoll_ctl),
		SCMP_SYS(accept),      SCMP_SYS(accept4),
		SCMP_SYS(recvfrom),    SCMP_SYS(recvmsg),
		SCMP_SYS(sendto),      SCMP_SYS(sendmsg),
		SCMP_SYS(sendmmsg),
		SCMP_SYS(shutdown),    SCMP_SYS(setsockopt),
		SCMP_SYS(getsockopt),  SCMP_SYS(getsockname),
		SCMP_SYS(getpeername), SCMP_SYS(poll),
		SCMP_SYS(ppoll),       SCMP_SYS(clock_gettime),
		SCMP_SYS(gettimeofday), SCMP_SYS(time),
		SCMP_SYS(nanosleep),   SCMP_SYS(clock_nanosleep),
		SCMP_SYS(exit),	       SCMP_SYS(exit_group),
		SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigprocmask),
		SCMP_SYS(getpid),      SCMP_SYS(fcntl),
		SCMP_SYS(connect),     SCMP_SYS(restart_syscall),
		SCMP_SYS(getrandom),
	};
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int r = ctx ? 0 : -ENOMEM;

	for (size_t i = 0; r == 0 && i < sizeof(allowed) / sizeof(*allowed);
	     i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
	/* syslog reconnects with a unix socket; pcap asks if the interface
	 * went down. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
				     SCMP_A0(SCMP_CMP_EQ, AF_UNIX, 0));
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				     SCMP_A1(SCMP_CMP_EQ, SIOCGIFFLAGS, 0));
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				     SCMP_A1(SCMP_CMP_EQ, FIONREAD, 0));
	if (r == 0)
		r = seccomp_load(ctx);
	if (r < 0)
		log_warnx("child: seccomp filter not loaded: %s", strerror(-r));
	seccomp_release(ctx);
	return r;
}

static int
child_setup(struct child *c, const struct config *cfg,
	    struct child_handles *h)
{
	c->loop = loop_new(timesrc_system());
	if (!c->loop)
		return -ENOMEM;
	c->tarpit = tarpit_new(&cfg->tarpit, c->loop);
	c->sensor = sensor_new(&cfg->sensor, on_sensor_event, c);
	if (!c->tarpit || !c->sensor)
		return -ENOMEM;
	for (int i = 0; i < 4; i++)
		if (h->listen_fd[i] >= 0 &&
		    tarpit_adopt(c->tarpit, h->listen_fd[i], i >= 2) < 0)
			return -EIO;
	sensor_set_tarpit_hook(c->sensor, tarpit_holds_hook, c);
	c->cap = h->cap;
	c->sock = h->sock;
	c->batch = malloc(BATCH_MAX * sizeof(*c->batch));
	if (!c->batch)
		return -ENOMEM;
	loop_timer_init(&c->tick, on_tick, c);
	if (loop_add_fd(c->loop, sensor_capture_fd(c->cap), EPOLLIN,
			on_capture, c) < 0 ||
	    loop_add_fd(c->loop, c->sock, EPOLLIN, on_parent, c) < 0 ||
	    loop_add_signal(c->loop, SIGTERM, on_stop, c) < 0 ||
	    loop_add_signal(c->loop, SIGINT, on_stop, c) < 0)
		return -EIO;
	return loop_timer_arm(c->loop, &c->tick,
			      loop_now_ms(c->loop) + STATS_MS);
}

_Noreturn void
child_run(const struct config *cfg, struct child_handles *h)
{
	int keep[] = {sensor_capture_fd(h->cap), h->listen_fd[0],
		      h->listen_fd[1], h->listen_fd[2], h->listen_fd[3],
		      h->sock};
	struct child c = {0};
	int code;

	/* If the parent dies, so does the child: nothing may outlive it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(0);
	prctl(PR_SET_NAME, "greygated-child");
	close_all_but(keep, (int)(sizeof(keep) / sizeof(*keep)));
	log_reopen();
	if (child_setup(&c, cfg, h) < 0) {
		log_warnx("child: cannot start");
		_exit(3);
	}
	if (drop_to_user(cfg->user) < 0 ||
	    (cfg->seccomp && install_seccomp() < 0))
		_exit(3);
	log_debug("child: serving as %s%s", cfg->user,
		  cfg->seccomp ? " under seccomp" : "");
	code = loop_run(c.loop);
	/* No cleanup: the process ends, the kernel closes everything. */
	_exit(code < 0 ? 1 : code);
}
