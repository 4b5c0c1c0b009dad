// SPDX-License-Identifier: GPL-2.0-or-later
/* greygate-sniff: shows the SMTP crossing a gateway, one JSON object per
 * line per event, from a live interface (-i) or a capture file (-r). What
 * an admin runs to see the sensor's view, and what the tests use. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fmt.h"
#include "json.h"
#include "sensor.h"

static volatile sig_atomic_t stop;

static const char *
event_name(enum sensor_event_type t)
{
	static const char *const names[] = {
		[SENSOR_EV_OPEN] = "open",	   [SENSOR_EV_HELO] = "helo",
		[SENSOR_EV_RCPT] = "rcpt",	   [SENSOR_EV_STARTTLS] = "starttls",
		[SENSOR_EV_AUTH] = "auth",	   [SENSOR_EV_CLOSE] = "close",
	};

	return (size_t)t < sizeof(names) / sizeof(*names) && names[t]
		       ? names[t]
		       : "unknown";
}

static char *
put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/* An address and its text, kept from the event before: a connection's
 * events share a client, and a gateway's flows mostly share a server. */
struct addr_text {
	uint8_t family;
	uint8_t addr[16];
	unsigned len;
	char text[FMT_IP_MAX];
};

static char *
put_addr(char *p, struct addr_text *cache, uint8_t family,
	 const uint8_t *addr)
{
	size_t n = family == AF_INET ? 4 : 16;

	if (cache->family != family || memcmp(cache->addr, addr, n) != 0) {
		cache->family = family;
		memcpy(cache->addr, addr, n);
		cache->len = fmt_ip(family, addr, cache->text);
	}
	memcpy(p, cache->text, cache->len);
	return p + cache->len;
}

/* Seconds.microseconds; the seconds' text is kept from the event before,
 * as events come many a second. */
static char *
put_time(char *p, const struct timeval *ts)
{
	static time_t last_sec = -1;
	static char sec_text[FMT_UINT_MAX];
	static unsigned sec_len;

	if (ts->tv_sec != last_sec) {
		last_sec = ts->tv_sec;
		sec_len = (unsigned)(fmt_uint(sec_text, (uint64_t)ts->tv_sec) -
				     sec_text);
	}
	memcpy(p, sec_text, sec_len);
	p += sec_len;
	*p++ = '.';
	return fmt_uint_pad(p, (uint64_t)ts->tv_usec % 1000000, 6);
}

/* Events are written straight into one output buffer, flushed with
 * write(2) when it runs short of room for another line, after each turn of
 * a live capture and at the end: no stdio copy per event. */
static struct {
	char buf[1 << 16];
	size_t used;
	bool failed;
	int error; /* errno of the failed write */
} out;

static void
out_flush(void)
{
	size_t off = 0;

	while (off < out.used && !out.failed) {
		ssize_t n = write(STDOUT_FILENO, out.buf + off, out.used - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			out.failed = true;
			out.error = n < 0 ? errno : EIO;
			break;
		}
		off += (size_t)n;
	}
	out.used = 0;
}

static char *
out_room(size_t need)
{
	if (sizeof(out.buf) - out.used < need)
		out_flush();
	return out.buf + out.used;
}

/* Longest line: three strings of up to a line each, escaped, and the rest. */
#define EVENT_LINE_MAX (3 * JSON_ESCAPED_MAX(SMTP_LINE_MAX) + 512)

/* One event a line, built in a buffer and written with one call: on a busy
 * capture this line is much of the sniffer's work, and printf or a stdio
 * call per field cost more than parsing the packets. */
static void
print_event(const struct sensor_event *ev, void *ctx)
{
	static const char *const paths[] = {"unknown", "tarpit", "fast"};
	char *line = out_room(EVENT_LINE_MAX);
	static struct addr_text client_text, server_text;
	char *p = line;

	p = put_str(p, "{\"ts\":");
	p = put_time(p, &ev->ts);
	p = put_str(p, ",\"event\":\"");
	p = put_str(p, event_name(ev->type));
	p = put_str(p, "\",\"client\":\"");
	p = put_addr(p, &client_text, ev->family, ev->client);
	p = put_str(p, "\",\"client_port\":");
	p = fmt_uint(p, ev->client_port);
	p = put_str(p, ",\"server\":\"");
	p = put_addr(p, &server_text, ev->family, ev->server);
	p = put_str(p, "\",\"server_port\":");
	p = fmt_uint(p, ev->server_port);
	p = put_str(p, ",\"path\":\"");
	p = put_str(p, paths[ev->path]);
	p = put_str(p, "\",\"helo\":");
	p = json_append_string(p, ev->helo);
	p = put_str(p, ",\"from\":");
	p = json_append_string(p, ev->from);
	p = put_str(p, ",\"to\":");
	p = json_append_string(p, ev->to);
	p = put_str(p, ",\"reply\":");
	p = fmt_uint(p, (unsigned)ev->reply);
	p = put_str(p, "}\n");
	out.used += (size_t)(p - line);
}

