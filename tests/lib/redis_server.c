// SPDX-License-Identifier: GPL-2.0-or-later
/* A real redis-server for the unit tests (see redis_server.h). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "redis_server.h"

#define REDIS_SERVER "/usr/bin/redis-server"

static struct redis_server *started;

void
redis_server_start_or_skip(struct redis_server *s)
{
	if (access(REDIS_SERVER, X_OK) != 0) {
		fprintf(stderr, "no redis-server (scripts/deps installs it): "
		                "skipped\n");
		exit(77);
	}
	redis_server_start(s);
}

static void
clean_up(void)
{
	char rm[96];

	if (!started)
		return;
	redis_server_stop(started);
	snprintf(rm, sizeof(rm), "rm -rf %s", started->dir);
	if (system(rm) != 0)
		fprintf(stderr, "could not remove %s\n", started->dir);
}

void
redis_server_start(struct redis_server *s)
{
	char conf[160];
	FILE *f;

	if (!started) {
		snprintf(s->dir, sizeof(s->dir), "/tmp/gg-redis-XXXXXX");
		CHECK(mkdtemp(s->dir));
		snprintf(s->sock, sizeof(s->sock), "%s/redis.sock", s->dir);
		started = s;
		atexit(clean_up);
		signal(SIGPIPE, SIG_IGN);
	}
	snprintf(conf, sizeof(conf), "%s/redis.conf", s->dir);
	f = fopen(conf, "w");
	CHECK(f);
	fprintf(f,
	        "port 0\nunixsocket %s\nunixsocketperm 700\ndir %s\n"
	        "requirepass %s\nsave \"\"\nappendonly no\n"
	        "daemonize no\nlogfile %s/redis.log\n",
	        s->sock, s->dir, REDIS_TEST_PASSWORD, s->dir);
	fclose(f);
	s->pid = fork();
	CHECK(s->pid >= 0);
	if (s->pid == 0) {
		execl(REDIS_SERVER, "redis-server", conf, (char *)NULL);
		_exit(127);
	}
	/* Up once its socket is there. */
	for (int i = 0; i < 200; i++) {
		struct stat st;

		if (stat(s->sock, &st) == 0)
			return;
		usleep(10000);
	}
	CHECK(!"redis-server did not start");
}

void
redis_server_stop(struct redis_server *s)
{
	if (s->pid <= 0)
		return;
	kill(s->pid, SIGCONT);
	kill(s->pid, SIGTERM);
	waitpid(s->pid, NULL, 0);
	s->pid = 0;
	unlink(s->sock);
}
