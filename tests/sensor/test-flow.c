// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the sensor's flows with hand-built raw IPv4 frames and a fake
 * tarpit: a flow's path is known from its banner; a tarpit flow is
 * followed no further (no events: the tarpit speaks for its sessions)
 * and ends once silent even if its FINs were lost, a fast-path flow only
 * at the idle timeout; the flow table grows; idle order. */
#include <arpa/inet.h>
#include <pcap/dlt.h>
#include <string.h>
#include <sys/socket.h>

#include "check.h"
#include "sensor.h"

#define T0 1700000000

static bool tarpit_has; /* what the fake tarpit answers */
static int rcpts, helos;

static bool
fake_tarpit(int family, const uint8_t *client, uint16_t port, void *ctx)
{
	return tarpit_has;
}

static void
on_event(const struct sensor_event *ev, void *ctx)
{
	if (ev->type == SENSOR_EV_RCPT)
		rcpts++;
	if (ev->type == SENSOR_EV_HELO)
		helos++;
}

/* One raw IPv4/TCP frame (no checksums: the sensor does not check). */
static void
send_frame(struct sensor *s, int64_t at, const char *src, uint16_t sport,
	   const char *dst, uint16_t dport, uint32_t seq, uint8_t flags,
	   const char *payload)
{
	uint8_t f[1500] = {0};
	size_t plen = strlen(payload), len = 40 + plen;
	struct timeval tv = {.tv_sec = at};

	f[0] = 0x45;
	f[2] = (uint8_t)(len >> 8);
	f[3] = (uint8_t)len;
	f[8] = 64;
	f[9] = 6; /* TCP */
	CHECK_INT(inet_pton(AF_INET, src, f + 12), 1);
	CHECK_INT(inet_pton(AF_INET, dst, f + 16), 1);
	f[20] = (uint8_t)(sport >> 8);
	f[21] = (uint8_t)sport;
	f[22] = (uint8_t)(dport >> 8);
	f[23] = (uint8_t)dport;
	f[24] = (uint8_t)(seq >> 24);
	f[25] = (uint8_t)(seq >> 16);
	f[26] = (uint8_t)(seq >> 8);
	f[27] = (uint8_t)seq;
	f[32] = 5 << 4; /* data offset: 20 bytes */
	f[33] = flags;
	f[34] = 0xff;
	memcpy(f + 40, payload, plen);
	sensor_frame(s, DLT_RAW, &tv, f, len);
}

#define SYN 0x02
#define ACK 0x10
#define PSH 0x08

/* A session up to RCPT, then nothing: the FINs are lost. */
static void
session(struct sensor *s, const char *client, uint16_t port)
{
	send_frame(s, T0, client, port, "203.0.113.1", 25, 1000, SYN, "");
	send_frame(s, T0, "203.0.113.1", 25, client, port, 5000, ACK | PSH,
		   "220 mx ESMTP\r\n");
	send_frame(s, T0, client, port, "203.0.113.1", 25, 1001, ACK | PSH,
		   "HELO c\r\nMAIL FROM:<a@a.test>\r\nRCPT TO:<b@b.test>\r\n");
	send_frame(s, T0, "203.0.113.1", 25, client, port, 5014, ACK | PSH,
		   "250 hi\r\n250 ok\r\n451 later\r\n");
}

/* A sensor with default settings asking the fake tarpit. */
static struct sensor *
new_sensor(struct sensor_config *cfg)
{
	struct sensor *s;

	sensor_config_defaults(cfg);
	s = sensor_new(cfg, on_event, NULL);
	CHECK(s);
	sensor_set_tarpit_hook(s, fake_tarpit, NULL);
	return s;
}

