// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the allow lists: every overlap layout merges into the ranges
 * the admin meant (contained, containing, adjacent, /0, across files and
 * run-time entries, in any order), comments name their sources and stay
 * readable by nft, long lines are never split into entries, the saved
 * run-time list refuses what could forge or overflow, and its writing
 * never follows a planted link. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allow.h"
#include "check.h"
#include "log.h"
#include "policy.h"

static char dir[64];
static char logged[8192];

static void
capture_log(enum log_level level, const char *line, void *ctx)
{
	snprintf(logged + strlen(logged), sizeof(logged) - strlen(logged),
	         "%s\n", line);
}

static struct ip_range
range_of(const char *cidr)
{
	struct grey_client c;
	struct ip_range r;

	CHECK_INT(grey_cidr_parse(cidr, &c), 0);
	ip_range_of_prefix(c.family, c.bytes, c.prefix, &r);
	return r;
}

/* The merged ranges of entries "CIDR@SOURCE[@EXPIRES]", as text
 * "RANGE[SOURCES] ..." for the checks. */
static const char *
merged(const char *const *entries, size_t n, int64_t now)
{
	static char text[4096];
	struct allow_range *out;
	struct allow_set set;
	size_t nout;

	allow_set_init(&set);
	for (size_t i = 0; i < n; i++) {
		char buf[256], *src, *exp;

		snprintf(buf, sizeof(buf), "%s", entries[i]);
		src = strchr(buf, '@');
		*src++ = 0;
		exp = strchr(src, '@');
		if (exp)
			*exp++ = 0;
		struct ip_range r = range_of(buf);

		CHECK_INT(allow_set_add(&set, &r, exp ? atoll(exp) : 0, src),
		          0);
	}
	CHECK_INT(allow_set_merge(&set, now, &out, &nout), 0);
	text[0] = 0;
	for (size_t i = 0; i < nout; i++) {
		char r[IP_RANGE_TEXT_MAX];

		snprintf(text + strlen(text), sizeof(text) - strlen(text),
		         "%s%s[%s]", i ? " " : "",
		         ip_range_format(&out[i].range, r), out[i].comment);
		if (out[i].expires)
			snprintf(text + strlen(text),
			         sizeof(text) - strlen(text), "<%lld",
			         (long long)out[i].expires);
	}
	free(out);
	allow_set_free(&set);
	return text;
}

#define MERGED(now, ...)                                                       \
	merged((const char *const[]){__VA_ARGS__},                             \
	       sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *),    \
	       now)

static void
test_overlap_layouts(void)
{
	/* The case: a /32 in one file, its /24 in another. */
	CHECK_STR(MERGED(0, "203.0.113.77@00-own.txt",
	                 "203.0.113.0/24@provider-x.txt"),
	          "203.0.113.0/24[00-own.txt, provider-x.txt]");
	/* Containing first, then contained. */
	CHECK_STR(MERGED(0, "203.0.113.0/24@b", "203.0.113.77@a"),
	          "203.0.113.0/24[b, a]");
	/* Adjacent halves are one /24 (its sources in the order read); a
	 * hole keeps two. */
	CHECK_STR(MERGED(0, "198.51.100.128/25@b", "198.51.100.0/25@a"),
	          "198.51.100.0/24[b, a]");
	CHECK_STR(MERGED(0, "198.51.100.0/26@a", "198.51.100.128/26@b"),
	          "198.51.100.0/26[a] 198.51.100.128/26[b]");
	/* Merged need not be a CIDR. */
	CHECK_STR(MERGED(0, "198.51.100.0/25@a", "198.51.100.128/26@b"),
	          "198.51.100.0-198.51.100.191[a, b]");
	/* 1.0.0.0/8 then 0.0.0.0/0 is 0.0.0.0/0, not 0.0.0.0/8. */
	CHECK_STR(MERGED(0, "1.0.0.0/8@a", "0.0.0.0/0@b"), "0.0.0.0/0[a, b]");
	CHECK_STR(MERGED(0, "0.0.0.0/0@b", "198.51.100.0/24@a", "::/0@c"),
	          "0.0.0.0/0[b, a] ::/0[c]");
	/* The top of the space: no address after it. */
	CHECK_STR(MERGED(0, "255.255.255.255@a", "255.255.255.0/24@b"),
	          "255.255.255.0/24[a, b]");
	/* IPv4 and IPv6 never merge; the mapped form is IPv4. */
	CHECK_STR(MERGED(0, "2001:db8::/32@a", "198.51.100.0/24@b",
	                 "::ffff:198.51.100.7@c"),
	          "198.51.100.0/24[b, c] 2001:db8::/32[a]");
	/* A chain: each overlaps the next only. */
	CHECK_STR(MERGED(0, "198.51.100.0/30@a", "198.51.100.3@b",
	                 "198.51.100.4/30@c", "198.51.100.8/29@d"),
	          "198.51.100.0/28[a, b, c, d]");
}

static void
test_runtime_lifetimes(void)
{
	/* A run-time entry with a ttl inside a file's: the file's has none. */
	CHECK_STR(MERGED(1000, "203.0.113.0/24@file", "203.0.113.5@ctl@5000"),
	          "203.0.113.0/24[file, ctl]");
	/* Two with ttls: the longer. */
	CHECK_STR(MERGED(1000, "203.0.113.0/25@x@3000",
	                 "203.0.113.128/25@y@2000"),
	          "203.0.113.0/24[x, y]<3000");
	/* Expired ones are gone, and no longer join their neighbours. */
	CHECK_STR(MERGED(2500, "203.0.113.0/25@x@3000",
	                 "203.0.113.128/25@y@2000"),
	          "203.0.113.0/25[x]<3000");
}

