// SPDX-License-Identifier: GPL-2.0-or-later
/* The greylist's lists (grey-int.h): the static allow list, the
 * recipients never greylisted and the greytrap addresses ("local@"
 * matches any domain), the recipients that exist. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "grey-int.h"

void
grey_str_list_free(struct str_list *l)
{
	for (size_t i = 0; i < l->len; i++)
		free(l->items[i]);
	free(l->items);
	l->items = NULL;
	l->len = 0;
}

int
grey_allow_set(struct grey *grey, const struct ip_range *ranges, size_t n)
{
	struct ip_range *copy = NULL;

	for (size_t i = 1; i < n; i++) {
		const struct ip_range *a = &ranges[i - 1], *b = &ranges[i];

		if (a->family > b->family ||
		    (a->family == b->family &&
		     ip_addr_cmp(a->family, a->hi, b->lo) >= 0))
			return -EINVAL;
	}
	if (n) {
		copy = malloc(n * sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		memcpy(copy, ranges, n * sizeof(*copy));
	}
	free(grey->allow);
	grey->allow = copy;
	grey->allow_len = n;
	return 0;
}

static int
str_list_add(struct str_list *l, const char *addr)
{
	char norm[GREY_ADDR_MAX], **grown;

	if (grey_normalize_rcpt(addr, norm, sizeof(norm)) < 0 || !norm[0])
		return -EINVAL;
	grown = realloc(l->items, (l->len + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	l->items = grown;
	l->items[l->len] = strdup(norm);
	if (!l->items[l->len])
		return -ENOMEM;
	l->len++;
	return 0;
}

/* rcpt is normalised. An entry ending in '@' matches that whole local
 * part at any domain, and the bare local part (RFC 5321's RCPT
 * TO:<Postmaster>); what follows the '@' must be a domain, nothing an
 * MTA could read as another address ("postmaster@a.test<victim@a.test"
 * once matched a prefix: issue 55). */
static bool
local_part_match(const char *rcpt, const char *e, size_t n)
{
	const char *domain = rcpt + n;

	if (strncmp(rcpt, e, n - 1) != 0)
		return false;
	if (rcpt[n - 1] == 0)
		return true;
	return rcpt[n - 1] == '@' && *domain &&
	       !strpbrk(domain, "@<>\"(),;\\ \t");
}

bool
grey_str_list_match(const struct str_list *l, const char *rcpt)
{
	for (size_t i = 0; i < l->len; i++) {
		const char *e = l->items[i];
		size_t n = strlen(e);

		if (e[n - 1] == '@' ? local_part_match(rcpt, e, n)
				    : strcmp(rcpt, e) == 0)
			return true;
	}
	return false;
}

void
grey_recipients_clear(struct grey *grey)
{
	grey_str_list_free(&grey->exempt);
	grey_str_list_free(&grey->traps);
}

int
grey_exempt_add(struct grey *grey, const char *rcpt)
{
	return str_list_add(&grey->exempt, rcpt);
}

int
grey_trap_add(struct grey *grey, const char *rcpt)
{
	return str_list_add(&grey->traps, rcpt);
}

void
grey_set_valid_recipients(struct grey *grey, struct recipients *r)
{
	recipients_free(grey->valid);
	grey->valid = r;
}

bool
grey_allow_listed(const struct grey *grey, const struct grey_addr *addr)
{
	return ip_range_find(grey->allow, grey->allow_len, sizeof(*grey->allow),
			     addr->family, addr->bytes) != NULL;
}
