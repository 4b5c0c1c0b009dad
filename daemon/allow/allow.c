// SPDX-License-Identifier: GPL-2.0-or-later
/* Allow lists (see allow.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allow.h"
#include "log.h"
#include "policy.h"

#define ALLOW_FILES_MAX 1024
/* A merged range names at most this many of its sources. */
#define SOURCES_NAMED 4

struct allow_entry {
	struct ip_range range;
	int64_t expires;
	size_t source; /* index in the set's sources */
};

void
allow_set_init(struct allow_set *set)
{
	memset(set, 0, sizeof(*set));
}

void
allow_set_free(struct allow_set *set)
{
	for (size_t i = 0; i < set->nsources; i++)
		free(set->sources[i]);
	free(set->sources);
	free(set->entries);
	allow_set_init(set);
}

static int
grow(void **v, size_t *cap, size_t n, size_t size)
{
	void *bigger;
	size_t want = *cap ? *cap * 2 : 64;

	if (n < *cap)
		return 0;
	bigger = realloc(*v, want * size);
	if (!bigger)
		return -ENOMEM;
	*v = bigger;
	*cap = want;
	return 0;
}

/* The source's index; entries of one file come in a row, so the last
 * name is the one to compare with. */
static int
source_index(struct allow_set *set, const char *source, size_t *index)
{
	if (set->nsources && !strcmp(set->sources[set->nsources - 1], source)) {
		*index = set->nsources - 1;
		return 0;
	}
	if (grow((void **)&set->sources, &set->sources_cap, set->nsources,
		 sizeof(*set->sources)) < 0)
		return -ENOMEM;
	set->sources[set->nsources] = strdup(source);
	if (!set->sources[set->nsources])
		return -ENOMEM;
	*index = set->nsources++;
	return 0;
}

int
allow_set_add(struct allow_set *set, const struct ip_range *range,
	      int64_t expires, const char *source)
{
	struct allow_entry *e;
	size_t src;

	if (source_index(set, source, &src) < 0 ||
	    grow((void **)&set->entries, &set->cap, set->n,
		 sizeof(*set->entries)) < 0)
		return -ENOMEM;
	e = &set->entries[set->n++];
	e->range = *range;
	e->expires = expires;
	e->source = src;
	return 0;
}

/* The line without its comment and surrounding blanks. */
static char *
trim_line(char *s)
{
	char *e;

	s[strcspn(s, "#\r\n")] = 0;
	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = 0;
	return s;
}

static int
load_file(struct allow_set *set, const char *dir, const char *name)
{
	char path[512], *line = NULL;
	size_t cap = 0;
	int lineno = 0, loaded = 0;
	ssize_t len;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "re");
	if (!f) {
		log_warn("allow list %s", path);
		return 0;
	}
	/* Whole lines, however long: a long comment (a provider's SPF
	 * record) must never have its tail read as an entry. */
	while ((len = getline(&line, &cap, f)) >= 0) {
		struct grey_client net;
		struct ip_range r;
		char *s;

		lineno++;
		if (memchr(line, 0, (size_t)len)) {
			log_warnx("%s:%d: a NUL byte in the line (line skipped)",
				  path, lineno);
			continue;
		}
		s = trim_line(line);
		if (!*s)
			continue;
		if (grey_cidr_parse(s, &net) < 0) {
			log_warnx("%s:%d: not an address or CIDR: '%.64s' "
				  "(line skipped)",
				  path, lineno, s);
			continue;
		}
		ip_range_of_prefix(net.family, net.bytes, net.prefix, &r);
		if (allow_set_add(set, &r, 0, path) < 0)
			break;
		loaded++;
	}
	free(line);
	fclose(f);
	return loaded;
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
allow_set_load_dir(struct allow_set *set, const char *dir)
{
	char *names[ALLOW_FILES_MAX];
	size_t n = 0;
	struct dirent *de;
	int total = 0;
	DIR *d = opendir(dir);

	if (!d) {
		if (errno != ENOENT)
			log_warn("allow lists %s", dir);
	} else {
		while ((de = readdir(d)) && n < ALLOW_FILES_MAX) {
			if (de->d_name[0] == '.')
				continue;
			names[n] = strdup(de->d_name);
			if (names[n])
				n++;
		}
		if (de)
			log_warnx("allow lists %s: only the first %d files are "
				  "read",
				  dir, ALLOW_FILES_MAX);
		closedir(d);
	}
	qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		total += load_file(set, dir, names[i]);
		free(names[i]);
	}
	set->files += n;
	return total;
}

/* --- merging --- */