/* -r - from a pipe or socket rather than a file redirected to stdin. */
static bool
reads_a_pipe(const char *file)
{
	struct stat st;

	return strcmp(file, "-") == 0 && fstat(STDIN_FILENO, &st) == 0 &&
	       !S_ISREG(st.st_mode);
}

static void
on_signal(int sig)
{
	stop = 1;
}

/* A whole decimal number from min to max. */
static bool
number(const char *text, unsigned long min, unsigned long max,
       unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(text, &end, 10);
	return text[0] >= '0' && text[0] <= '9' && !*end && !errno &&
	       *out >= min && *out <= max;
}

static void
usage(FILE *out)
{
	fprintf(out, "usage: greygate-sniff -r FILE | -i IFACE [-p PORT] "
		     "[-B KIB] [--stats]\n"
		     "  one JSON object per SMTP event on stdout\n"
		     "  -r -      read a capture from standard input\n"
		     "  -p PORT   the SMTP port (25)\n"
		     "  -B KIB    the live capture's kernel ring, as tcpdump's "
		     "-B (4096)\n");
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"read", required_argument, NULL, 'r'},
		{"interface", required_argument, NULL, 'i'},
		{"port", required_argument, NULL, 'p'},
		{"buffer-size", required_argument, NULL, 'B'},
		{"stats", no_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *file = NULL, *iface = NULL;
	struct sensor_config cfg;
	struct sensor_capture *cap;
	struct sensor *sensor;
	char err[256] = "";
	bool stats = false;
	unsigned long ring_kib = 4096;
	int c, r;

	sensor_config_defaults(&cfg);
	while ((c = getopt_long(argc, argv, "r:i:p:B:sh", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			file = optarg;
			break;
		case 'i':
			iface = optarg;
			break;
		case 'p': {
			unsigned long port;

			if (!number(optarg, 1, 65535, &port)) {
				fprintf(stderr, "greygate-sniff: bad port "
						"'%s'\n", optarg);
				return 2;
			}
			cfg.smtp_port = (uint16_t)port;
			break;
		}
		case 'B':
			if (!number(optarg, 256, 1024 * 1024, &ring_kib)) {
				fprintf(stderr, "greygate-sniff: bad ring size "
						"'%s' (KiB, 256 to 1048576)\n",
					optarg);
				return 2;
			}
			break;
		case 's':
			stats = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!file == !iface || optind != argc) {
		usage(stderr);
		return 2;
	}
	r = file ? sensor_capture_open_file(file, &cfg, &cap, err)
		 : sensor_capture_open_live(iface, (int)(ring_kib * 1024),
					    &cfg, &cap, err);
	if (r < 0) {
		fprintf(stderr, "greygate-sniff: %s\n", err);
		return 2;
	}
	sensor = sensor_new(&cfg, print_event, NULL);
	if (!sensor) {
		fprintf(stderr, "greygate-sniff: out of memory\n");
		return 2;
	}
	if (file && reads_a_pipe(file)) {
		/* tcpdump -w - | greygate-sniff -r -: each event shows when its
		 * packet arrives, not when 64 KiB of them have. */
		while ((r = sensor_capture_dispatch(cap, sensor, 1)) > 0)
			out_flush();
	} else if (file) {
		while ((r = sensor_capture_dispatch(cap, sensor, -1)) > 0)
			;
	} else {
		struct pollfd pfd = {sensor_capture_fd(cap), POLLIN, 0};

		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		while (!stop && r >= 0 && !out.failed) {
			if (poll(&pfd, 1, 1000) > 0)
				r = sensor_capture_dispatch(cap, sensor, -1);
			sensor_expire(sensor, time(NULL));
			out_flush(); /* a live event shows at once */
		}
	}
	sensor_finish(sensor);
	out_flush();
	if (stats) {
		const struct sensor_counters *k = sensor_get_counters(sensor);

		fprintf(stderr,
			"packets %llu segments %llu flows %llu evicted %llu "
			"rcpts %llu gaps %llu not_decoded %llu fragments %llu "
			"long_lines %llu garbage %llu tls %llu\n",
			(unsigned long long)k->packets,
			(unsigned long long)k->tcp_segments,
			(unsigned long long)k->flows,
			(unsigned long long)k->flows_evicted,
			(unsigned long long)k->rcpts,
			(unsigned long long)k->gaps,
			(unsigned long long)k->not_decoded,
			(unsigned long long)k->fragments,
			(unsigned long long)k->long_lines,
			(unsigned long long)k->garbage,
			(unsigned long long)k->tls_flows);
	}
	sensor_free(sensor);
	sensor_capture_close(cap);
	if (r < 0) {
		fprintf(stderr, "greygate-sniff: capture failed\n");
		return 1;
	}
	if (out.failed) {
		/* A reader that went away (| head) needs no message. */
		if (out.error != EPIPE)
			fprintf(stderr, "greygate-sniff: writing events: %s\n",
				strerror(out.error));
		return 1;
	}
	return 0;
}
