// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the Redis connection on greygate's loop against a real
 * redis-server, started here on a unix socket in a temp dir (no TCP, no
 * network), with requirepass, its own config and data dir, and ended by
 * its PID: authenticated round trips in order; a wrong password refused
 * with Redis's words; a server that stops answering (SIGSTOP) fails the
 * waiting commands at their deadline and the connection comes back
 * when it answers again; a server that goes away and returns is
 * reconnected to. */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "loop.h"
#include "redis_loop.h"
#include "redis_server.h"
#include "timesrc.h"

#define PASSWORD REDIS_TEST_PASSWORD

static struct redis_server server;
static struct loop *loop;

/* --- what the connection tells --- */

static int ups, downs;
static char last_why[256];

static void
on_state(struct rconn *c, bool up, const char *why, void *ctx)
{
	if (up)
		ups++;
	else
		downs++;
	snprintf(last_why, sizeof(last_why), "%s", why);
}

struct answer {
	bool got;
	bool failed;
	char text[64];
	int order;
};

static int answered;

static void
on_answer(struct redisReply *reply, void *ctx)
{
	struct answer *a = ctx;

	a->got = true;
	a->order = ++answered;
	a->failed = !reply;
	if (reply && reply->str)
		snprintf(a->text, sizeof(a->text), "%.*s", (int)reply->len,
		         reply->str);
	else if (reply && reply->type == REDIS_REPLY_INTEGER)
		snprintf(a->text, sizeof(a->text), "%lld", reply->integer);
}

#define RUN_UNTIL(cond, ms) LOOP_UNTIL(loop, cond, ms)

static struct rconn *
connect_with(const char *password, uint32_t timeout_ms)
{
	struct rconn_config cfg = {.unix_path = server.sock,
	                           .password = password,
	                           .timeout_ms = timeout_ms};

	ups = downs = 0;
	last_why[0] = 0;
	return rconn_new(loop, &cfg, on_state, NULL);
}

static int
cmd(struct rconn *c, struct answer *a, const char *w0, const char *w1,
    const char *w2)
{
	const char *argv[3] = {w0, w1, w2};

	memset(a, 0, sizeof(*a));
	return rconn_command(c, on_answer, a, w2 ? 3 : w1 ? 2 : 1, argv, NULL);
}

static void
test_round_trips_in_order(void)
{
	struct rconn *c = connect_with(PASSWORD, 1000);
	struct answer a, b, g;

	CHECK(c);
	CHECK_INT(cmd(c, &a, "PING", NULL, NULL), -ENOTCONN); /* not yet */
	RUN_UNTIL(rconn_up(c), 2000);
	CHECK(rconn_up(c));
	CHECK_INT(ups, 1);
	answered = 0;
	CHECK_INT(cmd(c, &a, "SET", "greygate:k", "v1"), 0);
	CHECK_INT(cmd(c, &b, "INCR", "greygate:n", NULL), 0);
	CHECK_INT(cmd(c, &g, "GET", "greygate:k", NULL), 0);
	RUN_UNTIL(g.got, 2000);
	CHECK(a.got && b.got && g.got);
	CHECK_INT(a.order, 1);
	CHECK_INT(b.order, 2);
	CHECK_INT(g.order, 3);
	CHECK_STR(a.text, "OK");
	CHECK_STR(b.text, "1");
	CHECK_STR(g.text, "v1");
	CHECK_INT(rconn_get_counters(c)->commands, 3);
	CHECK_INT(rconn_get_counters(c)->failed, 0);
	rconn_free(c);
}

/* The database chosen is the one written: SELECT after AUTH, again after
 * each reconnection; a database the server has not is refused. */