static int
cmp_entries(const void *a, const void *b)
{
	const struct allow_entry *x = *(const struct allow_entry *const *)a;
	const struct allow_entry *y = *(const struct allow_entry *const *)b;

	if (x->range.family != y->range.family)
		return (int)x->range.family - (int)y->range.family;
	return ip_addr_cmp(x->range.family, x->range.lo, y->range.lo);
}

/* Does e start within cur or right after it? */
static bool
joins(const struct ip_range *cur, const struct ip_range *e)
{
	uint8_t after[16];

	if (cur->family != e->family)
		return false;
	if (ip_addr_cmp(e->family, e->lo, cur->hi) <= 0)
		return true;
	return ip_addr_next(cur->family, cur->hi, after) &&
	       ip_addr_cmp(e->family, e->lo, after) == 0;
}

/* Appends name to a comment, cleaned for nft's printed ruleset and cut
 * at a UTF-8 character's edge. */
static void
append_name(char *comment, const char *name)
{
	size_t n = strlen(comment), room, i;

	if (n && n + 2 < ALLOW_COMMENT_MAX) {
		memcpy(comment + n, ", ", 3);
		n += 2;
	}
	room = ALLOW_COMMENT_MAX - 1 - n;
	for (i = 0; name[i] && room; i++, room--) {
		unsigned char c = (unsigned char)name[i];

		comment[n++] = c == '"' ? '\'' : c == '\\' ? '/'
			       : c < 0x20 || c == 0x7f ? '?'
						       : (char)c;
	}
	/* Cut inside a character: its first bytes go too. */
	while (name[i] && i > 0 && ((unsigned char)name[i] & 0xc0) == 0x80) {
		n--;
		i--;
	}
	comment[n] = 0;
}

struct merging {
	struct allow_range cur;
	size_t sources[SOURCES_NAMED];
	size_t nsources;
	bool more_sources;
};

static void
note_source(struct merging *m, size_t src)
{
	for (size_t i = 0; i < m->nsources; i++)
		if (m->sources[i] == src)
			return;
	if (m->nsources < SOURCES_NAMED)
		m->sources[m->nsources++] = src;
	else
		m->more_sources = true;
}

static int
cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

static void
finish_range(const struct allow_set *set, struct merging *m,
	     struct allow_range *out)
{
	/* Named in the order they were read (files by name, then the
	 * run-time entries). */
	qsort(m->sources, m->nsources, sizeof(*m->sources), cmp_size);
	m->cur.comment[0] = 0;
	for (size_t i = 0; i < m->nsources; i++)
		append_name(m->cur.comment, set->sources[m->sources[i]]);
	if (m->more_sources)
		append_name(m->cur.comment, "...");
	*out = m->cur;
}

int
allow_set_merge(const struct allow_set *set, int64_t now,
		struct allow_range **out, size_t *n)
{
	const struct allow_entry **live = NULL;
	struct allow_range *ranges = NULL;
	struct merging m = {0};
	size_t nlive = 0, nranges = 0;

	*out = NULL;
	*n = 0;
	if (!set->n)
		return 0;
	live = malloc(set->n * sizeof(*live));
	ranges = malloc(set->n * sizeof(*ranges));
	if (!live || !ranges) {
		free(live);
		free(ranges);
		return -ENOMEM;
	}
	for (size_t i = 0; i < set->n; i++)
		if (!set->entries[i].expires || set->entries[i].expires > now)
			live[nlive++] = &set->entries[i];
	qsort(live, nlive, sizeof(*live), cmp_entries);
	for (size_t i = 0; i < nlive; i++) {
		const struct allow_entry *e = live[i];

		if (i && joins(&m.cur.range, &e->range)) {
			if (ip_addr_cmp(e->range.family, e->range.hi,
					m.cur.range.hi) > 0)
				memcpy(m.cur.range.hi, e->range.hi, 16);
			/* As long as its longest-lived entry. */
			m.cur.expires = !m.cur.expires || !e->expires
						? 0
					: e->expires > m.cur.expires
						? e->expires
						: m.cur.expires;
			note_source(&m, e->source);
			continue;
		}
		if (i)
			finish_range(set, &m, &ranges[nranges++]);
		memset(&m, 0, sizeof(m));
		m.cur.range = e->range;
		m.cur.expires = e->expires;
		note_source(&m, e->source);
	}
	if (nlive)
		finish_range(set, &m, &ranges[nranges++]);
	free(live);
	if (!nranges) {
		free(ranges);
		return 0;
	}
	*out = ranges;
	*n = nranges;
	return 0;
}

