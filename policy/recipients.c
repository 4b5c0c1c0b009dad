// SPDX-License-Identifier: GPL-2.0-or-later
/* The recipients that exist (recipients.h): the addresses and the
 * domains named, two sorted arrays. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "recipients.h"

struct recipients {
	char **addrs;    /* "bob@example.org", sorted */
	size_t naddrs;
	char **domains;  /* "example.org": every domain named, sorted */
	bool *any_user;  /* ... with an "@domain" line */
	size_t ndomains;
};

static int
by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool
push(char ***v, size_t *n, size_t *cap, const char *s)
{
	if (*n == *cap) {
		size_t want = *cap ? *cap * 2 : 64;
		char **grown = realloc(*v, want * sizeof(**v));

		if (!grown)
			return false;
		*v = grown;
		*cap = want;
	}
	if (!((*v)[*n] = strdup(s)))
		return false;
	(*n)++;
	return true;
}

static void
free_all(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* The domains named, once each, and which have an "@domain" line. */
static int
make_domains(struct recipients *r, char **catch_all, size_t ncatch)
{
	size_t cap = 0, n = 0;
	char **all = NULL;

	for (size_t i = 0; i < r->naddrs; i++)
		if (!push(&all, &n, &cap, strrchr(r->addrs[i], '@') + 1))
			goto nomem;
	for (size_t i = 0; i < ncatch; i++)
		if (!push(&all, &n, &cap, catch_all[i]))
			goto nomem;
	if (n)
		qsort(all, n, sizeof(*all), by_text);
	r->domains = all;
	r->any_user = calloc(n ? n : 1, sizeof(*r->any_user));
	if (!r->any_user)
		goto nomem;
	/* unique */
	r->ndomains = 0;
	for (size_t i = 0; i < n; i++) {
		if (r->ndomains && !strcmp(all[r->ndomains - 1], all[i])) {
			free(all[i]);
			continue;
		}
		all[r->ndomains++] = all[i];
	}
	for (size_t i = 0; i < ncatch; i++) {
		char **at = bsearch(&catch_all[i], r->domains, r->ndomains,
		                    sizeof(*r->domains), by_text);

		r->any_user[at - r->domains] = true;
	}
	return 0;
nomem:
	free_all(all, n);
	r->domains = NULL;
	return -ENOMEM;
}

struct recipients *
recipients_load(const char *path, char *err, size_t len)
{
	struct recipients *r = calloc(1, sizeof(*r));
	char **catch_all = NULL;
	size_t ncatch = 0, catch_cap = 0, addr_cap = 0;
	char line[600], norm[GREY_ADDR_MAX];
	unsigned no = 0;
	FILE *f;

	if (!r) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	f = fopen(path, "re");
	if (!f) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		free(r);
		return NULL;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s = line + strspn(line, " \t"), *end;

		no++;
		end = s + strcspn(s, "#\r\n");
		while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		*end = 0;
		if (!*s)
			continue;
		if (grey_normalize_rcpt(s, norm, sizeof(norm)) < 0 ||
		    !strchr(norm, '@') || strchr(norm, '@')[1] == 0 ||
		    strchr(norm, '@') != strrchr(norm, '@') || strchr(norm, ' ')) {
			snprintf(err, len, "%s:%u: \"%.80s\" is neither an "
			         "address nor @domain", path, no, s);
			goto fail;
		}
		if (norm[0] == '@' ? !push(&catch_all, &ncatch, &catch_cap,
		                           norm + 1)
		                   : !push(&r->addrs, &r->naddrs, &addr_cap, norm)) {
			snprintf(err, len, "out of memory");
			goto fail;
		}
	}
	fclose(f);
	f = NULL;
	if (r->naddrs)
		qsort(r->addrs, r->naddrs, sizeof(*r->addrs), by_text);
	if (make_domains(r, catch_all, ncatch) < 0) {
		snprintf(err, len, "out of memory");
		goto fail;
	}
	free_all(catch_all, ncatch);
	return r;
fail:
	if (f)
		fclose(f);
	free_all(catch_all, ncatch);
	recipients_free(r);
	return NULL;
}

void
recipients_free(struct recipients *r)
{
	if (!r)
		return;
	free_all(r->addrs, r->naddrs);
	free_all(r->domains, r->ndomains);
	free(r->any_user);
	free(r);
}

bool
recipients_unknown(const struct recipients *r, const char *rcpt)
{
	const char *at = strrchr(rcpt, '@');
	const char *domain = at ? at + 1 : "";
	char **found;

	found = bsearch(&domain, r->domains, r->ndomains, sizeof(*r->domains),
	                by_text);
	if (!found || r->any_user[found - r->domains])
		return false;
	return !bsearch(&rcpt, r->addrs, r->naddrs, sizeof(*r->addrs), by_text);
}

size_t
recipients_count(const struct recipients *r)
{
	return r->naddrs + r->ndomains;
}
