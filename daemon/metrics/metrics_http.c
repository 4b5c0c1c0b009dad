// SPDX-License-Identifier: GPL-2.0-or-later
/* The metrics listener process (see metrics_http.h): libmicrohttpd on the
 * socket greygated bound, as the child's unprivileged user. Only GET
 * /metrics is served; each scrape asks greygated over the socket pair.
 * libmicrohttpd times out only a connection that stays silent: a
 * watchdog here ends any connection that has not brought a whole request
 * REQUEST_DEADLINE_SEC after it opened or after its last one, however
 * its bytes trickle in (a few such clients held every slot). */
#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "metrics_http.h"
#include "sandbox.h"

/* One scrape at a time (one polling thread): the buffer is reused. */
static char answer[METRICS_ANSWER_MAX];

#define CONNECTIONS_MAX 16u
#define REQUEST_DEADLINE_SEC 5

/* The connections open, for the watchdog (the polling thread adds and
 * removes them; the main thread ends the late ones). */
struct tracked {
	bool used, ended;
	int fd;
	time_t since; /* opened, or its last request came whole */
};
static struct tracked tracked[CONNECTIONS_MAX];
static pthread_mutex_t tracked_lock = PTHREAD_MUTEX_INITIALIZER;

static time_t
mono_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static void
on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
              enum MHD_ConnectionNotificationCode what)
{
	const union MHD_ConnectionInfo *ci =
	        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct tracked *t = *socket_context;

	pthread_mutex_lock(&tracked_lock);
	if (what == MHD_CONNECTION_NOTIFY_STARTED && ci) {
		for (unsigned i = 0; i < CONNECTIONS_MAX; i++)
			if (!tracked[i].used) {
				tracked[i] = (struct tracked){
				        true, false, ci->connect_fd,
				        mono_sec()};
				*socket_context = &tracked[i];
				break;
			}
	} else if (what == MHD_CONNECTION_NOTIFY_CLOSED && t) {
		t->used = false;
		*socket_context = NULL;
	}
	pthread_mutex_unlock(&tracked_lock);
}

/* A request came whole: its connection's time starts again. */
static void
request_came(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
	        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct tracked *t = ci ? ci->socket_context : NULL;

	pthread_mutex_lock(&tracked_lock);
	if (t && t->used)
		t->since = mono_sec();
	pthread_mutex_unlock(&tracked_lock);
}

/* Every second: a connection past its deadline is shut down (the polling
 * thread then sees it end and closes it). */
static void
end_late_connections(void)
{
	time_t now = mono_sec();

	pthread_mutex_lock(&tracked_lock);
	for (unsigned i = 0; i < CONNECTIONS_MAX; i++)
		if (tracked[i].used && !tracked[i].ended &&
		    now - tracked[i].since >= REQUEST_DEADLINE_SEC) {
			tracked[i].ended = true;
			shutdown(tracked[i].fd, SHUT_RDWR);
		}
	pthread_mutex_unlock(&tracked_lock);
}

/* The exposition from greygated, or -1 (it does not answer). */
static ssize_t
ask_greygated(void)
{
	ssize_t n;

	if (send(METRICS_FD_SOCK, "m", 1, MSG_NOSIGNAL) != 1)
		return -1;
	do
		n = recv(METRICS_FD_SOCK, answer, sizeof(answer), 0);
	while (n < 0 && errno == EINTR);
	return n;
}

static enum MHD_Result
reply(struct MHD_Connection *conn, unsigned status, const char *type,
      const char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
	        len, (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url,
           const char *method, const char *version, const char *upload,
           size_t *upload_len, void **state)
{
	static const char text[] = "text/plain; charset=utf-8";
	ssize_t n;

	request_came(conn);
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, text,
		             "GET /metrics only\n", 18);
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND, text,
		             "greygate: the figures are at /metrics\n", 38);
	n = ask_greygated();
	if (n <= 0)
		return reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, text,
		             "greygated does not answer\n", 26);
	return reply(conn, MHD_HTTP_OK,
	             "text/plain; version=0.0.4; "
	             "charset=utf-8",
	             answer, (size_t)n);
}

int
metrics_http_main(const char *user)
{
	struct timeval wait = {.tv_sec = 5};
	struct timespec second = {.tv_sec = 1};
	struct MHD_Daemon *d;
	char err[256];
	sigset_t set;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getuid() == 0 && sandbox_drop_to_user(user, err) < 0) {
		char why[300];
		int n = snprintf(why, sizeof(why), "E%s", err);

		/* Told to greygated, which then stops starting it. */
		send(METRICS_FD_SOCK, why, (size_t)n, MSG_NOSIGNAL);
		return 1;
	}
	/* Blocked before the polling thread starts, which inherits it:
	 * only sigwait below takes them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	/* A greygated too busy to answer costs a scrape, not the listener. */
	setsockopt(METRICS_FD_SOCK, SOL_SOCKET, SO_RCVTIMEO, &wait,
	           sizeof(wait));
	d = MHD_start_daemon(
	        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL,
	        on_request, NULL, MHD_OPTION_LISTEN_SOCKET, METRICS_FD_LISTEN,
	        MHD_OPTION_CONNECTION_LIMIT, CONNECTIONS_MAX,
	        MHD_OPTION_PER_IP_CONNECTION_LIMIT, 4u,
	        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)REQUEST_DEADLINE_SEC,
	        MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
	        MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "greygated: metrics listener: libmicrohttpd "
		                "would not start\n");
		return 1;
	}
	if (sandbox_seccomp_metrics() < 0) {
		static const char why[] = "Eno seccomp filter could be loaded";

		/* Told to greygated, which then stops starting it. */
		send(METRICS_FD_SOCK, why, sizeof(why) - 1, MSG_NOSIGNAL);
		MHD_stop_daemon(d);
		return 1;
	}
	/* Until greygated ends it (SIGTERM) or goes (PDEATHSIG); the
	 * watchdog each second meanwhile. */
	while (sigtimedwait(&set, NULL, &second) < 0)
		end_late_connections();
	MHD_stop_daemon(d);
	return 0;
}
