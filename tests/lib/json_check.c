// SPDX-License-Identifier: GPL-2.0-or-later
/* JSON held to Python asserts (see json_check.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "json_check.h"

void
json_check(const char *json, const char *asserts)
{
	char path[] = "/tmp/gg-json-XXXXXX", script[] = "/tmp/gg-py-XXXXXX";
	char cmd[128];
	FILE *f;
	int fd;

	CHECK((fd = mkstemp(path)) >= 0);
	CHECK((f = fdopen(fd, "w")));
	fputs(json, f);
	fclose(f);
	CHECK((fd = mkstemp(script)) >= 0);
	CHECK((f = fdopen(fd, "w")));
	fprintf(f, "import json, sys\nr = json.load(open(sys.argv[1]))\n%s\n",
	        asserts);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "python3 %s %s", script, path);
	if (system(cmd) != 0) {
		fprintf(stderr, "json: %.2000s\nasserts: %s\n", json, asserts);
		CHECK(false);
	}
	unlink(path);
	unlink(script);
}
