/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The records between greygated and its unprivileged child, one per
 * SOCK_SEQPACKET message, all of one fixed size and stamped with a
 * version: a record of another size or version is dropped and logged. Up:
 * SMTP events and the child's counters. Down: nothing yet; the hand-off
 * (DESIGN.md) will send verdicts for sessions that wait on one. */
#ifndef GREYGATE_IPC_H
#define GREYGATE_IPC_H

#include <stdint.h>

#include "policy.h"
#include "sensor.h"
#include "tarpit.h"

#define IPC_VERSION 1
#define IPC_HELO_MAX 256

enum ipc_type {
	IPC_EVENT = 1, /* child -> parent: an SMTP event (ipc_event) */
	IPC_STATS = 2  /* child -> parent: counters, every second */
};

struct ipc_event {
	int64_t ts_sec;
	int32_t ts_usec;
	uint8_t type;   /* enum sensor_event_type */
	uint8_t path;   /* enum sensor_path */
	uint8_t family; /* AF_INET or AF_INET6 */
	uint8_t pad;
	uint8_t client[16];
	uint8_t server[16];
	uint16_t client_port, server_port;
	int32_t reply;
	char helo[IPC_HELO_MAX];
	char from[GREY_ADDR_MAX];
	char to[GREY_ADDR_MAX];
};

struct ipc_stats {
	struct sensor_counters sensor;
	struct tarpit_counters tarpit;
	uint64_t pcap_received, pcap_dropped;
	uint64_t events_dropped; /* the parent's socket was full */
};

struct ipc_record {
	uint16_t version; /* IPC_VERSION */
	uint16_t type;    /* enum ipc_type */
	uint32_t pad;
	union {
		struct ipc_event ev;
		struct ipc_stats stats;
	} u;
};

#endif
