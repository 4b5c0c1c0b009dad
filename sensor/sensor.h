/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sensor: greygate's eyes. Decodes captured frames (Ethernet, VLAN,
 * Linux cooked, raw IP; IPv4 and IPv6), reassembles each SMTP flow's two
 * TCP streams with bounded memory, and parses the conversation into events:
 * who says HELO, MAIL FROM and RCPT TO, and what the server answered. It
 * knows nothing of nft or the store; which path a flow took (tarpit or
 * MTA) it asks a hook. */
#ifndef GREYGATE_SENSOR_H
#define GREYGATE_SENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

#include "smtp_command.h"
#include "smtp_line.h"

/* RFC 5321 4.5.3.1: a path is at most 256 octets. */
#define SMTP_ADDR_MAX 257
/* A domain (HELO argument) is at most 255 octets (smtp_command.h). */
#define SMTP_HELO_MAX (SMTP_HELO_NAME_MAX + 1)
/* Command lines are kept up to SMTP_LINE_MAX (smtp_line.h); longer ones
 * are counted and skipped, as the tarpit refuses them. */
/* Commands awaiting their reply (PIPELINING). */
#define SMTP_PENDING_MAX 64

enum sensor_event_type {
	SENSOR_EV_OPEN = 1,  /* a flow's first packet */
	SENSOR_EV_HELO,      /* HELO/EHLO answered (helo is set) */
	SENSOR_EV_RCPT,      /* RCPT TO with its reply (from, to set) */
	SENSOR_EV_STARTTLS,  /* STARTTLS answered (reply 220: now encrypted) */
	SENSOR_EV_AUTH,      /* AUTH answered (never the credentials) */
	SENSOR_EV_CLOSE      /* the flow ended (FIN, RST, idle, evicted) */
};

enum sensor_path {
	SENSOR_PATH_UNKNOWN = 0, /* no tarpit to ask (replay) */
	SENSOR_PATH_TARPIT = 1,  /* the tarpit holds this connection */
	SENSOR_PATH_FAST = 2     /* it went to the MTA */
};

struct sensor_event {
	enum sensor_event_type type;
	struct timeval ts;        /* packet time */
	uint8_t family;           /* AF_INET or AF_INET6 */
	uint8_t client[16];       /* client address (4 bytes for IPv4) */
	uint8_t server[16];       /* server address */
	uint16_t client_port;     /* host order */
	uint16_t server_port;     /* host order */
	enum sensor_path path;    /* HELO, RCPT, STARTTLS, AUTH: where it
				     went */
	int reply;                /* the server's reply code; 0: not seen */
	const char *helo;         /* "" if none */
	const char *from;         /* MAIL FROM path without <>, "" for <> */
	const char *to;           /* RCPT TO path without <> */
	uint64_t session;         /* 0: seen on the wire; else the tarpit's
				     session, handed to the MTA, whose
				     client greygated knows (family,
				     addresses and ports are not filled
				     then) */
};

typedef void sensor_event_fn(const struct sensor_event *ev, void *ctx);
/* Does the tarpit hold (or did it just hold) this client connection? Asked
 * at a flow's banner: a tarpit flow is then followed no further (no
 * events: the tarpit speaks for its sessions). */
typedef bool sensor_tarpit_fn(int family, const uint8_t *client,
			      uint16_t client_port, void *ctx);

struct sensor_config {
	uint16_t smtp_port;       /* 25 */
	uint16_t tarpit_port;     /* also a server port (0: none) */
	size_t max_flows;         /* oldest evicted past it */
	size_t max_reorder_bytes; /* out-of-order bytes held per direction */
	size_t max_total_bytes;   /* out-of-order bytes held in all */
	uint32_t idle_timeout_sec; /* a silent flow ends */
};

struct sensor_counters {
	uint64_t packets;       /* frames seen */
	uint64_t tcp_segments;  /* on an SMTP port */
	uint64_t not_decoded;   /* not IP/TCP, truncated, bad headers */
	uint64_t fragments;     /* IP fragments (ignored) */
	uint64_t flows;         /* flows started */
	uint64_t flows_open;    /* flows followed now */
	uint64_t flows_evicted; /* ended early by the flow or byte caps */
	uint64_t gaps;          /* stream gaps skipped */
	uint64_t long_lines;    /* lines over SMTP_LINE_MAX */
	uint64_t nul_bytes;     /* client lines holding NUL */
	uint64_t bare_lf;       /* lines ended by LF alone */
	uint64_t garbage;       /* lines that are no command we know */
	uint64_t tls_flows;     /* flows that went encrypted */
	uint64_t proxied_flows; /* a proxy's (PROXY header, XCLIENT): the
				   client it speaks for was seen elsewhere */
	uint64_t tarpit_flows;  /* flows to the tarpit, followed no further
				   (the tarpit speaks for them) */
	uint64_t rcpts;         /* RCPT events */
};

struct sensor;

/* sensor_config_defaults - port 25, 100k flows, 64 KiB/flow, 64 MiB in
 * all, 300 s idle. */
void sensor_config_defaults(struct sensor_config *cfg);

/*
 * sensor_new - a sensor that calls fn(ev, ctx) for each event.
 * @cfg: copied
 * Return: the sensor or NULL (ENOMEM).
 */
struct sensor *sensor_new(const struct sensor_config *cfg, sensor_event_fn *fn,
			  void *ctx);
