// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the sensor's TCP reassembly with hand-built segments: what the
 * parser gets is the stream in order, whatever order the segments came
 * in; a retransmission (whole or overlapping) is trimmed; a gap the
 * reorder buffer cannot wait for is skipped and the parser finds the
 * next line; the per-flow and total byte caps hold (a segment that would
 * pass one is a gap, not held); past max_flows the oldest flow ends (its
 * pending RCPT reported with reply 0). The events are the evidence. */
#include <arpa/inet.h>
#include <pcap/dlt.h>
#include <string.h>
#include <sys/socket.h>

#include "check.h"
#include "sensor.h"

#define T0 1700000000
#define MX "203.0.113.1"

struct seen {
	int reply;
	char from[64], to[64];
};

static struct seen events[64];
static int nevents;

static void
on_event(const struct sensor_event *ev, void *ctx)
{
	if (ev->type != SENSOR_EV_RCPT || nevents == 64)
		return;
	events[nevents].reply = ev->reply;
	snprintf(events[nevents].from, sizeof(events[0].from), "%s", ev->from);
	snprintf(events[nevents].to, sizeof(events[0].to), "%s", ev->to);
	nevents++;
}

static void
frame(struct sensor *s, const char *src, uint16_t sport, const char *dst,
      uint16_t dport, uint32_t seq, uint8_t flags, const char *payload)
{
	uint8_t f[1600] = {0};
	size_t plen = strlen(payload), len = 40 + plen;
	struct timeval tv = {.tv_sec = T0};

	f[0] = 0x45;
	f[2] = (uint8_t)(len >> 8);
	f[3] = (uint8_t)len;
	f[8] = 64;
	f[9] = 6;
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
	f[32] = 5 << 4;
	f[33] = flags;
	memcpy(f + 40, payload, plen);
	sensor_frame(s, DLT_RAW, &tv, f, len);
}

#define SYN 0x02
#define ACK 0x10

/* Client bytes at offset off of its stream (which starts at seq 1001). */
static void
client(struct sensor *s, uint16_t port, uint32_t off, const char *data)
{
	frame(s, "198.51.100.7", port, MX, 25, 1001 + off, ACK, data);
}

static void
server(struct sensor *s, uint16_t port, uint32_t off, const char *data)
{
	frame(s, MX, 25, "198.51.100.7", port, 5001 + off, ACK, data);
}

static void
open_flow(struct sensor *s, uint16_t port)
{
	frame(s, "198.51.100.7", port, MX, 25, 1000, SYN, "");
	frame(s, MX, 25, "198.51.100.7", port, 5000, SYN | ACK, "");
	server(s, port, 0, "220 mx\r\n");
}

static struct sensor *
new_sensor(size_t reorder, size_t total, size_t flows)
{
	struct sensor_config cfg;
	struct sensor *s;

	sensor_config_defaults(&cfg);
	if (reorder)
		cfg.max_reorder_bytes = reorder;
	if (total)
		cfg.max_total_bytes = total;
	if (flows)
		cfg.max_flows = flows;
	s = sensor_new(&cfg, on_event, NULL);
	CHECK(s);
	nevents = 0;
	return s;
}

static const char helo[] = "HELO c\r\n";               /* 8 bytes */
static const char mail[] = "MAIL FROM:<a@a.test>\r\n"; /* 22 */
static const char rcpt[] = "RCPT TO:<b@b.test>\r\n";   /* 20 */

static void
test_out_of_order_held_then_released(void)
{
	struct sensor *s = new_sensor(0, 0, 0);

	open_flow(s, 40000);
	/* RCPT first, then MAIL, then HELO: held until the hole fills. */
	client(s, 40000, 30, rcpt);
	client(s, 40000, 8, mail);
	CHECK_INT(nevents, 0);
	client(s, 40000, 0, helo);
	server(s, 40000, 8, "250 hi\r\n250 ok\r\n451 later\r\n");
	CHECK_INT(nevents, 1);
	CHECK_STR(events[0].from, "a@a.test");
	CHECK_STR(events[0].to, "b@b.test");
	CHECK_INT(events[0].reply, 451);
	sensor_free(s);
}