static void
test_tarpit_flow_is_followed_no_further(void)
{
	struct sensor_config cfg;
	struct sensor *s = new_sensor(&cfg);

	rcpts = 0;
	tarpit_has = true; /* the tarpit sent the banner */
	session(s, "198.51.100.7", 40000);
	CHECK_INT(rcpts, 0);
	CHECK_INT(sensor_get_counters(s)->tarpit_flows, 1);
	CHECK_INT(sensor_get_counters(s)->flows_open, 1);
	/* More of it: still no events, and the tarpit need not be asked. */
	tarpit_has = false;
	send_frame(s, T0 + 1, "198.51.100.7", 40000, "203.0.113.1", 25, 1052,
		   ACK | PSH, "RCPT TO:<c@b.test>\r\n");
	CHECK_INT(rcpts, 0);
	/* Silent, FINs lost: over, whether the tarpit holds it or not. */
	tarpit_has = true;
	sensor_expire(s, T0 + 1 + SENSOR_TARPIT_FLOW_IDLE_SEC - 1);
	CHECK_INT(sensor_get_counters(s)->flows_open, 1);
	sensor_expire(s, T0 + 1 + SENSOR_TARPIT_FLOW_IDLE_SEC + 1);
	CHECK_INT(sensor_get_counters(s)->flows_open, 0);
	CHECK_INT(rcpts, 0);
	sensor_free(s);
}

/* The transparent hand-off's connection to the MTA leaves from the
 * client's address: the MTA's banner comes while greygated reads it,
 * before the tarpit holds the connection (the fast path, then), and the
 * tarpit holds it from its replay on. It makes no event: it was counted
 * as a fast-path session before (issue 32: 18 of 100 runs). */
static void
test_handoff_greeted_before_the_tarpit_holds_it(void)
{
	struct sensor_config cfg;
	struct sensor *s = new_sensor(&cfg);

	rcpts = 0;
	tarpit_has = false; /* greygated reads the banner */
	send_frame(s, T0, "198.51.100.6", 40010, "203.0.113.1", 25, 1000, SYN,
		   "");
	send_frame(s, T0, "203.0.113.1", 25, "198.51.100.6", 40010, 5000,
		   ACK | PSH, "220 mx ESMTP\r\n");
	tarpit_has = true; /* the tarpit's replay, joined */
	send_frame(s, T0, "198.51.100.6", 40010, "203.0.113.1", 25, 1001,
		   ACK | PSH,
		   "HELO c\r\nMAIL FROM:<a@a.test>\r\nRCPT TO:<b@b.test>\r\n");
	send_frame(s, T0, "203.0.113.1", 25, "198.51.100.6", 40010, 5014,
		   ACK | PSH, "250 hi\r\n250 ok\r\n250 ok\r\n");
	CHECK_INT(rcpts, 0);
	CHECK_INT(helos, 0);
	CHECK_INT(sensor_get_counters(s)->tarpit_flows, 1);
	/* and nothing of it later, even once the tarpit forgot it */
	tarpit_has = false;
	send_frame(s, T0 + 1, "198.51.100.6", 40010, "203.0.113.1", 25, 1052,
		   ACK | PSH, "RCPT TO:<c@b.test>\r\n");
	send_frame(s, T0 + 1, "203.0.113.1", 25, "198.51.100.6", 40010, 5036,
		   ACK | PSH, "250 ok\r\n");
	CHECK_INT(rcpts, 0);
	sensor_free(s);
}

/* A SYN, then nothing seen: the banner was lost in a burst. */
static void
test_flow_without_banner_ends_when_silent(void)
{
	struct sensor_config cfg;
	struct sensor *s = new_sensor(&cfg);

	send_frame(s, T0, "198.51.100.9", 40002, "203.0.113.1", 25, 1000, SYN,
		   "");
	sensor_expire(s, T0 + SENSOR_TARPIT_FLOW_IDLE_SEC - 1);
	CHECK_INT(sensor_get_counters(s)->flows_open, 1);
	sensor_expire(s, T0 + SENSOR_TARPIT_FLOW_IDLE_SEC + 1);
	CHECK_INT(sensor_get_counters(s)->flows_open, 0);
	sensor_free(s);
}