static void
test_database_selected(void)
{
	struct rconn_config cfg = {.unix_path = server.sock,
	                           .password = PASSWORD,
	                           .timeout_ms = 1000,
	                           .db = 3};
	struct rconn *in3 = rconn_new(loop, &cfg, on_state, NULL);
	struct rconn *in0 = connect_with(PASSWORD, 1000);
	struct answer a, b, g;

	CHECK(in3 && in0);
	RUN_UNTIL(rconn_up(in3) && rconn_up(in0), 2000);
	CHECK(rconn_up(in3) && rconn_up(in0));
	CHECK_INT(cmd(in3, &a, "SET", "greygate:db", "three"), 0);
	RUN_UNTIL(a.got, 2000);
	CHECK_INT(cmd(in0, &b, "EXISTS", "greygate:db", NULL), 0);
	CHECK_INT(cmd(in0, &g, "GET", "greygate:db", NULL), 0);
	RUN_UNTIL(g.got, 2000);
	CHECK_STR(b.text, "0"); /* not in database 0 */
	rconn_free(in0);
	CHECK_INT(cmd(in3, &g, "GET", "greygate:db", NULL), 0);
	RUN_UNTIL(g.got, 2000);
	CHECK_STR(g.text, "three");
	rconn_free(in3);

	cfg.db = 99; /* past the server's 16 */
	downs = 0;
	last_why[0] = 0;
	in3 = rconn_new(loop, &cfg, on_state, NULL);
	RUN_UNTIL(downs > 0, 2000);
	CHECK(!rconn_up(in3));
	CHECK(strstr(last_why, "SELECT refused"));
	CHECK(strstr(rconn_why(in3), "SELECT refused"));
	rconn_free(in3);
}

static void
test_wrong_password_refused(void)
{
	struct rconn *c = connect_with("not-the-password", 1000);

	CHECK(c);
	RUN_UNTIL(downs > 0, 2000);
	CHECK(!rconn_up(c));
	CHECK_INT(ups, 0);
	CHECK(strstr(last_why, "AUTH refused: WRONGPASS"));
	rconn_free(c);
}

static void
test_server_that_stops_answering(void)
{
	struct rconn *c = connect_with(PASSWORD, 300);
	struct answer a, b;
	uint64_t sent;

	CHECK(c);
	RUN_UNTIL(rconn_up(c), 2000);
	CHECK(rconn_up(c));
	kill(server.pid, SIGSTOP);
	sent = loop_now_ms(loop);
	CHECK_INT(cmd(c, &a, "GET", "greygate:k", NULL), 0);
	CHECK_INT(cmd(c, &b, "GET", "greygate:k", NULL), 0);
	RUN_UNTIL(a.got && b.got, 2000);
	/* Both failed at the oldest's deadline, not at the kernel's. */
	CHECK(a.got && a.failed && b.got && b.failed);
	CHECK(loop_now_ms(loop) - sent < 1000);
	CHECK(!rconn_up(c));
	CHECK_INT(rconn_get_counters(c)->timeouts, 1);
	CHECK(strstr(last_why, "no answer within 300 ms"));
	CHECK_INT(cmd(c, &a, "PING", NULL, NULL), -ENOTCONN);
	/* It answers again: the connection comes back by itself. */
	kill(server.pid, SIGCONT);
	RUN_UNTIL(rconn_up(c), 5000);
	CHECK(rconn_up(c));
	CHECK_INT(cmd(c, &a, "GET", "greygate:k", NULL), 0);
	RUN_UNTIL(a.got, 2000);
	CHECK_STR(a.text, "v1");
	rconn_free(c);
}

/* Issue 29 D4/R3: a backlog answered at Redis's pace (each reply within
 * the deadline of the one before, all of them past it) is not a server
 * that stopped answering: the deadline runs from the last reply. */
static void
test_deadline_from_the_last_reply(void)
{
	static const char busy[] =
	        "local t = redis.call('TIME')\n"
	        "local s = t[1] * 1000000 + t[2]\n"
	        "repeat\n"
	        "  local u = redis.call('TIME')\n"
	        "  if u[1] * 1000000 + u[2] - s >= 100000 then break end\n"
	        "until false\n"
	        "return 1\n";
	struct rconn *c = connect_with(PASSWORD, 1000);
	struct answer a[15];
	/* (each command larger than Redis reads at once: it answers each
	 * as it is done, not the whole pipeline together) */
	static char script[15][64 * 1024];
	uint64_t sent;

	CHECK(c);
	RUN_UNTIL(rconn_up(c), 2000);
	CHECK(rconn_up(c));
	for (int i = 0; i < 15; i++) {
		int n = snprintf(script[i], sizeof(script[i]), "%s-- %d ",
		                 busy, i);

		memset(script[i] + n, 'x', sizeof(script[i]) - n - 1);
	}
	sent = loop_now_ms(loop);
	for (int i = 0; i < 15; i++)
		CHECK_INT(cmd(c, &a[i], "EVAL", script[i], "0"), 0);
	RUN_UNTIL(a[14].got, 5000);
	CHECK(loop_now_ms(loop) - sent >= 1500);
	for (int i = 0; i < 15; i++)
		CHECK(a[i].got && !a[i].failed);
	CHECK_INT(rconn_get_counters(c)->timeouts, 0);
	CHECK(rconn_up(c));
	rconn_free(c);
}