int
allow_ranges_to_policy(struct grey *grey, const struct allow_range *ranges,
		       size_t n)
{
	struct ip_range *plain = n ? malloc(n * sizeof(*plain)) : NULL;
	int r;

	if (n && !plain)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		plain[i] = ranges[i].range;
	r = grey_allow_set(grey, plain, n);
	free(plain);
	return r;
}

int
allow_load_to_policy(struct grey *grey, const char *dir)
{
	struct allow_range *ranges;
	struct allow_set set;
	size_t n;
	int r;

	allow_set_init(&set);
	allow_set_load_dir(&set, dir);
	r = allow_set_merge(&set, 0, &ranges, &n);
	allow_set_free(&set);
	if (r == 0)
		r = allow_ranges_to_policy(grey, ranges, n);
	free(ranges);
	return r < 0 ? r : (int)n;
}

/* --- the run-time entries --- */

bool
allow_text_ok(const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

/* The saved run-time list: "CIDR EXPIRES COMMENT..." a line. */
int
allow_runtime_load(const char *path, int64_t now, struct allow_runtime **out,
		   size_t *n)
{
	struct allow_runtime *list = NULL, e;
	size_t len = 0, cap = 0, line_cap = 0;
	char *line = NULL;
	ssize_t got;
	int lineno = 0;
	FILE *f = fopen(path, "re");

	*out = NULL;
	*n = 0;
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while ((got = getline(&line, &line_cap, f)) >= 0) {
		struct grey_client net;
		int consumed = 0;

		lineno++;
		memset(&e, 0, sizeof(e));
		if (memchr(line, 0, (size_t)got)) {
			log_warnx("%s:%d: a NUL byte: line skipped", path,
				  lineno);
			continue;
		}
		line[strcspn(line, "\r\n")] = 0;
		if (line[0] == '#' || !line[0])
			continue;
		if (sscanf(line, "%63s %" SCNd64 " %n", e.cidr, &e.expires,
			   &consumed) < 2 ||
		    grey_cidr_parse(e.cidr, &net) < 0 || e.expires < 0 ||
		    e.expires > now + (int64_t)ALLOW_TTL_MAX_SEC ||
		    !allow_text_ok(line + consumed) ||
		    strlen(line + consumed) >= sizeof(e.comment)) {
			log_warnx("%s:%d: bad line skipped: '%.80s'", path,
				  lineno, line);
			continue;
		}
		snprintf(e.comment, sizeof(e.comment), "%s", line + consumed);
		if (e.expires && e.expires <= now)
			continue;
		if (grow((void **)&list, &cap, len, sizeof(*list)) < 0) {
			free(list);
			free(line);
			fclose(f);
			return -ENOMEM;
		}
		list[len++] = e;
	}
	free(line);
	fclose(f);
	*out = list;
	*n = len;
	return 0;
}

int
allow_runtime_put(struct allow_runtime **list, size_t *n,
		  const struct allow_runtime *e)
{
	struct allow_runtime *grown;
	size_t i;

	for (i = 0; i < *n; i++)
		if (strcmp((*list)[i].cidr, e->cidr) == 0)
			break;
	if (i < *n && (*list)[i].expires == e->expires &&
	    !strcmp((*list)[i].comment, e->comment))
		return 0;
	if (i == *n) {
		grown = realloc(*list, (i + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		*list = grown;
		(*n)++;
	}
	(*list)[i] = *e;
	return 1;
}

int
allow_runtime_remove(struct allow_runtime *list, size_t *n, const char *cidr)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(list[i].cidr, cidr) == 0) {
			memmove(&list[i], &list[i + 1],
				(*n - i - 1) * sizeof(*list));
			(*n)--;
			return 1;
		}
	return 0;
}

int
allow_runtime_save(const char *path, const struct allow_runtime *list,
		   size_t n)
{
	char tmp[512], dir[512];
	FILE *f;
	int fd, r = 0;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	/* A file of our own, never one a link points at: a stale .new (or
	 * a planted link) is removed, not followed. */
	if (unlink(tmp) < 0 && errno != ENOENT)
		return -errno;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		unlink(tmp);
		return r;
	}
	fprintf(f, "# greygatectl allow entries: CIDR EXPIRES(epoch, 0 = "
		   "never) COMMENT. Written by greygated.\n");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s %" PRId64 " %s\n", list[i].cidr, list[i].expires,
			list[i].comment);
	if (fflush(f) != 0 || fsync(fileno(f)) < 0)
		r = -errno;
	if (fclose(f) != 0 && !r)
		r = -errno;
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r) {
		unlink(tmp);
		return r;
	}
	/* The rename itself is on disk once the folder is. */
	snprintf(dir, sizeof(dir), "%s", path);
	fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		if (fsync(fd) < 0)
			r = -errno;
		close(fd);
	}
	return r;
}
