/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The records between greygated and its unprivileged child, one per
 * SOCK_SEQPACKET message, all of one fixed size and stamped with a
 * version: a record of another size or version is refused and logged.
 * Down: the child's settings, first (the child is a fresh program, not a
 * copy of greygated's memory), verdicts and what the tarpit's EHLO lists.
 * Up: the sessions the tarpit opens (each one's socket comes with it, so
 * that greygated reads its addresses itself: sessions.h) and closes,
 * their questions (a session id and the client's words, never an
 * address), what the sensor saw on the fast path, the child's counters
 * and its log lines (it has no log of its own). A child is assumed
 * compromised: what it sends is data to check (ipc_take_up), never a
 * command. */
#ifndef GREYGATE_IPC_H
#define GREYGATE_IPC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "must_check.h"

#include "policy.h"
#include "sensor.h"
#include "sessions.h"
#include "tarpit.h"

#define IPC_VERSION 8
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
	IPC_ATTEMPT = 5, /* child -> parent: a tarpit session asks
			    (ipc_attempt) */
	IPC_VERDICT = 6, /* parent -> child: the answer (ipc_verdict) */
	IPC_CAPS = 7,    /* parent -> child: what the tarpit's EHLO lists,
			    learnt from the MTA's (ipc_caps) */
	IPC_OPEN = 8,    /* child -> parent: the tarpit accepted a session; its
			    socket comes in the message's SCM_RIGHTS
			    (ipc_session) */
	IPC_CLOSE = 9,   /* child -> parent: the session ended (ipc_session) */
	IPC_DRAIN = 10   /* parent -> child: a new child takes over: accept
			    nothing more, end the sessions not handed to the
			    MTA, and exit once those handed are over (or
			    after IPC_DRAIN_MAX_SEC) */
};

/* A child handing over waits this long at most for the sessions handed
 * to the MTA (a message on a slow link; each also ends on its own after
 * the join's idle time). */
#define IPC_DRAIN_MAX_SEC 600

/* What the sensor saw on the fast path: addresses as it read them off the
 * wire. It may refresh or trap a client already passed, never pass one
 * (ipc_take_up: the fast path only). A handed session's later RCPT
 * names the session instead: greygated fills in its addresses. */
struct ipc_event {
	uint64_t session; /* 0: the sensor's; else a session handed to the
			     MTA (its addresses are not read from here) */
	int64_t ts_sec; /* packet time (only a replay decides by it) */
	int32_t ts_usec;
	uint8_t type;   /* enum sensor_event_type: HELO, RCPT or STARTTLS */
	uint8_t path;   /* enum sensor_path: SENSOR_PATH_FAST */
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

/* A session of the tarpit begins or ends. */
struct ipc_session {
	uint64_t session; /* its id: new for every connection, growing */
};

/* A tarpit session's question: which session, and the client's words;
 * who the client is greygated knows from the session's socket. */
struct ipc_attempt {
	uint64_t session;  /* an open session (IPC_OPEN) */
	uint32_t question; /* its number in the session, growing: the verdict
			      names it, so a late one finds nobody */
	uint8_t kind;      /* enum tarpit_ask: RCPT or STARTTLS */
	uint8_t pad[3];
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
	uint32_t question; /* ... and its question */
	uint8_t action;    /* enum tarpit_action */
	uint8_t handoff;   /* a connection to the MTA comes with it (its
			      descriptor in the message's SCM_RIGHTS) */
	uint8_t greeted;   /* ... whose greeting greygated already read */
	uint8_t refused;   /* TARPIT_REFUSE: enum tarpit_refusal */
	uint8_t gated;     /* the connection is for a client not passed:
			      its later RCPTs ask (tarpit_verdict) */
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
		struct ipc_session session;
		struct ipc_attempt attempt;
		struct ipc_stats stats;
		struct ipc_log log;
		struct ipc_config config;
		struct ipc_verdict verdict;
		struct ipc_caps caps;
	} u;
};

/* What a record from the child comes to, once taken (ipc_take_up). */
enum ipc_up_kind {
	IPC_UP_DONE = 0, /* nothing more: a session opened or closed */
	IPC_UP_LOG,      /* a log line: rec->u.log */
	IPC_UP_STATS,    /* its counters: rec->u.stats */
	IPC_UP_EVENT,    /* the fast path: rec->u.ev */
	IPC_UP_ATTEMPT   /* a session asks: rec->u.attempt, out->session */
};

