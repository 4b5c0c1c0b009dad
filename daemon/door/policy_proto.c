// SPDX-License-Identifier: GPL-2.0-or-later
/* Postfix's policy delegation protocol: the request parser (pure over
 * the bytes, bounded) and the answers in postgrey's shapes. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "invariant.h"
#include "policy_proto.h"

/* The attribute names read, and where each goes; a name is compared
 * only with those of its length (a request has about 30 attributes). */
static const struct {
	const char *name;
	size_t len, off;
} wanted[] = {
#define A(n)                                                                   \
	{                                                                      \
#n, sizeof(#n) - 1, offsetof(struct policy_request, n)         \
	}
        A(request),   A(protocol_state), A(client_address),   A(client_name),
        A(helo_name), A(sender),         A(recipient),        A(instance),
        A(stress),    A(etrn_domain),    A(policy_test_time),
#undef A
};

static void
keep_attribute(struct policy_request *req, const char *name, size_t len,
               const char *value)
{
	for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
		if (wanted[i].len == len &&
		    !memcmp(wanted[i].name, name, len)) {
			*(const char **)((char *)req + wanted[i].off) = value;
			return;
		}
}

/* The length of buf's first line without its "\n" or "\r\n", *next
 * where the next starts; -1 if the line has not ended within len. */
static ssize_t
line_length(const char *buf, size_t len, size_t *next)
{
	const char *nl = memchr(buf, '\n', len);
	size_t n;

	if (!nl)
		return -1;
	n = (size_t)(nl - buf);
	*next = n + 1;
	return n && buf[n - 1] == '\r' ? (ssize_t)n - 1 : (ssize_t)n;
}

/* The bytes of the first request, its empty line included; 0 if its end
 * has not come; -EBADMSG for a bad line seen on the way. Reads only. */
static ssize_t
request_end(const char *buf, size_t len)
{
	size_t pos = 0, next;
	ssize_t n;

	while ((n = line_length(buf + pos, len - pos, &next)) >= 0) {
		const char *line = buf + pos;
		const char *eq = memchr(line, '=', (size_t)n);

		if (!n)
			return (ssize_t)(pos + next);
		if (memchr(line, 0, (size_t)n) || !eq || eq == line)
			return -EBADMSG;
		pos += next;
	}
	return 0;
}

ssize_t
policy_request_parse(char *buf, size_t len, struct policy_request *req)
{
	size_t limit = len < POLICY_REQUEST_MAX ? len : POLICY_REQUEST_MAX;
	ssize_t end = request_end(buf, limit);
	size_t pos = 0, next;
	ssize_t n;

	memset(req, 0, sizeof(*req));
	if (end < 0)
		return end;
	if (!end)
		return limit == POLICY_REQUEST_MAX ? -EMSGSIZE : 0;
	/* Whole and checked: its lines become strings. */
	while ((n = line_length(buf + pos, (size_t)end - pos, &next)) > 0) {
		char *line = buf + pos;
		char *eq = memchr(line, '=', (size_t)n);

		line[n] = 0;
		*eq = 0;
		keep_attribute(req, line, (size_t)(eq - line), eq + 1);
		pos += next;
	}
	return end;
}

/* A bounded writer that keeps the answer one line. */
struct out {
	char *buf;
	size_t len, cap; /* cap leaves room for the "\n\n" */
};

static void
put_bytes(struct out *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n && o->len < o->cap; i++) {
		unsigned char c = (unsigned char)s[i];

		o->buf[o->len++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
	}
}

static void
put_text(struct out *o, const char *s)
{
	put_bytes(o, s, strlen(s));
}

static void
put_uint(struct out *o, uint32_t v)
{
	char num[16];

	snprintf(num, sizeof(num), "%u", v);
	put_text(o, num);
}

/* postgrey's placeholders: %s the seconds left, %r the recipient's
 * domain; %% is a '%'; any other is kept as it is. */
static void
put_template(struct out *o, const struct policy_answer *a)
{
	const char *t = a->text_template ? a->text_template : "";
	const char *at = a->recipient ? strrchr(a->recipient, '@') : NULL;
	const char *domain = at ? at + 1 : a->recipient ? a->recipient : "";

	for (; *t; t++) {
		if (t[0] != '%' || !t[1]) {
			put_bytes(o, t, 1);
		} else if (t[1] == 's') {
			put_uint(o, a->wait_sec);
			t++;
		} else if (t[1] == 'r') {
			put_text(o, domain);
			t++;
		} else if (t[1] == '%') {
			put_bytes(o, "%", 1);
			t++;
		} else {
			put_bytes(o, t, 1);
		}
	}
}

size_t
policy_answer_format(const struct policy_answer *a, char *out)
{
	struct out o = {out, 0, POLICY_ANSWER_MAX - 3};
	const char *t = a->text_template ? a->text_template : "";
	char date[64];
	struct tm tm;
	time_t now = (time_t)a->now;

	switch (a->verdict) {
	case POLICY_DEFER:
		put_text(&o, "action=DEFER_IF_PERMIT ");
		if (a->etrn_domain && !(*t >= '0' && *t <= '9'))
			put_text(&o, "4.2.0 ");
		put_template(&o, a);
		break;
	case POLICY_PREPEND:
		/* RFC 5322's date, in UTC: the same on every gateway. */
		if (!gmtime_r(&now, &tm) ||
		    !strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S +0000",
		              &tm))
			date[0] = 0;
		put_text(&o, "action=PREPEND X-Greylist: delayed ");
		put_uint(&o, a->delay_sec);
		put_text(&o, " seconds by greygate-");
		put_text(&o, a->version ? a->version : "");
		put_text(&o, " at ");
		put_text(&o, a->host ? a->host : "");
		put_text(&o, "; ");
		put_text(&o, date);
		break;
	case POLICY_DUNNO:
		put_text(&o, "action=DUNNO");
		break;
	default:
		UNREACHABLE("a verdict out of enum policy_verdict");
	}
	memcpy(out + o.len, "\n\n", 3);
	return o.len + 2;
}
