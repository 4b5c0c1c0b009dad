// SPDX-License-Identifier: GPL-2.0-or-later
/* greygate-sniff: shows the SMTP crossing a gateway, one JSON object per
 * line per event, from a live interface (-i) or a capture file (-r). What
 * an admin runs to see the sensor's view, and what the tests use. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

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

static void
put_uint(FILE *out, unsigned long long v)
{
	char buf[24];
	int n = 0;

	do
		buf[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	while (n > 0)
		putc_unlocked(buf[--n], out);
}

/* One event a line. Written by hand rather than with printf: on a busy
 * capture this line is most of the sniffer's work. */
static void
print_event(const struct sensor_event *ev, void *ctx)
{
	static const char *const paths[] = {"unknown", "tarpit", "fast"};
	char client[INET6_ADDRSTRLEN], server[INET6_ADDRSTRLEN], usec[8];
	FILE *out = stdout;

	inet_ntop(ev->family, ev->client, client, sizeof(client));
	inet_ntop(ev->family, ev->server, server, sizeof(server));
	fputs("{\"ts\":", out);
	put_uint(out, (unsigned long long)ev->ts.tv_sec);
	/* ".uuuuuu": six digits, zero-padded */
	usec[0] = '.';
	for (long u = (long)ev->ts.tv_usec % 1000000, i = 6; i > 0; i--, u /= 10)
		usec[i] = (char)('0' + u % 10);
	usec[7] = 0;
	fputs(usec, out);
	fputs(",\"event\":\"", out);
	fputs(event_name(ev->type), out);
	fputs("\",\"client\":\"", out);
	fputs(client, out);
	fputs("\",\"client_port\":", out);
	put_uint(out, ev->client_port);
	fputs(",\"server\":\"", out);
	fputs(server, out);
	fputs("\",\"server_port\":", out);
	put_uint(out, ev->server_port);
	fputs(",\"path\":\"", out);
	fputs(paths[ev->path], out);
	fputs("\",\"helo\":", out);
	json_put_string(out, ev->helo);
	fputs(",\"from\":", out);
	json_put_string(out, ev->from);
	fputs(",\"to\":", out);
	json_put_string(out, ev->to);
	fputs(",\"reply\":", out);
	put_uint(out, (unsigned)ev->reply);
	fputs("}\n", out);
}

static void
on_signal(int sig)
{
	stop = 1;
}

static void
usage(FILE *out)
{
	fprintf(out, "usage: greygate-sniff -r FILE | -i IFACE [-p PORT] "
		     "[--stats]\n"
		     "  one JSON object per SMTP event on stdout\n");
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"read", required_argument, NULL, 'r'},
		{"interface", required_argument, NULL, 'i'},
		{"port", required_argument, NULL, 'p'},
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
	int c, r;

	sensor_config_defaults(&cfg);
	while ((c = getopt_long(argc, argv, "r:i:p:sh", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			file = optarg;
			break;
		case 'i':
			iface = optarg;
			break;
		case 'p':
			cfg.smtp_port = (uint16_t)atoi(optarg);
			if (!cfg.smtp_port) {
				fprintf(stderr, "greygate-sniff: bad port "
						"'%s'\n", optarg);
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
		 : sensor_capture_open_live(iface, 4 << 20, &cfg, &cap, err);
	if (r < 0) {
		fprintf(stderr, "greygate-sniff: %s\n", err);
		return 2;
	}
	sensor = sensor_new(&cfg, print_event, NULL);
	if (!sensor) {
		fprintf(stderr, "greygate-sniff: out of memory\n");
		return 2;
	}
	if (file) {
		while ((r = sensor_capture_dispatch(cap, sensor, -1)) > 0)
			;
	} else {
		struct pollfd pfd = {sensor_capture_fd(cap), POLLIN, 0};

		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		setvbuf(stdout, NULL, _IOLBF, 0);
		while (!stop && r >= 0) {
			if (poll(&pfd, 1, 1000) > 0)
				r = sensor_capture_dispatch(cap, sensor, -1);
			sensor_expire(sensor, time(NULL));
		}
	}
	sensor_finish(sensor);
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
	return 0;
}
