/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inside the sensor: the decoder (decode.c) hands each TCP segment to
 * the flows (flow.c). sensor.h is the API. */
#ifndef GREYGATE_FLOW_INT_H
#define GREYGATE_FLOW_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

#include "hash_table.h"
#include "list.h"
#include "sensor.h"

struct flow;

struct sensor {
	struct sensor_config cfg;
	sensor_event_fn *fn;
	void *ctx;
	sensor_tarpit_fn *tarpit;
	void *tarpit_ctx;
	struct hash_table flows; /* by their four ends, keyed */
	struct list lru; /* the flows, least recently seen first */
	size_t nflows;
	size_t held_total;
	bool quiet; /* flows ending without events (sensor_free) */
	struct sensor_counters counters;
};

/* The parts of a decoded TCP segment the flows need. */
struct segment {
	uint8_t family;
	const uint8_t *src, *dst;
	uint16_t sport, dport;
	uint32_t seq;
	uint8_t flags;
	const uint8_t *payload;
	size_t len;
};

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04

/* sensor_on_segment - one TCP segment of the SMTP ports, to its flow. */
void sensor_on_segment(struct sensor *s, const struct timeval *ts,
                       const struct segment *seg);

#endif
