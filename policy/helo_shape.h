/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The shape of a client's HELO name, a signal of issue 31 (as the
 * article's server checked it): RFC 5321 asks for the client's
 * fully-qualified domain name or, failing one, an address literal. A
 * real MTA says one of those; a bot often says a bare word, its own
 * address without brackets, or nothing a resolver could read. No DNS is
 * asked: only the form. */
#ifndef GREYGATE_HELO_SHAPE_H
#define GREYGATE_HELO_SHAPE_H

#include <stdbool.h>

/*
 * helo_shape_valid - is helo a fully-qualified name (two labels or more,
 * letters, digits and hyphens, no label starting or ending with a
 * hyphen, a trailing dot allowed, the last label not all digits) or an
 * address literal ([192.0.2.1], [IPv6:2001:db8::1])? "" is not.
 */
bool helo_shape_valid(const char *helo);

#endif
