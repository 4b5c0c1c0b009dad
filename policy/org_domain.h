/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A name's organizational domain (issue 56): its registrable domain by
 * the Public Suffix List, as DMARC relates names (RFC 7489 section 3.2),
 * read with libpsl's built-in list (Debian's publicsuffix, or a newer
 * one libpsl finds). mail-yw1-f171.google.com and _netblocks.google.com
 * are both google.com's; a.example.co.uk is example.co.uk's. */
#ifndef GREYGATE_ORG_DOMAIN_H
#define GREYGATE_ORG_DOMAIN_H

#include <stddef.h>

/* The longest organizational domain written, with its NUL. */
#define ORG_DOMAIN_MAX 256

/*
 * org_domain - name's organizational domain, in lower case, into out
 * (len bytes, ORG_DOMAIN_MAX is enough): "" when it has none (a public
 * suffix itself, an empty or over-long name). A trailing dot is ignored.
 * Return: out.
 */
const char *org_domain(const char *name, char *out, size_t len);

#endif
