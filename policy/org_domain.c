// SPDX-License-Identifier: GPL-2.0-or-later
/* Organizational domains through libpsl (org_domain.h). */
#include <ctype.h>
#include <libpsl.h>
#include <stdio.h>
#include <string.h>

#include "org_domain.h"

const char *
org_domain(const char *name, char *out, size_t len)
{
	char lower[ORG_DOMAIN_MAX];
	const char *org;
	size_t n = strlen(name);
	/* (the built-in list: compiled in, nothing read at each call; NULL
	 * only where libpsl was built without one) */
	const psl_ctx_t *psl = psl_builtin();

	if (len)
		out[0] = 0;
	if (n && name[n - 1] == '.')
		n--;
	if (!psl || !n || n >= sizeof(lower))
		return out;
	for (size_t i = 0; i < n; i++)
		lower[i] = (char)tolower((unsigned char)name[i]);
	lower[n] = 0;
	org = psl_registrable_domain(psl, lower);
	if (org && strlen(org) < len)
		snprintf(out, len, "%s", org);
	return out;
}
