// SPDX-License-Identifier: GPL-2.0-or-later
/* Whether a HELO name has the form RFC 5321 asks for (helo_shape.h). */
#include <arpa/inet.h>
#include <ctype.h>
#include <string.h>

#include "helo_shape.h"

/* [192.0.2.1] or [IPv6:2001:db8::1], whole. */
static bool
address_literal(const char *helo)
{
	size_t n = strlen(helo);
	char inner[64];
	unsigned char buf[16];

	if (n < 3 || helo[0] != '[' || helo[n - 1] != ']' ||
	    n - 2 >= sizeof(inner))
		return false;
	memcpy(inner, helo + 1, n - 2);
	inner[n - 2] = 0;
	if (!strncasecmp(inner, "IPv6:", 5))
		return inet_pton(AF_INET6, inner + 5, buf) == 1;
	return inet_pton(AF_INET, inner, buf) == 1;
}

bool
helo_shape_valid(const char *helo)
{
	size_t len, labels = 0, label = 0;
	bool digits_only = true;

	if (!helo || !helo[0])
		return false;
	if (helo[0] == '[')
		return address_literal(helo);
	len = strlen(helo);
	if (helo[len - 1] == '.')
		len--;
	if (!len || len > 253)
		return false;
	for (size_t i = 0; i <= len; i++) {
		char c = i < len ? helo[i] : '.';

		if (c == '.') {
			/* (an empty label, or one that starts or ends with a
			 * hyphen) */
			if (!label || helo[i - label] == '-' ||
			    helo[i - 1] == '-' || label > 63)
				return false;
			labels++;
			/* the last label so far: an all-digit one ends an
			 * address written without brackets */
			digits_only = true;
			for (size_t k = i - label; k < i; k++)
				if (!isdigit((unsigned char)helo[k]))
					digits_only = false;
			label = 0;
			continue;
		}
		if (!isalnum((unsigned char)c) && c != '-')
			return false;
		label++;
	}
	return labels >= 2 && !digits_only;
}