static void
test_fast_path_flow_waits_for_the_idle_timeout(void)
{
	struct sensor_config cfg;
	struct sensor *s = new_sensor(&cfg);

	rcpts = 0;
	tarpit_has = false; /* the MTA sent the banner */
	session(s, "198.51.100.8", 40001);
	CHECK_INT(rcpts, 1);
	sensor_expire(s, T0 + SENSOR_TARPIT_FLOW_IDLE_SEC + 1);
	CHECK_INT(sensor_get_counters(s)->flows_open, 1);
	sensor_expire(s, T0 + (int64_t)cfg.idle_timeout_sec + 1);
	CHECK_INT(sensor_get_counters(s)->flows_open, 0);
	sensor_free(s);
}

/* A session's client half (up to RCPT) and the server's half, apart, so
 * that many flows can be opened before any of them is looked up again. */
static void
client_half(struct sensor *s, int64_t at, const char *client, uint16_t port)
{
	send_frame(s, at, client, port, "203.0.113.1", 25, 1000, SYN, "");
	send_frame(s, at, client, port, "203.0.113.1", 25, 1001, ACK | PSH,
		   "HELO c\r\nMAIL FROM:<a@a.test>\r\nRCPT TO:<b@b.test>\r\n");
}

static void
server_half(struct sensor *s, int64_t at, const char *client, uint16_t port)
{
	send_frame(s, at, "203.0.113.1", 25, client, port, 5000, ACK | PSH,
		   "220 mx ESMTP\r\n250 hi\r\n250 ok\r\n451 later\r\n");
}

/* The flow table starts small and grows as flows open: flows opened
 * before each growth are still found after it. */
static void
test_many_flows_outgrow_the_table(void)
{
	struct sensor_config cfg;
	struct sensor *s = new_sensor(&cfg);
	const char *clients[] = {"198.51.100.9", "203.0.113.77"};

	rcpts = 0;
	for (int i = 0; i < 5000; i++)
		client_half(s, T0, clients[i % 2], (uint16_t)(10000 + i));
	CHECK_INT(sensor_get_counters(s)->flows_open, 5000);
	CHECK_INT(rcpts, 0); /* no replies yet */
	for (int i = 0; i < 5000; i++)
		server_half(s, T0, clients[i % 2], (uint16_t)(10000 + i));
	CHECK_INT(rcpts, 5000); /* every reply found its flow */
	CHECK_INT(sensor_get_counters(s)->flows, 5000);
	sensor_finish(s);
	CHECK_INT(sensor_get_counters(s)->flows_open, 0);
	sensor_free(s);
}

/* Flows move in the idle order once a second, not for every packet: a
 * flow seen again in a later second outlives one that stayed silent,
 * and packets within one second keep a flow where it is. */
static void
test_idle_order_by_the_second(void)
{
	struct sensor_config cfg;
	struct sensor *s = new_sensor(&cfg);
	int64_t idle = (int64_t)cfg.idle_timeout_sec;

	tarpit_has = false;
	client_half(s, T0, "198.51.100.10", 41000);	 /* A */
	client_half(s, T0 + 5, "198.51.100.11", 41001); /* B */
	server_half(s, T0 + 10, "198.51.100.10", 41000); /* A again */
	server_half(s, T0 + 10, "198.51.100.10", 41000); /* same second */
	CHECK_INT(sensor_get_counters(s)->flows_open, 2);
	sensor_expire(s, T0 + 6 + idle); /* B idle past the timeout, A not */
	CHECK_INT(sensor_get_counters(s)->flows_open, 1);
	sensor_expire(s, T0 + 10 + idle);
	CHECK_INT(sensor_get_counters(s)->flows_open, 1);
	sensor_expire(s, T0 + 11 + idle);
	CHECK_INT(sensor_get_counters(s)->flows_open, 0);
	sensor_free(s);
}

int
main(void)
{
	RUN(test_tarpit_flow_is_followed_no_further);
	RUN(test_handoff_greeted_before_the_tarpit_holds_it);
	RUN(test_flow_without_banner_ends_when_silent);
	RUN(test_fast_path_flow_waits_for_the_idle_timeout);
	RUN(test_many_flows_outgrow_the_table);
	RUN(test_idle_order_by_the_second);
	return 0;
}
