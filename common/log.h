/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Logging for the daemon and the tools (never the part libraries):
 * stderr in the foreground, syslog (mail facility) as a daemon. */
#ifndef GREYGATE_LOG_H
#define GREYGATE_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdnoreturn.h>

enum log_level {
	LOG_LEVEL_WARN = 0, /* problems: always shown */
	LOG_LEVEL_INFO = 1, /* decisions and state changes */
	LOG_LEVEL_DEBUG = 2 /* everything */
};

/*
 * log_init - set where log lines go.
 * @ident: program name put before every line (not copied: keep it alive)
 * @to_syslog: true for syslog(3) with LOG_MAIL, false for stderr
 * @level: the most verbose level shown
 */
void log_init(const char *ident, bool to_syslog, enum log_level level);

/* log_uses_stderr - lines go to stderr (not syslog, not a sink). */
bool log_uses_stderr(void);

/* log_set_level - change the most verbose level shown. */
void log_set_level(enum log_level level);

/* log_is_shown - would a line of level be shown? (To skip making one.) */
bool log_is_shown(enum log_level level);

/* Where a line goes instead of stderr or syslog (the child sends its
 * lines to greygated). line is formatted, without a newline. */
typedef void log_sink_fn(enum log_level level, const char *line, void *ctx);

/* log_set_sink - send every line to fn from now on (NULL: back to
 * stderr or syslog). */
void log_set_sink(log_sink_fn *fn, void *ctx);

/* log_line - log an already formatted line at level (a line the child
 * sent), control characters escaped. */
void log_line(enum log_level level, const char *prefix, const char *line);

/* log_level_parse - "warn", "info" or "debug" to a level; -EINVAL else. */
int log_level_parse(const char *name);

/* log_warn - a warning followed by ": " and strerror(errno). */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* log_warnx - a warning without errno. */
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* fatal - log with strerror(errno) and exit(2); fatalx without errno. */
noreturn void fatal(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
noreturn void fatalx(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#endif
