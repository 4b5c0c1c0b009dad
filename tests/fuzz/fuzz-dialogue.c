// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer target for the tarpit's dialogue with a hostile client: the
 * first byte picks the settings (asking greygated or not, the null
 * sender's deferral, STARTTLS), the rest is the client's bytes cut into
 * lines as the server cuts them (over-long ones flagged); a question is
 * answered by a verdict the next byte picks (or none in time). Every
 * reply must be a well-formed SMTP reply line. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tarpit.h"

static void
check_reply(const char *out, size_t len)
{
	/* "DDD" then ' ' or '-', ending in CRLF, and within the buffer */
	if (len == 0)
		return;
	if (len < 6 || len >= TARPIT_REPLY_MAX || out[len - 2] != '\r' ||
	    out[len - 1] != '\n' || out[0] < '2' || out[0] > '5' ||
	    (out[3] != ' ' && out[3] != '-'))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tarpit_config cfg;
	struct tarpit_dialogue d;
	char out[TARPIT_REPLY_MAX];
	size_t start = 0, len;

	if (size < 2)
		return 0;
	tarpit_config_defaults(&cfg);
	cfg.hostname = "mx.test";
	cfg.null_sender_at_data = data[0] & 1;
	cfg.offer_starttls = data[0] & 2;
	cfg.max_bad_commands = data[0] & 4 ? 3 : 1000;
	tarpit_dialogue_init(&d, &cfg);
	d.ask = data[0] & 8;
	data++;
	size--;
	for (size_t i = 0; i < size; i++) {
		bool too_long;
		int r;

		if (data[i] != '\n' && i - start < TARPIT_LINE_MAX)
			continue;
		too_long = i - start >= TARPIT_LINE_MAX;
		len = i - start;
		if (len && data[start + len - 1] == '\r')
			len--;
		r = tarpit_dialogue_line(&d, (const char *)data + start, len,
		                         too_long, out, &len);
		check_reply(out, len);
		if (r == TARPIT_ASK) {
			uint8_t pick = i + 1 < size ? data[i + 1] : 0;
			struct tarpit_verdict v = {
			        (enum tarpit_action)(pick % 4), pick, -1,
			        false, (uint8_t)(pick >> 7), false};

			if (d.said != TARPIT_SAID_NOTHING &&
			    (d.arg < (const char *)data ||
			     d.arg + d.arg_len > (const char *)data + size))
				abort(); /* arg must lie in the line */
			enum tarpit_ask asked = (enum tarpit_ask)d.asking;

			r = tarpit_dialogue_verdict(&d, pick & 0x80 ? NULL : &v,
			                            "rcpt@x", out, &len);
			check_reply(out, len);
			/* A question is always answered, but for a STARTTLS
			 * not handed over: the session ends unanswered (any
			 * reply but 220 lets the client go on in the clear). */
			if (asked == TARPIT_ASK_STARTTLS
			            ? len != 0 || r != TARPIT_CLOSE
			            : len == 0)
				abort();
		}
		if (r == TARPIT_CLOSE)
			return 0;
		start = i + 1;
		/* A BDAT chunk's bytes are skipped, as the server does. */
		if (d.skip_bytes) {
			size_t skip = size - start < d.skip_bytes
			                      ? size - start
			                      : d.skip_bytes;

			d.skip_bytes -= (uint32_t)skip;
			start += skip;
			i = start - 1;
		}
	}
	return 0;
}
