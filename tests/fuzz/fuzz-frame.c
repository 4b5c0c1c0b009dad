// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer target for the packet-to-event path: frames of any link type
 * through decoding, the flow table and reassembly into the parser. The
 * input is a list of frames: a link type selector, a length, the bytes. */
#include <pcap/dlt.h>
#include <stddef.h>
#include <stdint.h>

#include "sensor.h"

static void
on_event(const struct sensor_event *ev, void *ctx)
{
	size_t *n = ctx;

	for (const char *s = ev->helo; *s; s++)
		(*n)++;
	for (const char *s = ev->from; *s; s++)
		(*n)++;
	for (const char *s = ev->to; *s; s++)
		(*n)++;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int links[] = {DLT_EN10MB, DLT_LINUX_SLL, 276, DLT_RAW,
				    DLT_NULL, DLT_NFLOG};
	struct sensor_config cfg;
	struct sensor *s;
	struct timeval ts = {1700000000, 0};
	size_t touched = 0;

	sensor_config_defaults(&cfg);
	cfg.max_flows = 8;
	cfg.max_reorder_bytes = 512;
	cfg.max_total_bytes = 2048;
	cfg.tarpit_port = 2525;
	s = sensor_new(&cfg, on_event, &touched);
	while (size > 3) {
		int link = links[data[0] % 5];
		size_t len = (size_t)data[1] << 8 | data[2];

		data += 3;
		size -= 3;
		if (len > size)
			len = size;
		sensor_frame(s, link, &ts, data, len);
		ts.tv_sec++;
		data += len;
		size -= len;
	}
	sensor_expire(s, ts.tv_sec + 100);
	sensor_finish(s);
	sensor_free(s);
	return 0;
}
