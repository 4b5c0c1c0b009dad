/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Numbers and addresses as text, without stdio: greygate-sniff prints
 * several per event, and glibc's inet_ntop formats each byte with sprintf,
 * which was a quarter of the sniffer's instructions. */
#ifndef GREYGATE_FMT_H
#define GREYGATE_FMT_H

#include <stdint.h>

/* Longest text: "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255" + NUL. */
#define FMT_IP_MAX 46

/* fmt_ip - writes family's address (4 or 16 bytes at addr) to out (at least
 * FMT_IP_MAX bytes), NUL-terminated; returns its length, or 0 for a family
 * other than AF_INET and AF_INET6 (out is then ""). The text is
 * inet_ntop's (RFC 5952: lower case, the longest run of two or more zero
 * groups as "::", the first of equal runs; ::ffff:a.b.c.d for
 * IPv4-mapped addresses). */
unsigned fmt_ip(int family, const uint8_t *addr, char *out);

/* Longest decimal text of a 64-bit number. */
#define FMT_UINT_MAX 20

/* fmt_uint - v in decimal at p (room for FMT_UINT_MAX), not terminated;
 * returns the end. */
char *fmt_uint(char *p, uint64_t v);

/* fmt_uint_pad - the same, with leading zeros to width digits (at most
 * FMT_UINT_MAX). */
char *fmt_uint_pad(char *p, uint64_t v, unsigned width);

/* Room for "2026-12-04T01:42:26Z" or a 64-bit number, with the NUL. */
#define FMT_UTC_MAX 32

/* fmt_utc - t (seconds since the epoch) as ISO 8601 in UTC into buf
 * (FMT_UTC_MAX bytes), or as the number if it cannot be; returns buf. */
const char *fmt_utc(int64_t t, char *buf);

#endif
