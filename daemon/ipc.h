/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The records between greygated and its unprivileged child, one per
 * SOCK_SEQPACKET message, all of one fixed size and stamped with a
 * version: a record of another size or version is dropped and logged.
 * Down: the child's settings, first (the child is a fresh program, not a
 * copy of greygated's memory). Up: SMTP events, the child's counters and
 * its log lines (it has no log of its own). */
#ifndef GREYGATE_IPC_H
#define GREYGATE_IPC_H

#include <stdint.h>

#include "policy.h"
#include "sensor.h"
#include "tarpit.h"

#define IPC_VERSION 2
#define IPC_HELO_MAX 256
#define IPC_LOG_MAX 512

/* Where the child finds what greygated opened for it, after its exec. */
#define IPC_FD_SOCK 3   /* its end of the socketpair */
#define IPC_FD_LISTEN 4 /* 4..7: tarpit v4, v6; stutter v4, v6 */
#define IPC_LISTEN_MAX 4

enum ipc_type {
	IPC_EVENT = 1,  /* child -> parent: an SMTP event (ipc_event) */
	IPC_STATS = 2,  /* child -> parent: counters, every second */
	IPC_LOG = 3,    /* child -> parent: a log line (ipc_log) */
	IPC_CONFIG = 4  /* parent -> child: its settings, first (ipc_config) */
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

struct ipc_log {
	uint8_t level; /* enum log_level */
	char text[IPC_LOG_MAX];
};

/* What the child needs of greygated's config (strings inline: pointers
 * in tarpit and sensor are not valid in the child and are set there). */
struct ipc_config {
	int32_t parent_pid; /* a child whose parent is another is orphaned */
	uint8_t seccomp;
	uint8_t log_level;
	uint8_t listen[IPC_LISTEN_MAX]; /* which of 4..7 hold a listener */
	uint32_t capture_buffer;
	char interface[64];
	char user[64];
	char hostname[256];
	char capabilities[256];
	struct tarpit_config tarpit;
	struct sensor_config sensor;
};

struct ipc_record {
	uint16_t version; /* IPC_VERSION */
	uint16_t type;    /* enum ipc_type */
	uint32_t pad;
	union {
		struct ipc_event ev;
		struct ipc_stats stats;
		struct ipc_log log;
		struct ipc_config config;
	} u;
};

#endif
