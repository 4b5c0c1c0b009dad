// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer target for the DNS reply reader (common/dns_answer.c): a
 * reply from the network, read as the answer to each type greygate asks
 * for; whatever it holds, the records kept are within their bounds and
 * the answer survives a copy into the cache and out of it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dns_answer.h"
#include "dns_cache.h"

static const enum dns_type types[] = {DNS_A, DNS_AAAA, DNS_PTR, DNS_MX,
                                      DNS_TXT};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct dns_cache *cache;
	struct dns_answer a;

	if (!cache)
		cache = dns_cache_new(64, 1 << 20);
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		if (dns_answer_read(data, size, types[t], 900, &a) < 0) {
			if (a.n != 0 || a.status != DNS_BAD)
				abort();
			continue;
		}
		if (a.n > DNS_RECORDS_MAX || (a.status == DNS_OK) != (a.n > 0))
			abort();
		for (size_t i = 0; i < a.n; i++) {
			const char *text = a.rec[i].text;

			if ((types[t] == DNS_A || types[t] == DNS_AAAA) != !text)
				abort();
			if (text && strlen(text) >= (types[t] == DNS_TXT
			                                     ? DNS_TXT_MAX
			                                     : DNS_NAME_MAX))
				abort();
		}
		if (dns_cache_put(cache, "fuzz.test", &a, 60, 0) == 0 &&
		    a.ttl && a.status != DNS_SERVFAIL) {
			const struct dns_answer *kept =
			        dns_cache_get(cache, types[t], "fuzz.test", 1);

			if (!kept || kept->n != a.n)
				abort();
		}
		dns_answer_clear(&a);
	}
	return 0;
}
