/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Address ranges [lo, hi] of one family: what an allow list becomes once
 * overlapping and adjacent entries are merged, what the kernel's interval
 * sets hold, and what a lookup searches. A CIDR is a range; a merged range
 * need not be one. */
#ifndef GREYGATE_IPRANGE_H
#define GREYGATE_IPRANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ip_range {
	uint8_t family; /* AF_INET or AF_INET6 */
	uint8_t lo[16]; /* first address, network order (IPv4: 4 bytes) */
	uint8_t hi[16]; /* last address, included */
};

/* Longest text: two IPv6 addresses and a '-'. */
#define IP_RANGE_TEXT_MAX 96

/* ip_range_of_prefix - the range of addr/prefix (bits past prefix
 * ignored). */
void ip_range_of_prefix(int family, const uint8_t *addr, unsigned prefix,
                        struct ip_range *out);

/* ip_range_prefix - the prefix length if r is exactly one CIDR, else
 * -1. */
int ip_range_prefix(const struct ip_range *r);

/* ip_range_format - "198.51.100.0/24" when r is a CIDR, else
 * "198.51.100.7-198.51.100.20", into out (IP_RANGE_TEXT_MAX). Return:
 * out. */
char *ip_range_format(const struct ip_range *r, char *out);

/* ip_addr_cmp - memcmp of two addresses of family. */
int ip_addr_cmp(int family, const uint8_t *a, const uint8_t *b);

/* ip_addr_next - a + 1; false when a was the family's last address. */
bool ip_addr_next(int family, const uint8_t *a, uint8_t *out);

/* ip_range_find - the range of sorted (by family, then lo; not
 * overlapping) that holds addr, or NULL. O(log n). */
const struct ip_range *ip_range_find(const struct ip_range *sorted, size_t n,
                                     size_t stride, int family,
                                     const uint8_t *addr);

#endif