static void
test_retransmissions_trimmed(void)
{
	struct sensor *s = new_sensor(0, 0, 0);

	open_flow(s, 40001);
	client(s, 40001, 0, helo);
	client(s, 40001, 8, mail);
	/* The same MAIL again, whole; then one that starts inside it and
	 * carries the RCPT on: only the new bytes count. */
	client(s, 40001, 8, mail);
	client(s, 40001, 26, "t>\r\nRCPT TO:<b@b.test>\r\n");
	client(s, 40001, 30, rcpt); /* and that RCPT once more */
	server(s, 40001, 8, "250 hi\r\n250 ok\r\n250 sure\r\n");
	CHECK_INT(nevents, 1);
	CHECK_STR(events[0].from, "a@a.test");
	CHECK_INT(events[0].reply, 250);
	sensor_free(s);
}

static void
test_gap_skipped_parser_resyncs(void)
{
	/* Room for 40 held bytes only. */
	struct sensor *s = new_sensor(40, 0, 0);

	open_flow(s, 40002);
	client(s, 40002, 0, helo);
	client(s, 40002, 8, mail);
	/* 10 bytes lost mid-line (offset 30..39), then what follows
	 * arrives in pieces larger than the buffer can wait with. */
	client(s, 40002, 40, "TO:<lost@b.test>\r\n");
	client(s, 40002, 58, "RCPT TO:<c@b.test>\r\nRCPT TO:<d@b.test>\r\n");
	/* The line the gap cut is dropped; the next ones are whole. */
	server(s, 40002, 8, "250 hi\r\n250 ok\r\n451 c\r\n451 d\r\n");
	CHECK_INT(sensor_get_counters(s)->gaps, 1);
	CHECK_INT(nevents, 2);
	CHECK_STR(events[0].to, "c@b.test");
	CHECK_STR(events[1].to, "d@b.test");
	CHECK_STR(events[1].from, "a@a.test");
	sensor_free(s);
}

static uint64_t
gaps(struct sensor *s)
{
	return sensor_get_counters(s)->gaps;
}

static void
test_caps_per_flow_and_in_all(void)
{
	/* 64 bytes held in all, 48 a flow. */
	struct sensor *s = new_sensor(48, 64, 0);
	uint64_t g;

	open_flow(s, 40003);
	open_flow(s, 40004);
	client(s, 40003, 30, rcpt); /* 20 held */
	client(s, 40003, 60, rcpt); /* 40 held */
	CHECK_INT(gaps(s), 0);
	client(s, 40003, 90, rcpt); /* 60 in this flow: past its cap */
	CHECK(gaps(s) > 0);
	/* The first flow gave up what it held: room for the second. */
	g = gaps(s);
	client(s, 40004, 30, rcpt);
	client(s, 40004, 60, rcpt);
	CHECK_INT(gaps(s), g);
	open_flow(s, 40005);
	client(s, 40005, 30, rcpt); /* 60 held in all */
	CHECK_INT(gaps(s), g);
	client(s, 40005, 60, rcpt); /* 80: past the total, not held */
	CHECK(gaps(s) > g);
	CHECK_INT(sensor_get_counters(s)->flows_open, 3);
	sensor_free(s);
}

static void
test_max_flows_ends_the_oldest(void)
{
	struct sensor *s = new_sensor(0, 0, 2);

	open_flow(s, 40005);
	client(s, 40005, 0, helo);
	client(s, 40005, 8, mail);
	client(s, 40005, 30, rcpt); /* its reply never comes */
	open_flow(s, 40006);
	CHECK_INT(nevents, 0);
	open_flow(s, 40007); /* the third: the first is ended */
	CHECK_INT(sensor_get_counters(s)->flows_evicted, 1);
	CHECK_INT(sensor_get_counters(s)->flows_open, 2);
	CHECK_INT(nevents, 1);
	CHECK_STR(events[0].to, "b@b.test");
	CHECK_INT(events[0].reply, 0);
	sensor_free(s);
}

int
main(void)
{
	RUN(test_out_of_order_held_then_released);
	RUN(test_retransmissions_trimmed);
	RUN(test_gap_skipped_parser_resyncs);
	RUN(test_caps_per_flow_and_in_all);
	RUN(test_max_flows_ends_the_oldest);
	return 0;
}
