// SPDX-License-Identifier: GPL-2.0-or-later
/* Children before a reload (see supervise.h, retiring_add): each was
 * told to drain (IPC_DRAIN), takes no new connection and finishes the
 * sessions it handed to the MTA, its log lines read until it ends; a
 * reload during another's drain starts another drain, so no reload cuts
 * a joined session. Each is killed past IPC_DRAIN_MAX_SEC (and a little
 * more): it ends itself by then, and a child is not trusted to. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervise-int.h"
#include "ipc.h"
#include "log.h"
#include "proc.h"

#define BOUND_MS ((IPC_DRAIN_MAX_SEC + 10) * 1000ull)
#define STOP_GRACE_MS 2000

struct retiring {
	struct retiring *next;
	struct supervisor *sup;
	struct proc *proc;
	pid_t pid;
	int sock; /* -1 once it closed its end */
	struct sessions *sessions;
	int64_t since;
	struct loop_timer bound;
};

static void
close_sock(struct retiring *r)
{
	if (r->sock < 0)
		return;
	loop_del_fd(r->sup->links.loop, r->sock);
	close(r->sock);
	r->sock = -1;
}

/* What it says goes to the log; nothing else it sends is acted on (its
 * questions went with its tarpit sessions). */
static void
on_sock(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct retiring *r = ctx;
	static struct ipc_batch b; /* (one loop, one call at a time) */
	char prefix[64];

	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	snprintf(prefix, sizeof(prefix), "child %d (before the reload): ",
	         (int)r->pid);
	for (int turn = 0; turn < 256 / IPC_BATCH; turn++) {
		int n = ipc_recv_batch(fd, &b);

		if (n == -EAGAIN || n == -EINTR)
			return;
		if (n <= 0) {
			close_sock(r);
			return;
		}
		for (int i = 0; i < n; i++) {
			struct ipc_up up;

			if (b.extra[i]) {
				if (b.fd[i] >= 0)
					close(b.fd[i]);
				continue;
			}
			if (ipc_take_up(r->sessions, &b.rec[i], b.len[i],
			                b.fd[i], &up) == IPC_UP_LOG)
				log_line((enum log_level)b.rec[i].u.log.level,
				         prefix, b.rec[i].u.log.text);
		}
		if (n < IPC_BATCH)
			return;
	}
}

static void
unlink_and_free(struct retiring *r)
{
	struct retiring **pp = &r->sup->retiring;

	while (*pp && *pp != r)
		pp = &(*pp)->next;
	if (*pp)
		*pp = r->next;
	close_sock(r);
	loop_timer_cancel(r->sup->links.loop, &r->bound);
	sessions_free(r->sessions);
	free(r);
}

static void
on_ended(struct proc *p, pid_t pid, int status, void *ctx)
{
	struct retiring *r = ctx;

	if (r->sock >= 0)
		on_sock(r->sup->links.loop, r->sock, EPOLLIN,
		        r); /* its last words */
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		log_info("child %d (before the reload) has handed over and "
		         "ended",
		         (int)pid);
	else {
		char why[256];

		supervise_describe_end(status, why, sizeof(why));
		log_warnx("child %d (before the reload) %s", (int)pid, why);
	}
	unlink_and_free(r);
}

static void
on_bound(struct loop *loop, struct loop_timer *t, void *ctx)
{
	struct retiring *r = ctx;

	log_warnx("child %d (before the reload) did not end within %u s of "
	          "handing over: killed",
	          (int)r->pid, IPC_DRAIN_MAX_SEC + 10);
	proc_stop(r->proc, 0);
}

int
retiring_add(struct supervisor *sup, struct proc *proc, int sock,
             struct sessions *sessions)
{
	struct ipc_record rec = {.version = IPC_VERSION, .type = IPC_DRAIN};
	struct retiring *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	if (send(sock, &rec, sizeof(rec), MSG_DONTWAIT | MSG_NOSIGNAL) !=
	    sizeof(rec)) {
		int e = errno;

		free(r);
		return -e;
	}
	*r = (struct retiring){.next = sup->retiring,
	                       .sup = sup,
	                       .proc = proc,
	                       .pid = proc_pid(proc),
	                       .sock = sock,
	                       .sessions = sessions,
	                       .since = loop_wall_sec(sup->links.loop)};
	sup->retiring = r;
	proc_set_ended(proc, on_ended, r);
	loop_del_fd(sup->links.loop, sock);
	if (loop_add_fd(sup->links.loop, sock, EPOLLIN, on_sock, r) < 0) {
		/* (unheard, it sees its parent gone and ends) */
		close(sock);
		r->sock = -1;
	}
	loop_timer_init(&r->bound, on_bound, r);
	loop_timer_arm(sup->links.loop, &r->bound,
	               loop_now_ms(sup->links.loop) + BOUND_MS);
	return 0;
}

size_t
retiring_list(const struct supervisor *sup, pid_t *pids, int64_t *since,
              size_t max)
{
	size_t n = 0;

	for (const struct retiring *r = sup->retiring; r && n < max;
	     r = r->next, n++) {
		pids[n] = r->pid;
		since[n] = r->since;
	}
	return n;
}

void
retiring_stop_all(struct supervisor *sup)
{
	while (sup->retiring) {
		struct retiring *r = sup->retiring;

		close_sock(r);
		proc_stop_wait(r->proc, STOP_GRACE_MS);
		unlink_and_free(r);
	}
}
