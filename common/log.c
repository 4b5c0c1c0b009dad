// SPDX-License-Identifier: GPL-2.0-or-later
/* Log sink: formats a line once and sends it to stderr or syslog. */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

static const char *log_ident = "greygate";
static bool log_to_syslog;
static enum log_level log_max = LOG_LEVEL_INFO;

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
log_reopen(void)
{
	if (!log_to_syslog)
		return;
	closelog();
	openlog(log_ident, LOG_PID | LOG_NDELAY, LOG_MAIL);
}

void
log_set_level(enum log_level level)
{
	log_max = level;
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

static void
log_emit(enum log_level level, int saved_errno, const char *fmt, va_list ap)
{
	static const int prio[] = {LOG_WARNING, LOG_INFO, LOG_DEBUG};
	static const char *const tag[] = {"warning: ", "", "debug: "};
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
	if (log_to_syslog) {
		syslog(prio[level], "%s%s", tag[level], line);
		return;
	}
	/* One fprintf per line so that lines from two processes sharing
	 * stderr do not interleave mid-line. */
	fprintf(stderr, "%s: %s%s\n", log_ident, tag[level], line);
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
