// SPDX-License-Identifier: GPL-2.0-or-later
/* Allow lists (see allow.h). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allow.h"
#include "log.h"

#define ALLOW_FILES_MAX 1024

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
load_file(const char *dir, const char *name, allow_entry_fn *fn, void *ctx)
{
	char path[512], line[512];
	int lineno = 0, loaded = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f) {
		log_warn("allow list %s", path);
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		struct grey_client net;
		char *s = trim_line(line);

		lineno++;
		if (!*s)
			continue;
		if (grey_cidr_parse(s, &net) < 0) {
			log_warnx("%s:%d: not an address or CIDR: '%s' "
				  "(line skipped)",
				  path, lineno, s);
			continue;
		}
		fn(s, &net, path, ctx);
		loaded++;
	}
	fclose(f);
	return loaded;
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
allow_load_dir(const char *dir, allow_entry_fn *fn, void *ctx, size_t *nfiles)
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
		total += load_file(dir, names[i], fn, ctx);
		free(names[i]);
	}
	*nfiles = n;
	return total;
}

/* The saved run-time list: "CIDR EXPIRES COMMENT..." a line. */
int
allow_runtime_load(const char *path, int64_t now, struct allow_runtime **out,
		   size_t *n)
{
	struct allow_runtime *list = NULL, e;
	size_t len = 0, cap = 0;
	char line[512];
	FILE *f = fopen(path, "r");

	*out = NULL;
	*n = 0;
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (fgets(line, sizeof(line), f)) {
		struct grey_client net;
		int consumed = 0;

		memset(&e, 0, sizeof(e));
		line[strcspn(line, "\r\n")] = 0;
		if (line[0] == '#' || !line[0])
			continue;
		if (sscanf(line, "%63s %" SCNd64 " %n", e.cidr, &e.expires,
			   &consumed) < 2 ||
		    grey_cidr_parse(e.cidr, &net) < 0) {
			log_warnx("%s: bad line skipped: '%s'", path, line);
			continue;
		}
		snprintf(e.comment, sizeof(e.comment), "%s", line + consumed);
		if (e.expires && e.expires <= now)
			continue;
		if (len == cap) {
			struct allow_runtime *bigger;

			cap = cap ? cap * 2 : 16;
			bigger = realloc(list, cap * sizeof(*list));
			if (!bigger) {
				free(list);
				fclose(f);
				return -ENOMEM;
			}
			list = bigger;
		}
		list[len++] = e;
	}
	fclose(f);
	*out = list;
	*n = len;
	return 0;
}

int
allow_runtime_save(const char *path, const struct allow_runtime *list,
		   size_t n)
{
	char tmp[512];
	FILE *f;
	int r = 0;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
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
	if (r)
		unlink(tmp);
	return r;
}
