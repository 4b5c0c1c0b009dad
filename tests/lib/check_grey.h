/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Test helpers over the greylist's types. */
#ifndef GREYGATE_CHECK_GREY_H
#define GREYGATE_CHECK_GREY_H

#include "check.h"
#include "policy.h"
#include "store.h"

/* net - a client key from its CIDR text ("198.51.100.0/24"), checked. */
static inline struct grey_client
net(const char *cidr)
{
	struct grey_client c;

	CHECK_INT(grey_cidr_parse(cidr, &c), 0);
	return c;
}

#endif
