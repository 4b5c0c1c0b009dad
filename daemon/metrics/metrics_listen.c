// SPDX-License-Identifier: GPL-2.0-or-later
/* greygated's side of the metrics listener (see metrics_http.h): the
 * socket bound here, the process started (and again if it ends), each
 * scrape answered from the registry (metrics.c) in one message. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compat.h"
#include "log.h"
#include "loop.h"
#include "metrics.h"
#include "metrics_http.h"
#include "proc.h"

/* A listener that ends is started again this much later. */
#define RESTART_MS 5000
/* A listener asked to stop is killed this much later. */
#define STOP_GRACE_MS 2000

/* The listener's process and greygated's side of it. */
struct metrics_listener {
	struct loop *loop;
	struct metrics_listen_settings cfg; /* its own, copied */
	/* the figures it answers with, read now (the root's) */
	void (*figures)(void *root, struct metrics_snapshot *s);
	void *root;
	int listen_fd, sock; /* -1: none */
	struct proc *proc;   /* NULL: none */
	bool given_up;       /* it said it cannot start */
	struct loop_timer restart;
};

static void start_again(struct metrics_listener *m);

/* One scrape: the exposition, rendered now, in one message. */
static void
answer(struct metrics_listener *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct metrics_snapshot s;

	if (!out)
		return;
	m->figures(m->root, &s);
	metrics_exposition(&s, out);
	if (fclose(out) == 0 &&
	    send(m->sock, buf,
	         len < METRICS_ANSWER_MAX ? len : METRICS_ANSWER_MAX,
	         MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		log_warnx("metrics: cannot answer the listener: %s",
		          strerror(errno));
	free(buf);
}

static void
on_listener(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct metrics_listener *m = ctx;
	char ask[300];
	ssize_t n = recv(fd, ask, sizeof(ask) - 1, MSG_DONTWAIT);
	bool cannot = n > 0 && ask[0] == 'E';

	if (n > 0 && !cannot) {
		answer(m);
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	/* It is ending (its end comes as its own event: on_ended). */
	loop_del_fd(loop, fd);
	close(fd);
	m->sock = -1;
	if (m->proc)
		proc_stop(m->proc, STOP_GRACE_MS);
	if (cannot) {
		/* It would fail again (greygated has dropped what it needs
		 * to start it as another user): said once, not retried. */
		ask[n] = 0;
		m->given_up = true;
		log_warnx("metrics: the listener on %s cannot start: %s; it "
		          "is not started again until greygated restarts",
		          m->cfg.listen, ask + 1);
	}
}

/* The listener's process ended: started again a while later, unless
 * it said it cannot start. */
static void
on_ended(struct proc *p, pid_t pid, int status, void *ctx)
{
	struct metrics_listener *m = ctx;

	m->proc = NULL;
	if (m->sock >= 0) {
		loop_del_fd(m->loop, m->sock);
		close(m->sock);
		m->sock = -1;
	}
	if (m->given_up)
		return;
	log_warnx("metrics: the listener on %s ended%s; starting it again "
	          "in %u s",
	          m->cfg.listen,
	          WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS
	                  ? " (killed by its seccomp filter: a system call "
	                    "it may not make)"
	                  : "",
	          RESTART_MS / 1000);
	loop_timer_arm(m->loop, &m->restart, loop_now_ms(m->loop) + RESTART_MS);
}

/* The listener process, exec'd from greygated's own file with its two
 * descriptors in place. Return: 0 or -errno. */
static int
spawn(struct metrics_listener *m)
{
	int sv[2], r;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	{
		int size = METRICS_ANSWER_MAX + 4096;

		setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
		setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	}
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	if (pid == 0) {
		char *const argv[] = {"greygated", "--metrics-http",
		                      (char *)m->cfg.user, NULL};
		int sock = fcntl(sv[1], F_DUPFD_CLOEXEC, 100);
		int lfd = fcntl(m->listen_fd, F_DUPFD_CLOEXEC, 100);
		int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (sock >= 0 && lfd >= 0 && null_fd >= 0 &&
		    dup2(null_fd, 0) >= 0 && dup2(null_fd, 1) >= 0 &&
		    dup2(sock, METRICS_FD_SOCK) >= 0 &&
		    dup2(lfd, METRICS_FD_LISTEN) >= 0) {
			compat_close_from(METRICS_FD_LISTEN + 1);
			execv("/proc/self/exe", argv);
		}
		_exit(127);
	}
	close(sv[1]);
	m->proc = proc_watch(m->loop, pid, on_ended, m);
	r = m->proc ? loop_add_fd(m->loop, sv[0], EPOLLIN, on_listener, m)
	            : -errno;
	if (r < 0) {
		close(sv[0]);
		if (m->proc) {
			proc_stop_wait(m->proc, 0);
			m->proc = NULL;
		} else {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		return r;
	}
	m->sock = sv[0];
	return 0;
}

static void
on_restart_due(struct loop *loop, struct loop_timer *t, void *ctx)
{
	start_again(ctx);
}

static void
start_again(struct metrics_listener *m)
{
	int r = spawn(m);

	if (r < 0) {
		log_warnx("metrics: cannot start the listener: %s; trying "
		          "again in %u s",
		          strerror(-r), RESTART_MS / 1000);
		loop_timer_arm(m->loop, &m->restart,
		               loop_now_ms(m->loop) + RESTART_MS);
	}
}

int
metrics_listen_open(struct loop *loop,
                    const struct metrics_listen_settings *cfg,
                    void (*figures)(void *root, struct metrics_snapshot *s),
                    void *root, struct metrics_listener **out, char *err)
{
	struct metrics_listener *m;
	int one = 1, fd, r;

	*out = NULL;
	if (!cfg->listen[0])
		return 0;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->loop = loop;
	m->cfg = *cfg;
	m->figures = figures;
	m->root = root;
	m->sock = m->listen_fd = -1;
	loop_timer_init(&m->restart, on_restart_due, m);
	*out = m;
	fd = socket(cfg->addr.ss_family,
	            SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (const struct sockaddr *)&cfg->addr,
	         cfg->addr_len) < 0 ||
	    listen(fd, 64) < 0) {
		r = -errno;
		snprintf(err, 512, "metrics_listen = %s: %s",
		         cfg->listen, strerror(-r));
		if (fd >= 0)
			close(fd);
		return r;
	}
	m->listen_fd = fd;
	r = spawn(m);
	if (r < 0) {
		snprintf(err, 512, "metrics listener: %s", strerror(-r));
		return r;
	}
	log_info("metrics: Prometheus's text format at http://%s/metrics "
	         "(served by an unprivileged process)",
	         cfg->listen);
	return 0;
}

void
metrics_listen_close(struct metrics_listener *m)
{
	if (!m)
		return;
	loop_timer_cancel(m->loop, &m->restart);
	if (m->sock >= 0) {
		loop_del_fd(m->loop, m->sock);
		close(m->sock);
	}
	proc_stop_wait(m->proc, STOP_GRACE_MS);
	if (m->listen_fd >= 0)
		close(m->listen_fd);
	free(m);
}
