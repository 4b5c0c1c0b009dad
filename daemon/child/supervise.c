// SPDX-License-Identifier: GPL-2.0-or-later
/* greygated's side of the child: start it (fork, then exec greygated
 * --child with the tarpit's listeners and its settings), and start it
 * again when it dies (after 1 s, doubling up to a minute while it keeps
 * dying young). Its records are read in supervise_records.c. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "supervise.h"
#include "handoff.h"
#include "log.h"
#include "metrics.h"
#include "proc.h"
#include "resolver.h"
#include "signals.h"
#include "supervise-int.h"

#define RESTART_FIRST_MS 1000
/* A child asked to stop is killed this much later. */
#define STOP_GRACE_MS 2000
#define RESTART_MAX_MS 60000
/* A child that lived this long was healthy: restart the next one soon. */
#define CHILD_HEALTHY_SEC 60

struct supervisor *
supervise_new(const struct supervisor_links *links,
              const struct supervisor_settings *s)
{
	struct supervisor *sup = calloc(1, sizeof(*sup));

	if (!sup)
		return NULL;
	sup->links = *links;
	sup->cfg = *s;
	sup->child_sock = -1;
	for (int i = 0; i < 4; i++)
		sup->listen_fd[i] = -1;
	return sup;
}

void
supervise_adopt_listener(struct supervisor *sup, int slot, int fd)
{
	sup->listen_fd[slot] = fd;
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
	struct supervisor *sup = ctx;
	struct session_info *si = sessions_find(sup->sessions, session);

	if (si)
		si->handing = false;
}

struct handoff_child
supervise_handoff_child(struct supervisor *sup)
{
	return (struct handoff_child){child_send_verdict, child_caps_changed,
	                              child_handed, sup};
}

void
supervise_send_caps(struct supervisor *sup)
{
	if (sup->child_sock < 0)
		return;
	/* Down with the verdicts, never blocking: a child that does not
	 * read gets the latest once it does. */
	sup->caps_pending = true;
	supervise_flush(sup);
}

void
supervise_free(struct supervisor *sup)
{
	if (!sup)
		return;
	for (int i = 0; i < 4; i++)
		if (sup->listen_fd[i] >= 0)
			close(sup->listen_fd[i]);
	free(sup);
}

void
supervise_get_status(const struct supervisor *sup, struct supervise_status *out)
{
	out->pid = sup->child_pid;
	out->starts = sup->child_starts;
	out->since = sup->child_since;
	out->stats = &sup->child_stats;
	out->records_refused = sup->records_refused;
	out->verdicts_unsent = sup->verdicts_unsent;
}

/* The child hands over to a new one (retiring.c): told to drain, it
 * takes no new connection and keeps its sessions handed to the MTA
 * until they end. Return: false (it could not be told). */
static bool
retire_child(struct supervisor *sup)
{
	if (!sup->child_proc || sup->child_sock < 0 ||
	    retiring_add(sup, sup->child_proc, sup->child_sock, sup->sessions) <
	            0)
		return false;
	/* What greygated had under way for its sessions goes: they end
	 * there, and the new child numbers its own from 1. */
	supervise_drop_verdicts(sup);
	handoff_abort_sessions(sup->links.handoff);
	sup->sessions = NULL;
	sup->child_proc = NULL;
	sup->child_pid = 0;
	sup->child_sock = -1;
	sup->vq_watching = false;
	sup->caps_pending = false;
	return true;
}

int
supervise_check_capture(struct supervisor *sup, char *err)
{
	struct sensor_capture *cap;
	char perr[256] = "";
	int r;

	r = sensor_capture_open_live(sup->cfg.capture_device,
	                             (int)sup->cfg.capture_buffer,
	                             &sup->cfg.sensor, &cap, perr);
	if (r < 0)
		snprintf(err, 512, "capture on %s: %s%s",
		         sup->cfg.capture_device, perr,
		         sup->cfg.nflog_group && r != -ELIBACC
		                 ? " (the kernel's nfnetlink_log is needed; "
		                   "nflog_group = 0 captures on the interface)"
		                 : "");
	else
		sensor_capture_close(cap);
	return r;
}

void
supervise_reconfigure(struct supervisor *sup,
                      const struct supervisor_settings *s)
{
	sup->cfg = *s;
}

