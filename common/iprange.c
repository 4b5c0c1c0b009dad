// SPDX-License-Identifier: GPL-2.0-or-later
/* Address ranges (see iprange.h). */
#include "iprange.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static size_t
addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

int
ip_addr_cmp(int family, const uint8_t *a, const uint8_t *b)
{
	return memcmp(a, b, addr_len(family));
}

bool
ip_addr_next(int family, const uint8_t *a, uint8_t *out)
{
	size_t n = addr_len(family);

	memcpy(out, a, n);
	for (size_t i = n; i-- > 0;)
		if (++out[i] != 0)
			return true;
	return false;
}

void
ip_range_of_prefix(int family, const uint8_t *addr, unsigned prefix,
                   struct ip_range *out)
{
	size_t n = addr_len(family);
	unsigned bits = (unsigned)n * 8;

	if (prefix > bits)
		prefix = bits;
	memset(out, 0, sizeof(*out));
	out->family = (uint8_t)family;
	for (size_t i = 0; i < n; i++) {
		unsigned keep = prefix >= (i + 1) * 8 ? 8
		                : prefix > i * 8      ? prefix - (unsigned)i * 8
		                                      : 0;
		uint8_t mask = (uint8_t)(0xff00 >> keep);

		out->lo[i] = addr[i] & mask;
		out->hi[i] = (uint8_t)(addr[i] | (uint8_t)~mask);
	}
}

int
ip_range_prefix(const struct ip_range *r)
{
	size_t n = addr_len(r->family);
	unsigned prefix = 0;
	size_t i = 0;

	/* lo and hi agree on the prefix, then lo is all zeros and hi all
	 * ones to the end. */
	for (; i < n && r->lo[i] == r->hi[i]; i++)
		prefix += 8;
	if (i < n) {
		unsigned diff = (unsigned)(r->lo[i] ^ r->hi[i]);

		/* Where they part, the low bits only: 0b00000111. */
		if ((diff & (diff + 1)) || (r->lo[i] & diff) ||
		    (r->hi[i] & diff) != diff)
			return -1;
		prefix += 8 - (unsigned)__builtin_popcount(diff);
		for (i++; i < n; i++)
			if (r->lo[i] != 0 || r->hi[i] != 0xff)
				return -1;
	}
	return (int)prefix;
}

char *
ip_range_format(const struct ip_range *r, char *out)
{
	char lo[INET6_ADDRSTRLEN], hi[INET6_ADDRSTRLEN];
	int prefix = ip_range_prefix(r);

	inet_ntop(r->family, r->lo, lo, sizeof(lo));
	if (prefix >= 0) {
		snprintf(out, IP_RANGE_TEXT_MAX, "%s/%d", lo, prefix);
		return out;
	}
	inet_ntop(r->family, r->hi, hi, sizeof(hi));
	snprintf(out, IP_RANGE_TEXT_MAX, "%s-%s", lo, hi);
	return out;
}

const struct ip_range *
ip_range_find(const struct ip_range *sorted, size_t n, size_t stride,
              int family, const uint8_t *addr)
{
	const char *base = (const char *)sorted;
	size_t lo = 0, hi = n;

	/* The last range whose (family, lo) is at most (family, addr). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ip_range *r =
		        (const struct ip_range *)(base + mid * stride);

		if (r->family < family ||
		    (r->family == family &&
		     ip_addr_cmp(family, r->lo, addr) <= 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	sorted = (const struct ip_range *)(base + (lo - 1) * stride);
	if (sorted->family != family ||
	    ip_addr_cmp(family, addr, sorted->hi) > 0)
		return NULL;
	return sorted;
}
