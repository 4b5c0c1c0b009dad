// SPDX-License-Identifier: GPL-2.0-or-later
/* A key's value written into the settings (config_set.h): text checked
 * against the key's kind, numbers, durations and sizes against its
 * range, each refusal with the words that say what is wanted. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "config_set.h"
#include "config_value.h"
#include "invariant.h"

/* Is every byte of text in the set allowed for the key's type? */
static bool
text_ok(enum key_type type, const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		switch (type) {
		case K_NAME:
			if (!isalnum(*p) && !strchr("_-.", *p))
				return false;
			break;
		case K_IFACE:
		case K_HOST:
		case K_PATH:
			if (!isgraph(*p))
				return false;
			break;
		default:
			if (!isprint(*p))
				return false;
		}
	}
	return true;
}

int
config_set_text(const struct key *k, char *dst, const char *v, const char **why)
{
	size_t len = strlen(v);

	*why = k->type == K_PATH    ? "want an absolute path"
	       : k->type == K_NAME  ? "want a name of letters, digits, '_', "
				      "'-' and '.'"
	       : k->type == K_IFACE ? "want an interface name, or any"
	       : k->type == K_HOST  ? "want a host name (no blanks)"
				    : "want printable text";
	if (len < k->min || !text_ok(k->type, v) ||
	    (k->type == K_PATH && v[0] != '/' && (v[0] || k->min)) ||
	    (k->type == K_NAME && !isalpha((unsigned char)v[0])) ||
	    (k->type == K_IFACE && len >= IFNAMSIZ))
		return -EINVAL;
	if (len >= k->size) {
		*why = "too long";
		return -ENAMETOOLONG;
	}
	memcpy(dst, v, len + 1);
	return 0;
}

int
config_set_number(const struct key *k, void *dst, const char *v, const char **why)
{
	unsigned long long n = 0;
	int r;

	switch (k->type) {
	case K_SEC: {
		uint32_t sec = 0;

		*why = "want a duration: seconds, or a number with s, m, h or d";
		r = config_parse_duration(v, &sec);
		n = sec;
		break;
	}
	case K_MS:
		*why = "want a duration: ms, or seconds, or a number with s, m, "
		       "h or d";
		r = config_parse_ms(v, &n);
		break;
	case K_BYTES:
		*why = "want a size: bytes, or a number with k or m";
		r = config_parse_bytes(v, &n);
		break;
	default:
		*why = "want a whole number (decimal digits)";
		r = config_parse_decimal(v, strlen(v), UINT64_MAX, &n);
	}
	if (r == -EINVAL)
		return r;
	if (r < 0 || n < k->min || n > k->max) {
		static char range[96];

		/* Durations and sizes name their range in their own units. */
		if (k->type == K_SEC)
			snprintf(range, sizeof(range),
				 "out of range (%" PRIu64 "s to %" PRIu64 "s)",
				 k->min, k->max);
		else if (k->type == K_MS)
			snprintf(range, sizeof(range),
				 "out of range (%" PRIu64 "ms to %" PRIu64 "s)",
				 k->min, k->max / 1000);
		else if (k->type == K_BYTES)
			snprintf(range, sizeof(range),
				 "out of range (%" PRIu64 "k to %" PRIu64 "m)",
				 k->min >> 10, k->max >> 20);
		else
			snprintf(range, sizeof(range),
				 "out of range (%" PRIu64 " to %" PRIu64 ")",
				 k->min, k->max);
		*why = range;
		return -ERANGE;
	}
	switch (k->size) {
	case 1:
		*(uint8_t *)dst = (uint8_t)n;
		break;
	case 2:
		*(uint16_t *)dst = (uint16_t)n;
		break;
	case 4:
		*(uint32_t *)dst = (uint32_t)n;
		break;
	default:
		UNREACHABLE("a number key of a size other than 1, 2 or 4");
	}
	return 0;
}
