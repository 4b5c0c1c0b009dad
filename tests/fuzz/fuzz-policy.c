// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer target for the policy door's requests: any bytes a client of
 * the door sends, read as a connection reads them (request after request
 * from one buffer), each request's attributes made into an answer as the
 * door would. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy_proto.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	char out[POLICY_ANSWER_MAX];
	size_t pos = 0;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	while (pos < size) {
		struct policy_request req;
		struct policy_answer a = {0};
		ssize_t n = policy_request_parse(buf + pos, size - pos, &req);

		if (n <= 0)
			break;
		pos += (size_t)n;
		a.verdict = (enum policy_verdict)(size % 3);
		a.text_template = req.helo_name ? req.helo_name : "%s %r %";
		a.recipient = req.recipient;
		a.etrn_domain = req.etrn_domain != NULL;
		a.host = req.client_name;
		a.version = req.sender;
		a.wait_sec = (uint32_t)n;
		if (policy_answer_format(&a, out) >= POLICY_ANSWER_MAX ||
		    memchr(out, '\n', strlen(out)) != out + strlen(out) - 2)
			abort();
	}
	free(buf);
	return 0;
}
