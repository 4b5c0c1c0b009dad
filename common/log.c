// SPDX-License-Identifier: GPL-2.0-or-later
/* Log sink: formats a line once, escapes what could forge another line
 * (control characters from a peer), and sends it to stderr with a time
 * stamp, to syslog, or to a sink of the caller's (the child's lines go
 * up to greygated). */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <syslog.h>
#include <time.h>

static const char *log_ident = "greygate";
static bool log_to_syslog;
static enum log_level log_max = LOG_LEVEL_INFO;
static log_sink_fn *log_sink;
static void *log_sink_ctx;

void
log_init(const char *ident, bool to_syslog, enum log_level level)
{
	log_ident = ident;
	log_to_syslog = to_syslog;
	log_max = level;
	if (to_syslog)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_MAIL);
}

void
log_set_sink(log_sink_fn *fn, void *ctx)
{
	log_sink = fn;
	log_sink_ctx = ctx;
}

bool
log_uses_stderr(void)
{
	return !log_to_syslog && !log_sink;
}

void
log_set_level(enum log_level level)
{
	log_max = level;
}

bool
log_is_shown(enum log_level level)
{
	return level <= log_max;
}

int
log_level_parse(const char *name)
{
	if (strcmp(name, "warn") == 0)
		return LOG_LEVEL_WARN;
	if (strcmp(name, "info") == 0)
		return LOG_LEVEL_INFO;
	if (strcmp(name, "debug") == 0)
		return LOG_LEVEL_DEBUG;
	return -EINVAL;
}

/* Control characters (a newline from a peer, an escape sequence) become
 * \xHH: one call, one line, whatever the text held. */
static void
escape_controls(const char *in, char *out, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)in;
	     *p && o + 5 < len; p++) {
		if (*p >= 0x20 && *p != 0x7f) {
			out[o++] = (char)*p;
			continue;
		}
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[*p >> 4];
		out[o++] = hex[*p & 15];
	}
	out[o] = 0;
}

static void
emit(enum log_level level, const char *prefix, const char *text)
{
	static const int prio[] = {LOG_WARNING, LOG_INFO, LOG_DEBUG};
	static const char *const tag[] = {"warning: ", "", "debug: "};
	char line[4096];

	escape_controls(text, line, sizeof(line));
	if (log_sink) {
		log_sink(level, line, log_sink_ctx);
		return;
	}
	if (log_to_syslog) {
		syslog(prio[level], "%s%s%s", prefix, tag[level], line);
		return;
	}
	/* In the foreground, a time stamp: stderr is often a file. One
	 * fprintf per line so that lines from two processes sharing
	 * stderr do not interleave mid-line. */
	struct timeval tv;
	struct tm tm;
	char when[40] = "";
	size_t n = 0;

	gettimeofday(&tv, NULL);
	if (gmtime_r(&tv.tv_sec, &tm))
		n = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	if (n)
		snprintf(when + n, sizeof(when) - n, ".%03dZ ",
			 (int)(tv.tv_usec / 1000));
	fprintf(stderr, "%s%s: %s%s%s\n", when, log_ident, prefix, tag[level],
		line);
}

void
log_line(enum log_level level, const char *prefix, const char *line)
{
	if (level > log_max)
		return;
	emit(level, prefix, line);
}

static void
log_emit(enum log_level level, int saved_errno, const char *fmt, va_list ap)
{
	char line[2048];
	int n;

	if (level > log_max)
		return;
	n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n < 0)
		return;
	if (saved_errno != 0 && (size_t)n < sizeof(line))
		snprintf(line + n, sizeof(line) - (size_t)n, ": %s",
			 strerror(saved_errno));
	emit(level, "", line);
}

#define LOG_BODY(level, err)                                                   \
	do {                                                                   \
		va_list ap;                                                    \
		va_start(ap, fmt);                                             \
		log_emit(level, err, fmt, ap);                                 \
		va_end(ap);                                                    \
	} while (0)

void
log_warn(const char *fmt, ...)
{
	int saved = errno;

	LOG_BODY(LOG_LEVEL_WARN, saved);
	errno = saved;
}

void
log_warnx(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_WARN, 0);
}

void
log_info(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_INFO, 0);
}

void
log_debug(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_DEBUG, 0);
}

void
fatal(const char *fmt, ...)
{
	int saved = errno;

	LOG_BODY(LOG_LEVEL_WARN, saved);
	exit(2);
}

void
fatalx(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_WARN, 0);
	exit(2);
}