static void
test_comments(void)
{
	char name[300];
	const char *text;

	/* Quotes would break nft's printed ruleset: replaced. */
	CHECK_STR(MERGED(0, "203.0.113.0/24@say \"hi\" \\ there"),
	          "203.0.113.0/24[say 'hi' / there]");
	/* Cut within 127 bytes, never inside a UTF-8 character. */
	strcpy(name, "x");
	for (int i = 0; i < 100; i++)
		strcat(name, "\xc3\xa9"); /* é */
	char entry[400];

	snprintf(entry, sizeof(entry), "203.0.113.0/24@%s", name);
	text = MERGED(0, entry);
	CHECK_INT(strlen(text), strlen("203.0.113.0/24[]") + 1 + 63 * 2);
	/* More sources than a comment names. */
	CHECK_STR(MERGED(0, "198.51.100.1@a", "198.51.100.2@b",
	                 "198.51.100.3@c", "198.51.100.4@d", "198.51.100.5@e"),
	          "198.51.100.1-198.51.100.5[a, b, c, d, ...]");
}

static void
write_file(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK(f);
	fputs(text, f);
	fclose(f);
}

static void
test_files_long_lines(void)
{
	char text[2048], sub[128];
	struct allow_range *out;
	struct allow_set set;
	size_t n;

	snprintf(sub, sizeof(sub), "%s/allow.d", dir);
	CHECK_INT(mkdir(sub, 0700), 0);
	/* A comment of 509 x and then what looks like an entry: one line. */
	strcpy(text, "# ");
	memset(text + 2, 'x', 509);
	strcpy(text + 511, " 0.0.0.0/0\n198.51.100.0/24\nnot-a-net\n");
	write_file("allow.d/a.txt", text);
	allow_set_init(&set);
	logged[0] = 0;
	CHECK_INT(allow_set_load_dir(&set, sub), 1);
	CHECK(strstr(logged, "allow.d/a.txt:3: not an address or CIDR: "
	                     "'not-a-net'"));
	CHECK_INT(allow_set_merge(&set, 0, &out, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(ip_range_prefix(&out[0].range), 24);
	free(out);
	allow_set_free(&set);
}

static void
test_runtime_file(void)
{
	char path[128], link_target[128], text[512];
	struct allow_runtime *list, e = {"198.51.100.7/32", "ok", 0};
	size_t n;
	struct stat st;

	snprintf(path, sizeof(path), "%s/allow-runtime.txt", dir);
	snprintf(text, sizeof(text),
	         "198.51.100.1/32 0 fine\n"
	         "198.51.100.2/32 99999999999999999999 overflow\n"
	         "198.51.100.3/32 999999999999 far off\n"
	         "198.51.100.4/32 -5 negative\n"
	         "198.51.100.5/32 0 tab\there\n"
	         "198.51.100.6/32 1500 expired\n"
	         "nonsense 0 x\n");
	write_file("allow-runtime.txt", text);
	logged[0] = 0;
	CHECK_INT(allow_runtime_load(path, 2000, &list, &n), 0);
	CHECK_INT(n, 1);
	CHECK_STR(list[0].cidr, "198.51.100.1/32");
	CHECK_STR(list[0].comment, "fine");
	CHECK(strstr(logged, "allow-runtime.txt:2: bad line skipped"));
	CHECK(strstr(logged, "allow-runtime.txt:5: bad line skipped"));
	free(list);
	CHECK(allow_text_ok("fine, with UTF-8: \xc3\xa9"));
	CHECK(!allow_text_ok("two\nlines"));

	/* A link planted where the new list is written is removed, never
	 * followed: its target stays as it was. */
	snprintf(link_target, sizeof(link_target), "%s/precious", dir);
	write_file("precious", "root's file\n");
	snprintf(text, sizeof(text), "%s.new", path);
	CHECK_INT(symlink(link_target, text), 0);
	CHECK_INT(allow_runtime_save(path, &e, 1), 0);
	CHECK_INT(stat(link_target, &st), 0);
	CHECK_INT(st.st_size, strlen("root's file\n"));
	CHECK_INT(lstat(text, &st), -1);
	CHECK_INT(allow_runtime_load(path, 0, &list, &n), 0);
	CHECK_INT(n, 1);
	CHECK_STR(list[0].cidr, "198.51.100.7/32");
	free(list);
}

/* A run-time entry for a network already listed takes its place (the
 * latest word wins); the same entry again changes nothing. */
static void
test_runtime_put(void)
{
	struct allow_runtime *list = NULL;
	struct allow_runtime a = {"198.51.100.0/24", "first", 0};
	struct allow_runtime b = {"2001:db8::/32", "other", 0};
	struct allow_runtime a2 = {"198.51.100.0/24", "second", 1800000000};
	size_t n = 0;

	CHECK_INT(allow_runtime_put(&list, &n, &a), 1);
	CHECK_INT(allow_runtime_put(&list, &n, &b), 1);
	CHECK_INT(allow_runtime_put(&list, &n, &a), 0);
	CHECK_INT(n, 2);
	CHECK_INT(allow_runtime_put(&list, &n, &a2), 1);
	CHECK_INT(n, 2);
	CHECK_STR(list[0].comment, "second");
	CHECK_INT(list[0].expires, 1800000000);
	CHECK_STR(list[1].cidr, "2001:db8::/32");
	free(list);
}

int
main(void)
{
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/gg-allow-XXXXXX");
	CHECK(mkdtemp(dir));
	log_set_sink(capture_log, NULL);
	RUN(test_overlap_layouts);
	RUN(test_runtime_lifetimes);
	RUN(test_comments);
	RUN(test_files_long_lines);
	RUN(test_runtime_file);
	RUN(test_runtime_put);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
	return 0;
}