struct ipc_up {
	struct session_info *session; /* IPC_UP_ATTEMPT: the session asking,
					 as greygated knows it */
	const char *why;              /* refused: why (for the log line) */
};

/*
 * ipc_take_up - a record the child sent, as greygated may act on it: its
 * size and version; a type the child may send; every string ended within
 * its field (ended in place); an event of the fast path alone, one that
 * names a session only of a session open and handed to the MTA, a RCPT,
 * its addresses then the session's (written into rec); a session
 * opened with its socket (read here: sessions_open) under a new id;
 * closed, or asking, only while open, asking with a new question number,
 * at most SESSION_IN_FLIGHT_MAX at once and TARPIT_ASKS_MAX in all; a
 * descriptor with no other record.
 * @fd: the descriptor that came with the record, or -1 (closed here)
 * Return: an enum ipc_up_kind, or -EPROTO: refused, out->why says why,
 * and nothing is to be done with it.
 */
MUST_CHECK int ipc_take_up(struct sessions *s, struct ipc_record *rec, size_t len,
		int fd, struct ipc_up *out);

/* ipc_answered - session's question is answered (or never will be):
 * another may come. */
void ipc_answered(struct sessions *s, uint64_t session);

/* ipc_event_view - e as a sensor event (its strings point into e). */
void ipc_event_view(const struct ipc_event *e, struct sensor_event *ev);

/* ipc_attempt_view - a session's question as the policy's attempt: the
 * client from the session's socket (ends), the words from the record
 * (its strings point into at). */
void ipc_attempt_view(const struct ipc_attempt *at,
		      const struct session_ends *ends, struct grey_attempt *a);

/* ipc_fill_event - rec as IPC_EVENT for what the sensor saw. */
void ipc_fill_event(struct ipc_record *rec, const struct sensor_event *ev);

/* ipc_fill_attempt - rec as IPC_ATTEMPT for a tarpit session's
 * question. */
void ipc_fill_attempt(struct ipc_record *rec, const struct tarpit_attempt *a);

/* ipc_fill_session - rec as IPC_OPEN or IPC_CLOSE of session. */
void ipc_fill_session(struct ipc_record *rec, enum ipc_type type,
		      uint64_t session);

/* Room for one descriptor in a message's control data. */
union ipc_fd_control {
	char buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};

/* ipc_attach_fd - message m carries descriptor fd (SCM_RIGHTS), its
 * control data in control (which must live until m is sent). */
void ipc_attach_fd(struct msghdr *m, union ipc_fd_control *control, int fd);

/* What *fd says when a descriptor was sent but the receiver could take
 * none: its table is full (EMFILE, ENFILE), the sender not to blame. */
#define IPC_FD_LOST (-2)

/*
 * ipc_recv - one record from sock, without waiting, and the descriptor
 * that came with it (-1: none; IPC_FD_LOST: one came that could not be
 * taken; when more came, *extra is set, the first is in *fd and the
 * kernel closed the rest).
 * Return: the record's length (a record longer than ours: sizeof + 1), 0
 * (the other end closed), or -errno.
 */
MUST_CHECK ssize_t ipc_recv(int sock, struct ipc_record *rec, int *fd, bool *extra);

/* Records received at once (ipc_recv_batch). */
#define IPC_BATCH 64

struct ipc_batch {
	struct ipc_record rec[IPC_BATCH];
	ssize_t len[IPC_BATCH]; /* each record's length, as ipc_recv says */
	int fd[IPC_BATCH];      /* ... the descriptor that came with it */
	bool extra[IPC_BATCH];  /* ... and whether more came */
	union ipc_fd_control control[IPC_BATCH];
	struct mmsghdr msgs[IPC_BATCH];
	struct iovec iov[IPC_BATCH];
};

/*
 * ipc_recv_batch - as ipc_recv, up to IPC_BATCH records in one call, into
 * b (b->rec[i], len[i], fd[i], extra[i]).
 * Return: the number received (0: the other end closed), or -errno.
 */
MUST_CHECK int ipc_recv_batch(int sock, struct ipc_batch *b);

/* ipc_fill_verdict - rec as IPC_VERDICT. */
void ipc_fill_verdict(struct ipc_record *rec, uint64_t session,
		      uint32_t question, const struct tarpit_verdict *v);

#endif
