// SPDX-License-Identifier: GPL-2.0-or-later
/* What the sensor and the tarpit take from the same lines (see
 * smtp_agree.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensor.h"
#include "smtp_agree.h"
#include "smtp_command.h"
#include "tarpit.h"

struct heard {
	char *out;
	size_t size;
};

static void
on_heard(enum sensor_event_type type, int reply, const char *helo,
         const char *from, const char *to, void *ctx)
{
	struct heard *h = ctx;

	(void)reply;
	if (type == SENSOR_EV_RCPT)
		snprintf(h->out, h->size, "%s <%s> <%s>", helo, from, to);
}

static void
client_line(struct smtp_conv *c, const char *line, size_t len)
{
	smtp_conv_client(c, (const uint8_t *)line, len);
	smtp_conv_client(c, (const uint8_t *)"\r\n", 2);
}

void
smtp_agree_sensor(const char *ehlo, size_t ehlo_len, const char *mail,
                  size_t mail_len, const char *rcpt, size_t rcpt_len, char *out,
                  size_t size)
{
	struct sensor_counters ctr = {0};
	struct heard h = {out, size};
	struct smtp_conv *c = smtp_conv_new(&ctr, true, on_heard, &h);

	out[0] = 0;
	if (!c)
		abort();
	smtp_conv_server(c, (const uint8_t *)"220 mx\r\n", 8);
	client_line(c, ehlo, ehlo_len);
	smtp_conv_server(c, (const uint8_t *)"250 mx\r\n", 8);
	client_line(c, mail, mail_len);
	client_line(c, rcpt, rcpt_len);
	smtp_conv_server(c, (const uint8_t *)"250 ok\r\n250 ok\r\n", 16);
	smtp_conv_free(c);
}

void
smtp_agree_tarpit(const char *ehlo, size_t ehlo_len, const char *mail,
                  size_t mail_len, const char *rcpt, size_t rcpt_len, char *out,
                  size_t size)
{
	struct tarpit_config cfg;
	struct tarpit_dialogue d;
	char reply[TARPIT_REPLY_MAX], helo[SMTP_HELO_NAME_MAX + 1] = "",
	                              from[TARPIT_LINE_MAX] = "";
	size_t n;

	tarpit_config_defaults(&cfg);
	cfg.hostname = "mx.test";
	tarpit_dialogue_init(&d, &cfg);
	d.ask = true;
	out[0] = 0;
	/* As tarpit/server.c: a line over the limit is refused unread. */
	if (tarpit_dialogue_line(&d, ehlo, ehlo_len, ehlo_len > SMTP_LINE_MAX,
	                         reply, &n) != 0)
		return;
	if (d.said == TARPIT_SAID_HELO) /* as tarpit/server.c keeps it */
		smtp_printable_copy(helo, sizeof(helo), d.arg, d.arg_len);
	if (tarpit_dialogue_line(&d, mail, mail_len, mail_len > SMTP_LINE_MAX,
	                         reply, &n) != 0 ||
	    d.said != TARPIT_SAID_MAIL)
		return;
	snprintf(from, sizeof(from), "%.*s", (int)d.arg_len, d.arg);
	if (tarpit_dialogue_line(&d, rcpt, rcpt_len, rcpt_len > SMTP_LINE_MAX,
	                         reply, &n) != TARPIT_ASK ||
	    d.said != TARPIT_SAID_RCPT)
		return;
	snprintf(out, size, "%s <%s> <%.*s>", helo, from, (int)d.arg_len,
	         d.arg);
}
