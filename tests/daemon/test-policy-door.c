// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the policy door as a service, through policy_door.h only:
 * opened on a real unix socket, asking a real decider (over LMDB)
 * through its decision port, with a fake clock, asked as Postfix's
 * check_policy_service asks. A first RCPT is deferred with postgrey's
 * text, an early retry too, the retry after the delay passes with one
 * X-Greylist header per message; requests sent together are answered
 * in order, one sent a byte at a time is answered once whole; a state
 * other than RCPT is DUNNO; a malformed request closes the connection
 * unanswered; every one of them is counted. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "config_parts.h"
#include "check.h"
#include "config_value.h"
#include "decider_rig.h"
#include "log.h"
#include "policy_door.h"

#define T0 1700000000

static struct timesrc_fake clock_;
static struct decider_rig rig;
static struct policy_door *door;

static void
setup(void)
{
	struct decision_port port;
	struct policy_door_settings part;
	char err[512] = "";

	timesrc_fake_init(&clock_, T0);
	decider_rig_open(&rig, "policy-door", &clock_.base);
	snprintf(rig.cfg.policy.listen, sizeof(rig.cfg.policy.listen),
	         "unix:%s/policy.sock", rig.dir);
	CHECK_INT(config_parse_listen(rig.cfg.policy.listen, &rig.cfg.policy),
	          0);
	rig.cfg.grey.delay_sec = 300;
	port = decider_port(rig.decider);
	config_door_part(&rig.cfg, &part);
	if (policy_door_open(rig.loop, &part, &port, &door, err) < 0) {
		fprintf(stderr, "policy_door_open: %s\n", err);
		exit(1);
	}
	CHECK(door);
}

static void
teardown(void)
{
	policy_door_close(door);
	decider_rig_close(&rig);
}

static int
connect_door(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);

	CHECK(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/policy.sock", rig.dir);
	CHECK_INT(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* The loop turns (the fake clock standing) until fd has answers ended
 * by want empty lines, or is closed. Return: what came (static). */
static const char *
answers(int fd, int want, bool *closed)
{
	static char got[8192];
	size_t len = 0;
	int ends = 0;

	*closed = false;
	got[0] = '\0';
	/* (want 0: a few turns, to see that nothing comes) */
	for (int turn = 0; turn < 500 && !*closed; turn++) {
		ssize_t n;

		loop_run_once(rig.loop, 10);
		while ((n = read(fd, got + len, sizeof(got) - 1 - len)) > 0)
			len += (size_t)n;
		if (n == 0)
			*closed = true;
		got[len] = '\0';
		ends = 0;
		for (const char *p = got; (p = strstr(p, "\n\n")); p += 2)
			ends++;
		if (ends >= want && (want || turn >= 5))
			break;
	}
	return got;
}

static void
say(int fd, const char *text)
{
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
}

static char *
request(const char *state, const char *client, const char *sender,
        const char *rcpt, const char *instance)
{
	static char req[1024];

	snprintf(req, sizeof(req),
	         "request=smtpd_access_policy\nprotocol_state=%s\n"
	         "protocol_name=ESMTP\nclient_address=%s\n"
	         "client_name=unknown\nhelo_name=mx.sender.test\n"
	         "sender=%s\nrecipient=%s\ninstance=%s\n\n",
	         state, client, sender, rcpt, instance);
	return req;
}

static void
check_has(const char *got, const char *want)
{
	if (!strstr(got, want)) {
		fprintf(stderr, "got: %s\nwanted: %s\n", got, want);
		CHECK(false);
	}
}

/* Greylisted, early, passed with its header: on one connection, as
 * Postfix keeps it. */
static void
test_greylist_then_pass(void)
{
	struct policy_door_stats st;
	bool closed;
	int fd;

	setup();
	fd = connect_door();
	say(fd, request("RCPT", "198.51.100.7", "alice@sender.test",
	                "bob@example.org", "a1"));
	check_has(answers(fd, 1, &closed), "action=DEFER_IF_PERMIT ");
	timesrc_fake_advance_ms(&clock_, 100 * 1000);
	say(fd, request("RCPT", "198.51.100.7", "alice@sender.test",
	                "bob@example.org", "a2"));
	check_has(answers(fd, 1, &closed), "action=DEFER_IF_PERMIT ");
	timesrc_fake_advance_ms(&clock_, 250 * 1000);
	say(fd, request("RCPT", "198.51.100.7", "alice@sender.test",
	                "bob@example.org", "a3"));
	check_has(answers(fd, 1, &closed),
	          "action=PREPEND X-Greylist: delayed 350 seconds by greygate-");
	/* the same message's next recipient: passed, no second header */
	say(fd, request("RCPT", "198.51.100.7", "alice@sender.test",
	                "carol@example.org", "a3"));
	check_has(answers(fd, 1, &closed), "action=DUNNO\n\n");
	CHECK(!closed);
	policy_door_get_stats(door, &st);
	CHECK_INT(st.connections, 1);
	CHECK_INT(st.open, 1);
	CHECK_INT(st.requests, 4);
	CHECK_INT(st.deferred, 2);
	close(fd);
	teardown();
}

/* Requests in one write answered in order; one a byte at a time answered
 * once whole; DATA is not the door's to greylist. */
static void
test_pipelined_and_split(void)
{
	char two[2048];
	const char *req, *got;
	bool closed;
	int fd;

	setup();
	fd = connect_door();
	snprintf(two, sizeof(two), "%s",
	         request("RCPT", "203.0.113.9", "a@s.test", "b@example.org",
	                 "p1"));
	strncat(two, request("DATA", "203.0.113.9", "a@s.test",
	                     "b@example.org", "p1"),
	        sizeof(two) - strlen(two) - 1);
	say(fd, two);
	got = answers(fd, 2, &closed);
	CHECK(strstr(got, "action=DEFER_IF_PERMIT ") < strstr(got, "DUNNO"));
	check_has(got, "\n\naction=DUNNO\n\n");
	req = request("RCPT", "203.0.113.10", "c@s.test", "d@example.org",
	              "p2");
	for (size_t i = 0; i < 60; i++) {
		CHECK_INT(write(fd, req + i, 1), 1);
		loop_run_once(rig.loop, 0);
	}
	CHECK_STR(answers(fd, 0, &closed), ""); /* nothing yet */
	say(fd, req + 60);
	check_has(answers(fd, 1, &closed), "action=DEFER_IF_PERMIT ");
	close(fd);
	teardown();
}

/* A line without '=': closed unanswered, counted; the door goes on. */
static void
test_malformed(void)
{
	struct policy_door_stats st;
	bool closed;
	const char *got;
	int fd;

	setup();
	fd = connect_door();
	say(fd, "request=smtpd_access_policy\nthis is not an attribute\n\n");
	got = answers(fd, 1, &closed);
	CHECK(closed);
	CHECK_STR(got, "");
	close(fd);
	policy_door_get_stats(door, &st);
	CHECK_INT(st.malformed, 1);
	CHECK_INT(st.requests, 0);
	fd = connect_door();
	say(fd, request("RCPT", "198.51.100.8", "e@s.test", "f@example.org",
	                "m1"));
	check_has(answers(fd, 1, &closed), "action=DEFER_IF_PERMIT ");
	close(fd);
	policy_door_get_stats(door, &st);
	CHECK_INT(st.connections, 2);
	teardown();
}

int
main(void)
{
	log_init("test-policy-door", false, LOG_LEVEL_WARN);
	RUN(test_greylist_then_pass);
	RUN(test_pipelined_and_split);
	RUN(test_malformed);
	return 0;
}
