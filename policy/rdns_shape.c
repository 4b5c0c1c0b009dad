// SPDX-License-Identifier: GPL-2.0-or-later
/* The shape of a PTR name (rdns_shape.h): the admin's patterns, and the
 * client's address written into the name. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "pattern.h"
#include "rdns_shape.h"

/* Patterns in a file, at most (each name is matched against each). */
#define PATTERNS_MAX 256

struct pattern {
	struct pattern *re;
	unsigned line;
	char *text;
};

struct rdns_shape {
	struct pattern *v;
	size_t n;
};

static void
trim(char *s)
{
	char *end = s + strlen(s);

	while (end > s && (end[-1] == '\n' || end[-1] == '\r' ||
	                   end[-1] == ' ' || end[-1] == '\t'))
		*--end = 0;
}

static int
add_pattern(struct rdns_shape *s, const char *text, unsigned line,
            const char *path, char *err, size_t len)
{
	struct pattern *p;
	char what[160];

	if (s->n == PATTERNS_MAX) {
		snprintf(err, len, "%s:%u: more than %u patterns", path, line,
		         PATTERNS_MAX);
		return -E2BIG;
	}
	p = &s->v[s->n];
	p->re = pattern_compile(text, strlen(text), what, sizeof(what));
	if (!p->re) {
		snprintf(err, len, "%s:%u: a pattern that does not compile %s",
		         path, line, what);
		return -EINVAL;
	}
	p->text = strdup(text);
	if (!p->text) {
		pattern_free(p->re);
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	p->line = line;
	s->n++;
	return 0;
}

struct rdns_shape *
rdns_shape_load(const char *path, char *err, size_t len)
{
	struct rdns_shape *s = calloc(1, sizeof(*s));
	char buf[1024];
	unsigned line = 0;
	FILE *f;

	if (!s || !(s->v = calloc(PATTERNS_MAX, sizeof(*s->v)))) {
		free(s);
		snprintf(err, len, "out of memory");
		return NULL;
	}
	if (!path)
		return s;
	f = fopen(path, "re");
	if (!f) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		rdns_shape_free(s);
		return NULL;
	}
	while (fgets(buf, sizeof(buf), f)) {
		char *text = buf + strspn(buf, " \t");

		line++;
		if (!strchr(buf, '\n') && !feof(f)) {
			snprintf(err, len, "%s:%u: a line over %zu bytes", path,
			         line, sizeof(buf) - 2);
			goto fail;
		}
		trim(text);
		if (!*text || *text == '#')
			continue;
		if (add_pattern(s, text, line, path, err, len) < 0)
			goto fail;
	}
	if (ferror(f)) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		goto fail;
	}
	fclose(f);
	return s;
fail:
	fclose(f);
	rdns_shape_free(s);
	return NULL;
}

void
rdns_shape_free(struct rdns_shape *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		pattern_free(s->v[i].re);
		free(s->v[i].text);
	}
	free(s->v);
	free(s);
}

size_t
rdns_shape_count(const struct rdns_shape *s)
{
	return s->n;
}

/* The numbers written in name (runs of digits, or of hex digits for
 * base 16), at most max, each capped past 0xffff (no octet or group). */
static size_t
runs_of(const char *name, unsigned base, unsigned *out, size_t max)
{
	size_t n = 0;

	for (const char *p = name; *p && n < max;) {
		unsigned v = 0;
		const char *start = p;

		for (;; p++) {
			int d = *p >= '0' && *p <= '9'   ? *p - '0'
			        : base == 16 && *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
			        : base == 16 && *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
			                                               : -1;

			if (d < 0)
				break;
			v = v > 0xffff ? v : v * base + (unsigned)d;
		}
		if (p > start)
			out[n++] = v;
		else
			p++;
	}
	return n;
}

/* want (count numbers) appear in runs one after the other, in order or
 * reversed. */
static bool
in_sequence(const unsigned *runs, size_t n, const unsigned *want,
            size_t count)
{
	for (size_t i = 0; i + count <= n; i++) {
		bool forward = true, backward = true;

		for (size_t k = 0; k < count; k++) {
			forward = forward && runs[i + k] == want[k];
			backward = backward && runs[i + k] == want[count - 1 - k];
		}
		if (forward || backward)
			return true;
	}
	return false;
}

/* The address in the name: its octets (groups) as numbers one after the
 * other, either way round ("198-51-100-7", "7.100.51.198",
 * "198.051.100.007", "2001-db8-0-0-0-0-0-7"), or written whole in hex
 * ("c6336407") or as twelve digits ("198051100007"). */
static bool
embeds_address(int family, const uint8_t *addr, const char *name)
{
	unsigned runs[64], want[8];
	char text[40];
	size_t n;

	if (family == AF_INET) {
		for (int i = 0; i < 4; i++)
			want[i] = addr[i];
		n = runs_of(name, 10, runs, 64);
		if (in_sequence(runs, n, want, 4))
			return true;
		snprintf(text, sizeof(text), "%02x%02x%02x%02x", addr[0],
		         addr[1], addr[2], addr[3]);
		if (strcasestr(name, text))
			return true;
		snprintf(text, sizeof(text), "%03u%03u%03u%03u", addr[0],
		         addr[1], addr[2], addr[3]);
		return strstr(name, text) != NULL;
	}
	for (int i = 0; i < 8; i++)
		want[i] = (unsigned)addr[2 * i] << 8 | addr[2 * i + 1];
	n = runs_of(name, 16, runs, 64);
	return in_sequence(runs, n, want, 8);
}

int
rdns_shape_dynamic(const struct rdns_shape *s, int family, const uint8_t *addr,
                   const char *name, char *why, size_t len)
{
	if (embeds_address(family, addr, name)) {
		snprintf(why, len, "embeds the address");
		return 1;
	}
	if (!s->n)
		return 0;
	for (size_t i = 0; i < s->n; i++) {
		if (pattern_search(s->v[i].re, name)) {
			snprintf(why, len, "pattern %u: %s", s->v[i].line,
			         s->v[i].text);
			return 1;
		}
	}
	return 0;
}