/* sensor_free - ends every flow (their CLOSE events are not sent). */
void sensor_free(struct sensor *sensor);

/* sensor_set_tarpit_hook - who to ask for a flow's path (NULL: unknown). */
void sensor_set_tarpit_hook(struct sensor *sensor, sensor_tarpit_fn *fn,
			    void *ctx);

/*
 * sensor_frame - decode and account one captured frame.
 * @linktype: pcap's DLT_* of the capture
 * @ts: capture time
 * @data, @caplen: the captured bytes
 */
void sensor_frame(struct sensor *sensor, int linktype, const struct timeval *ts,
		  const uint8_t *data, size_t caplen);

/* A tarpit flow, or one whose banner was never seen, silent this long
 * ends at sensor_expire (its FINs may have been lost in a burst). */
#define SENSOR_TARPIT_FLOW_IDLE_SEC 15

/* sensor_expire - end flows idle since before now - idle_timeout, and
 * tarpit flows and flows with no banner seen silent
 * SENSOR_TARPIT_FLOW_IDLE_SEC. */
void sensor_expire(struct sensor *sensor, int64_t now_sec);

/* sensor_finish - end every flow now (end of a capture file): pending
 * RCPTs are reported with reply 0. */
void sensor_finish(struct sensor *sensor);

const struct sensor_counters *sensor_get_counters(const struct sensor *s);

/* --- capture (libpcap) --- */

struct sensor_capture;

/*
 * sensor_capture_open_live - capture on iface ("any" for all) in
 * immediate mode with a kernel buffer of buffer_bytes, non-blocking,
 * filtered to TCP on the sensor's server ports.
 * @err: gets a message on failure (at least 256 bytes)
 * Return: 0 or -errno (-ENODEV: no such interface; -EPERM).
 */
int sensor_capture_open_live(const char *iface, int buffer_bytes,
			     const struct sensor_config *cfg,
			     struct sensor_capture **out, char *err);
/* sensor_capture_filter - the BPF expression a live capture uses for
 * linktype: SMTP (and tarpit) port segments that carry SYN, FIN, RST or
 * payload; bare ACKs stay out of the capture. */
#define SENSOR_FILTER_MAX 2048
void sensor_capture_filter(const struct sensor_config *cfg, int linktype,
			   char *expr, size_t size);
/* sensor_capture_open_file - read a pcap or pcapng file. */
int sensor_capture_open_file(const char *path, const struct sensor_config *cfg,
			     struct sensor_capture **out, char *err);
void sensor_capture_close(struct sensor_capture *cap);
/* sensor_capture_fd - a descriptor to poll (live only; -1 for files). */
int sensor_capture_fd(const struct sensor_capture *cap);
/* sensor_capture_stats - packets the kernel passed to the capture and
 * dropped for want of room, since it opened (live only).
 * Return: 0 or -EIO. */
int sensor_capture_stats(struct sensor_capture *cap, uint64_t *received,
			 uint64_t *dropped);
/*
 * sensor_capture_dispatch - feed up to max frames (-1: all there are) to
 * the sensor. Return: frames fed; 0 when none are waiting (live) or at the
 * end of a file; -EIO on a capture error.
 */
int sensor_capture_dispatch(struct sensor_capture *cap, struct sensor *sensor,
			    int max);

/* --- the SMTP conversation parser (pure; used by the sensor) --- */

struct smtp_conv;

/* What the parser reports (the sensor adds addresses, path and time). */
typedef void smtp_event_fn(enum sensor_event_type type, int reply,
			   const char *helo, const char *from, const char *to,
			   void *ctx);

/*
 * smtp_conv_new - parser state for one connection.
 * @counters: where oddities are counted (borrowed)
 * @from_start: the connection was seen from its SYN, so the server's
 *   first reply is its greeting (else replies are matched from the first
 *   command seen)
 * Return: the state, or NULL (ENOMEM).
 */
struct smtp_conv *smtp_conv_new(struct sensor_counters *counters,
				bool from_start, smtp_event_fn *fn, void *ctx);
/* smtp_conv_free - reports pending RCPTs (reply 0) first; NULL ok. */
void smtp_conv_free(struct smtp_conv *conv);
/* smtp_conv_size, smtp_conv_init, smtp_conv_end - the same in memory the
 * caller holds (smtp_conv_size() bytes, aligned for any type): the sensor
 * keeps a flow and its parser in one allocation. smtp_conv_end reports
 * pending RCPTs and releases what the state holds, not mem. */
size_t smtp_conv_size(void);
struct smtp_conv *smtp_conv_init(void *mem, struct sensor_counters *counters,
				 bool from_start, smtp_event_fn *fn,
				 void *ctx);
void smtp_conv_end(struct smtp_conv *conv);
/* smtp_conv_client - bytes the client sent, in stream order. */
void smtp_conv_client(struct smtp_conv *conv, const uint8_t *buf, size_t len);
/* smtp_conv_server - bytes the server sent, in stream order. */
void smtp_conv_server(struct smtp_conv *conv, const uint8_t *buf, size_t len);
/* smtp_conv_gap - bytes were lost in one direction: resync at a line. */
void smtp_conv_gap(struct smtp_conv *conv, bool client);
/* smtp_conv_is_done - nothing more of interest (encrypted): the caller
 * may drop further bytes unread. */
bool smtp_conv_is_done(const struct smtp_conv *conv);

#endif
