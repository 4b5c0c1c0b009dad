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
/* A tarpit session waits this long for its verdict (without the
 * hand-off), then gets the plain deferral. */
#define VERDICT_WAIT_MS 2000

/* Where the child finds what greygated opened for it, after its exec. */
#define IPC_FD_SOCK 3   /* its end of the socketpair */
#define IPC_FD_LISTEN 4 /* 4..7: tarpit v4, v6; stutter v4, v6 */
#define IPC_LISTEN_MAX 4

enum ipc_type {
	IPC_EVENT = 1,   /* child -> parent: the sensor saw, on the fast path
			    (ipc_event) */
	IPC_STATS = 2,   /* child -> parent: counters, every second */
	IPC_LOG = 3,     /* child -> parent: a log line (ipc_log) */
	IPC_CONFIG = 4,  /* parent -> child: its settings, first (ipc_config) */
	IPC_ATTEMPT = 5, /* child -> parent: a tarpit session asks (ipc_event
			    with its session) */
	IPC_VERDICT = 6, /* parent -> child: the answer (ipc_verdict) */
	IPC_CAPS = 7     /* parent -> child: what the tarpit's EHLO lists,
			    learnt from the MTA's (ipc_caps) */
};

struct ipc_event {
	uint64_t session; /* IPC_ATTEMPT: the tarpit session asking */
	int64_t ts_sec;   /* packet time (only a replay decides by it) */
	int32_t ts_usec;
	uint8_t type;   /* enum sensor_event_type: RCPT or STARTTLS */
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

struct ipc_verdict {
	uint64_t session;  /* the session that asked */
	uint8_t action;    /* enum tarpit_action */
	uint8_t handoff;   /* a connection to the MTA comes with it (its
			      descriptor in the message's SCM_RIGHTS) */
	uint8_t greeted;   /* ... whose greeting greygated already read */
	uint8_t pad;
	uint32_t wait_sec; /* TARPIT_GREYLIST: seconds left */
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
	uint32_t verdict_wait_ms; /* a question's answer, at most */
	uint32_t handoff_ms;      /* a hand-off's replay, at most */
	char interface[64];
	char user[64];
	char hostname[256];
	char capabilities[256];
	struct tarpit_config tarpit;
	struct sensor_config sensor;
};

struct ipc_caps {
	uint8_t starttls; /* list STARTTLS */
	char capabilities[256]; /* ','-separated, as the config's */
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
		struct ipc_verdict verdict;
		struct ipc_caps caps;
	} u;
};

/*
 * ipc_check_up - a record the child sent, as greygated may trust it: its
 * size and version, a type the child may send, an address family, every
 * string ended within its field (ended in place). A child is assumed
 * compromised: what fails here is dropped, never acted on.
 * Return: 0 or -EPROTO.
 */
int ipc_check_up(struct ipc_record *rec, size_t len);

/* ipc_event_view - e as a sensor event (its strings point into e). */
void ipc_event_view(const struct ipc_event *e, struct sensor_event *ev);

/* ipc_fill_event - rec as IPC_EVENT for what the sensor saw. */
void ipc_fill_event(struct ipc_record *rec, const struct sensor_event *ev);

/* ipc_fill_attempt - rec as IPC_ATTEMPT for a tarpit session's
 * question. */
void ipc_fill_attempt(struct ipc_record *rec, const struct tarpit_attempt *a);

/* ipc_fill_verdict - rec as IPC_VERDICT. */
void ipc_fill_verdict(struct ipc_record *rec, uint64_t session,
		      const struct tarpit_verdict *v);

#endif