/* The child's settings, the first record it reads. */
static int
send_config(struct supervisor *sup, int sock)
{
	const struct supervisor_settings *cfg = &sup->cfg;
	struct ipc_record rec = {.version = IPC_VERSION, .type = IPC_CONFIG};
	struct ipc_config *c = &rec.u.config;

	c->parent_pid = (int32_t)getpid();
	c->seccomp = cfg->seccomp;
	c->log_level = (uint8_t)cfg->log_level;
	for (int i = 0; i < IPC_LISTEN_MAX; i++)
		c->listen[i] = sup->listen_fd[i] >= 0;
	c->capture_buffer = cfg->capture_buffer;
	/* With the hand-off, a pass's verdict comes once greygated has opened
	 * the MTA's connection, which may take up to its timeout. */
	c->verdict_wait_ms = cfg->handoff_mode != HANDOFF_OFF
				     ? cfg->handoff_timeout_ms + 1000
				     : VERDICT_WAIT_MS;
	c->handoff_ms = cfg->handoff_timeout_ms;
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
spawn(struct supervisor *sup, char *err)
{
	struct child_handles h = {.keep_stderr = log_uses_stderr()};
	int sv[2], r;
	pid_t pid;

	memcpy(h.listen_fd, sup->listen_fd, sizeof(h.listen_fd));
	/* Its sessions, as many as the tarpit holds (its own and those
	 * handed to the MTA), and some to spare for the ends in flight. */
	sessions_free(sup->sessions);
	sup->sessions =
	        sessions_new(sup->cfg.tarpit.max_conns * 2 + 64,
	                     (const uint16_t[]){sup->cfg.tarpit_port,
	                                        sup->cfg.trap_port},
	                     sup->cfg.trap_port ? 2 : 1);
	if (!sup->sessions) {
		snprintf(err, 512, "the sessions' table: no memory");
		return -ENOMEM;
	}
	if (sup->signals)
		sessions_set_hooks(sup->sessions,
		                   &(struct sessions_hooks){
		                           session_opened, session_ended, sup});
	/* Where each client was going: a PROXY header's destination, and a
	 * transparent hand-off's. */
	sessions_want_destination(
	        sup->sessions,
	        sup->cfg.handoff_mode == HANDOFF_PROXY_V2 ||
	                sup->cfg.handoff_mode == HANDOFF_TRANSPARENT);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		r = -errno;
		snprintf(err, 512, "socketpair: %s", strerror(-r));
		return r;
	}
	/* Events come in bursts; room for a few thousand records. */
	setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &(int){4 << 20}, sizeof(int));
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &(int){4 << 20}, sizeof(int));
	r = send_config(sup, sv[0]);
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
	sup->child_proc = proc_watch(sup->links.loop, pid, on_child_ended, sup);
	if (!sup->child_proc) {
		r = -errno;
		snprintf(err, 512, "watching the child: %s", strerror(-r));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(sv[0]);
		return r;
	}
	sup->child_pid = pid;
	sup->child_sock = sv[0];
	sup->child_since = loop_wall_sec(sup->links.loop);
	sup->child_starts++;
	/* A new child lists what the last probe learnt of the MTA. */
	handoff_send_caps(sup->links.handoff);
	metrics_figures_child_gone(sup->links.figures, &sup->child_stats);
	memset(&sup->child_stats, 0, sizeof(sup->child_stats));
	r = loop_add_fd(sup->links.loop, sv[0], EPOLLIN,
	                supervise_on_child_sock, sup);
	if (r < 0) {
		snprintf(err, 512, "child socket: %s", strerror(-r));
		return r;
	}
	log_info("child %d started (sensor on %s, tarpit on port %u)", pid,
	         sup->cfg.capture_device,
	         sup->cfg.tarpit_port);
	return 0;
}

static void
on_restart(struct loop *loop, struct loop_timer *t, void *ctx)
{
	struct supervisor *sup = ctx;
	char err[512] = "";

	if (sup->child_proc)
		return;
	if (spawn(sup, err) < 0) {
		log_warnx("child: cannot start: %s; trying again in %u s", err,
		          sup->restart_delay_ms / 1000);
		loop_timer_arm(loop, t,
		               loop_now_ms(loop) + sup->restart_delay_ms);
		if (sup->restart_delay_ms < RESTART_MAX_MS)
			sup->restart_delay_ms *= 2;
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
	struct supervisor *sup = ctx;
	char why[256];

	if (sup->child_sock >= 0)
		supervise_on_child_sock(sup->links.loop, sup->child_sock,
		                        EPOLLIN, sup);
	supervise_close_child_sock(sup);
	sup->child_proc = NULL;
	sup->child_pid = 0;
	if (sup->child_stop_asked) {
		sup->child_stop_asked = false;
		log_info("child %d ended; starting a new one", (int)pid);
		loop_timer_arm(sup->links.loop, &sup->restart,
		               loop_now_ms(sup->links.loop));
		return;
	}
	supervise_describe_end(status, why, sizeof(why));
	if (loop_wall_sec(sup->links.loop) - sup->child_since >=
	    CHILD_HEALTHY_SEC)
		sup->restart_delay_ms = RESTART_FIRST_MS;
	log_warnx("child %d %s; starting a new one in %u ms", (int)pid, why,
	          sup->restart_delay_ms);
	loop_timer_arm(sup->links.loop, &sup->restart,
	               loop_now_ms(sup->links.loop) + sup->restart_delay_ms);
	if (sup->restart_delay_ms < RESTART_MAX_MS)
		sup->restart_delay_ms *= 2;
}

void
supervise_use_signals(struct supervisor *sup, struct signals *signals)
{
	sup->signals = signals;
}

int
supervise_start(struct supervisor *sup, char *err)
{
	loop_timer_init(&sup->restart, on_restart, sup);
	sup->restart_delay_ms = RESTART_FIRST_MS;
	return spawn(sup, err);
}

void
supervise_stop(struct supervisor *sup)
{
	if (sup->child_proc) {
		supervise_close_child_sock(sup);
		proc_stop_wait(sup->child_proc, STOP_GRACE_MS);
		sup->child_proc = NULL;
		sup->child_pid = 0;
	}
	retiring_stop_all(sup);
	supervise_drop_verdicts(sup);
	sessions_free(sup->sessions);
	sup->sessions = NULL;
	free(sup->vq);
	sup->vq = NULL;
	sup->vq_size = 0;
	if (sup->restart.fn)
		loop_timer_cancel(sup->links.loop, &sup->restart);
}

void
supervise_restart(struct supervisor *sup)
{
	sup->restart_delay_ms = RESTART_FIRST_MS;
	/* Its sessions handed to the MTA finish where they are. */
	if (retire_child(sup) || !sup->child_proc) {
		loop_timer_arm(sup->links.loop, &sup->restart,
		               loop_now_ms(sup->links.loop));
		return;
	}
	/* It could not be told: ended, and a new one once it has. */
	supervise_close_child_sock(sup);
	sup->child_stop_asked = true;
	proc_stop(sup->child_proc, STOP_GRACE_MS);
}
