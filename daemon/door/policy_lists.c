// SPDX-License-Identifier: GPL-2.0-or-later
/* postgrey's whitelist files (see policy_lists.h): each line made one
 * entry (a name, a network, or a compiled regex) and matched the way
 * postgrey matches it, without turning plain names into regexes. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pattern.h"
#include "policy_lists.h"

enum entry_kind {
	E_REGEX,   /* /re/: the whole name or address searched */
	E_NAME,    /* clients: the name, or a name ending in ".name" */
	E_NET,     /* clients: an address or network */
	E_ADDRESS, /* recipients: local@domain (and local+ext@domain) */
	E_LOCAL,   /* recipients: local@ (any domain) */
	E_DOMAIN,  /* recipients: the domain, or a subdomain of it */
};

struct entry {
	enum entry_kind kind;
	char *text;             /* E_NAME, E_ADDRESS, E_LOCAL, E_DOMAIN */
	struct pattern *re;     /* E_REGEX */
	struct grey_client net; /* E_NET */
};

struct entry_list {
	struct entry *v;
	size_t n, cap;
};

struct policy_lists {
	struct entry_list clients, recipients;
};

static void
list_free(struct entry_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].text);
		pattern_free(l->v[i].re);
	}
	free(l->v);
}

void
policy_lists_free(struct policy_lists *lists)
{
	if (!lists)
		return;
	list_free(&lists->clients);
	list_free(&lists->recipients);
	free(lists);
}

static struct entry *
list_add(struct entry_list *l, enum entry_kind kind)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct entry *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	memset(&l->v[l->n], 0, sizeof(l->v[0]));
	l->v[l->n].kind = kind;
	return &l->v[l->n++];
}

/* "/re/" compiled. Return: 0, -EINVAL (why set), -ENOMEM. */
static int
add_regex(struct entry_list *l, const char *text, size_t len, const char **why)
{
	static char msg[200];
	struct entry *e;
	struct pattern *re;
	char what[160];

	re = pattern_compile(text + 1, len - 2, what, sizeof(what));
	if (!re) {
		snprintf(msg, sizeof(msg), "a regex that does not compile %s",
		         what);
		*why = msg;
		return -EINVAL;
	}
	e = list_add(l, E_REGEX);
	if (!e) {
		pattern_free(re);
		return -ENOMEM;
	}
	e->re = re;
	return 0;
}

static int
add_text(struct entry_list *l, enum entry_kind kind, const char *text,
         size_t len)
{
	struct entry *e = list_add(l, kind);

	if (!e || !(e->text = strndup(text, len)))
		return -ENOMEM;
	return 0;
}

/* IPv4 with one or two numbers left off (postgrey: the first numbers
 * given are checked), as a CIDR. */
static bool
partial_ipv4(const char *text, char *cidr, size_t len)
{
	int dots = 0;

	for (const char *p = text; *p; p++) {
		if (*p == '.')
			dots++;
		else if (!isdigit((unsigned char)*p))
			return false;
	}
	if (dots == 2)
		snprintf(cidr, len, "%s.0/24", text);
	else if (dots == 1)
		snprintf(cidr, len, "%s.0.0/16", text);
	else
		return false;
	return true;
}

static int
add_client(struct entry_list *l, char *line, size_t len, const char **why)
{
	char cidr[64];
	struct entry *e;
	struct grey_client net;

	if (len > 2 && line[0] == '/' && line[len - 1] == '/')
		return add_regex(l, line, len, why);
	if (grey_cidr_parse(line, &net) == 0 ||
	    (partial_ipv4(line, cidr, sizeof(cidr)) &&
	     grey_cidr_parse(cidr, &net) == 0)) {
		e = list_add(l, E_NET);
		if (!e)
			return -ENOMEM;
		e->net = net;
		return 0;
	}
	*why = "does not look like a host name, an address or a /regex/";
	if (strpbrk(line, " \t/") || strchr(line, ':'))
		return -EINVAL;
	return add_text(l, E_NAME, line, len);
}

static int
add_recipient(struct entry_list *l, char *line, size_t len, const char **why)
{
	char *at = strchr(line, '@');

	if (len > 2 && line[0] == '/' && line[len - 1] == '/')
		return add_regex(l, line, len, why);
	*why = "does not look like an address, name@ or a domain";
	if (strpbrk(line, " \t") || at == line)
		return -EINVAL;
	if (!at)
		return add_text(l, E_DOMAIN, line, len);
	if (!at[1])
		return add_text(l, E_LOCAL, line, (size_t)(at - line));
	return add_text(l, E_ADDRESS, line, len);
}

typedef int add_fn(struct entry_list *l, char *line, size_t len,
                   const char **why);

