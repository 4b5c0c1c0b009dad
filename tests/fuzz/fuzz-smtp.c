// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer target for the SMTP conversation parser: the input is cut into
 * chunks, each sent to the client or the server side (or a gap) as its
 * first byte says. */
#include <stddef.h>
#include <stdint.h>

#include "sensor.h"

static void
on_event(enum sensor_event_type type, int reply, const char *helo,
	 const char *from, const char *to, void *ctx)
{
	/* Touch every string: a bad pointer shows under ASan. */
	size_t *n = ctx;

	for (const char *s = helo; *s; s++)
		(*n)++;
	for (const char *s = from; *s; s++)
		(*n)++;
	for (const char *s = to; *s; s++)
		(*n)++;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sensor_counters ctr = {0};
	size_t touched = 0;
	struct smtp_conv *c;

	if (size < 1)
		return 0;
	c = smtp_conv_new(&ctr, data[0] & 1, on_event, &touched);
	data++;
	size--;
	while (size > 1) {
		uint8_t op = data[0];
		size_t len = (size_t)data[1] + 1;

		data += 2;
		size -= 2;
		if (len > size)
			len = size;
		if ((op & 7) == 7)
			smtp_conv_gap(c, op & 8);
		else if (op & 1)
			smtp_conv_server(c, data, len);
		else
			smtp_conv_client(c, data, len);
		data += len;
		size -= len;
	}
	smtp_conv_free(c);
	return 0;
}