/* Issue 29 R4: a reply past the bound (one huge string; an array of
 * many small ones) drops the connection, says why, and it comes back. */
static void
test_reply_size_bounded(void)
{
	struct rconn_config cfg = {.unix_path = server.sock,
	                           .password = PASSWORD,
	                           .timeout_ms = 2000,
	                           .reply_max = 1u << 20};
	const char *push[3 + 400] = {"RPUSH", "greygate:list"};
	struct rconn *c;
	struct answer a;

	ups = downs = 0;
	c = rconn_new(loop, &cfg, on_state, NULL);
	CHECK(c);
	RUN_UNTIL(rconn_up(c), 2000);
	CHECK(rconn_up(c));
	/* 2 MB in one string */
	{
		const char *argv[4] = {"SETRANGE", "greygate:big", "2000000",
		                       "x"};

		memset(&a, 0, sizeof(a));
		CHECK_INT(rconn_command(c, on_answer, &a, 4, argv, NULL), 0);
		RUN_UNTIL(a.got, 2000);
		CHECK(!a.failed);
	}
	CHECK_INT(cmd(c, &a, "GET", "greygate:big", NULL), 0);
	RUN_UNTIL(a.got, 3000);
	CHECK(a.got && a.failed);
	CHECK(strstr(last_why, "a reply over 1048576 bytes"));
	RUN_UNTIL(rconn_up(c), 3000);
	CHECK(rconn_up(c));
	/* 20,000 small elements */
	for (int i = 0; i < 400; i++)
		push[2 + i] = "0";
	for (int round = 0; round < 50; round++) {
		memset(&a, 0, sizeof(a));
		CHECK_INT(rconn_command(c, on_answer, &a, 402, push, NULL), 0);
		RUN_UNTIL(a.got, 2000);
		CHECK(!a.failed);
	}
	{
		const char *argv[4] = {"LRANGE", "greygate:list", "0", "-1"};

		memset(&a, 0, sizeof(a));
		CHECK_INT(rconn_command(c, on_answer, &a, 4, argv, NULL), 0);
		RUN_UNTIL(a.got, 3000);
		CHECK(a.failed);
		CHECK(strstr(last_why, "a reply over 1048576 bytes"));
	}
	/* A reply within the bound is read as ever. */
	RUN_UNTIL(rconn_up(c), 3000);
	CHECK_INT(cmd(c, &a, "STRLEN", "greygate:big", NULL), 0);
	RUN_UNTIL(a.got, 2000);
	CHECK_STR(a.text, "2000001");
	CHECK_INT(cmd(c, &a, "DEL", "greygate:big", "greygate:list"), 0);
	RUN_UNTIL(a.got, 2000);
	rconn_free(c);
}

static void
test_server_gone_and_back(void)
{
	struct rconn *c = connect_with(PASSWORD, 500);
	struct answer a;

	CHECK(c);
	RUN_UNTIL(rconn_up(c), 2000);
	CHECK(rconn_up(c));
	redis_server_stop(&server);
	RUN_UNTIL(downs > 0, 2000);
	CHECK(!rconn_up(c));
	/* Tries again meanwhile (1 s, 2 s, ...), failing each time. */
	RUN_UNTIL(downs > 1, 3000);
	CHECK(downs > 1);
	CHECK(strstr(last_why, "cannot connect"));
	redis_server_start(&server);
	RUN_UNTIL(rconn_up(c), 6000);
	CHECK(rconn_up(c));
	/* A new server: the data is gone (save ""), the connection works. */
	CHECK_INT(cmd(c, &a, "EXISTS", "greygate:k", NULL), 0);
	RUN_UNTIL(a.got, 2000);
	CHECK_STR(a.text, "0");
	/* Freed with a command waiting: it is answered, as failed. */
	CHECK_INT(cmd(c, &a, "PING", NULL, NULL), 0);
	rconn_free(c);
	CHECK(a.got && a.failed);
}

int
main(void)
{
	loop = loop_new(timesrc_system());
	CHECK(loop);
	redis_server_start_or_skip(&server);
	RUN(test_round_trips_in_order);
	RUN(test_wrong_password_refused);
	RUN(test_database_selected);
	RUN(test_server_that_stops_answering);
	RUN(test_deadline_from_the_last_reply);
	RUN(test_reply_size_bounded);
	RUN(test_server_gone_and_back);
	loop_free(loop);
	return 0;
}