/* One file's lines into l. Return: 0, -errno (unreadable), -ENOMEM. */
static int
read_file(const char *path, struct entry_list *l, add_fn *add,
          policy_lists_warn_fn *warn, void *ctx)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	int n = 0, r = 0;

	if (!f)
		return -errno;
	while ((got = getline(&line, &cap, f)) >= 0) {
		char *p = line, *hash = memchr(line, '#', (size_t)got);
		size_t len = hash ? (size_t)(hash - line) : (size_t)got;
		const char *why = NULL;

		n++;
		while (len && isspace((unsigned char)p[len - 1]))
			len--;
		while (len && isspace((unsigned char)*p)) {
			p++;
			len--;
		}
		if (!len)
			continue;
		p[len] = 0;
		r = add(l, p, len, &why);
		if (r == -ENOMEM)
			break;
		if (r < 0 && warn)
			warn(path, n, why, ctx);
		r = 0;
	}
	free(line);
	fclose(f);
	return r;
}

/* path, then path.local if it exists. */
static int
read_with_local(const char *path, struct entry_list *l, add_fn *add,
                policy_lists_warn_fn *warn, void *ctx, char *err)
{
	char local[300];
	int r;

	if (!path[0])
		return 0;
	r = read_file(path, l, add, warn, ctx);
	if (r < 0) {
		snprintf(err, 512, "%.300s: %s", path, strerror(-r));
		return r;
	}
	snprintf(local, sizeof(local), "%s.local", path);
	r = read_file(local, l, add, warn, ctx);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		snprintf(err, 512, "%.300s: %s", local, strerror(-r));
	return r;
}

int
policy_lists_load(const char *clients_path, const char *recipients_path,
                  policy_lists_warn_fn *warn, void *ctx,
                  struct policy_lists **out, char *err)
{
	struct policy_lists *lists = calloc(1, sizeof(*lists));
	int r;

	if (!lists)
		return -ENOMEM;
	r = read_with_local(clients_path, &lists->clients, add_client, warn,
	                    ctx, err);
	if (r == 0)
		r = read_with_local(recipients_path, &lists->recipients,
		                    add_recipient, warn, ctx, err);
	if (r < 0) {
		policy_lists_free(lists);
		return r;
	}
	*out = lists;
	return 0;
}

/* Does name end with suffix, as a whole label: equal, or "...".suffix? */
static bool
ends_with_label(const char *name, size_t len, const char *suffix, char dot)
{
	size_t n = strlen(suffix);

	if (len < n || strcasecmp(name + len - n, suffix) != 0)
		return false;
	return len == n || name[len - n - 1] == dot;
}

bool
policy_lists_client(const struct policy_lists *lists, const char *client_name,
                    const struct grey_addr *addr)
{
	const char *name = client_name && strcmp(client_name, "unknown") != 0
	                           ? client_name
	                           : "";
	size_t len = strlen(name);

	for (size_t i = 0; lists && i < lists->clients.n; i++) {
		const struct entry *e = &lists->clients.v[i];

		if ((e->kind == E_NET && grey_client_contains(&e->net, addr)) ||
		    (e->kind == E_NAME && len &&
		     ends_with_label(name, len, e->text, '.')) ||
		    (e->kind == E_REGEX && len &&
		     pattern_search(e->re, name)))
			return true;
	}
	return false;
}

/* local@domain matches "local@domain" and "local+ext@domain". */
static bool
local_matches(const char *rcpt, const char *at, const char *local,
              size_t local_len)
{
	size_t n = (size_t)(at - rcpt);

	if (n < local_len || strncasecmp(rcpt, local, local_len) != 0)
		return false;
	return n == local_len || rcpt[local_len] == '+';
}

bool
policy_lists_recipient(const struct policy_lists *lists, const char *rcpt)
{
	const char *at = strrchr(rcpt, '@');

	for (size_t i = 0; lists && i < lists->recipients.n; i++) {
		const struct entry *e = &lists->recipients.v[i];
		const char *eat;

		switch (e->kind) {
		case E_REGEX:
			if (pattern_search(e->re, rcpt))
				return true;
			break;
		case E_LOCAL:
			if (at &&
			    local_matches(rcpt, at, e->text, strlen(e->text)))
				return true;
			break;
		case E_ADDRESS:
			eat = strrchr(e->text, '@');
			if (at && !strcasecmp(at + 1, eat + 1) &&
			    local_matches(rcpt, at, e->text,
			                  (size_t)(eat - e->text)))
				return true;
			break;
		case E_DOMAIN:
			if (at && (ends_with_label(at + 1, strlen(at + 1),
			                           e->text, '.')))
				return true;
			break;
		default:
			break;
		}
	}
	return false;
}

void
policy_lists_count(const struct policy_lists *lists, int *clients,
                   int *recipients)
{
	*clients = lists ? (int)lists->clients.n : 0;
	*recipients = lists ? (int)lists->recipients.n : 0;
}
