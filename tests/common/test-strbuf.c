// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the string builder (common/strbuf.c): pieces joined; what does
 * not fit cut, the NUL kept, nothing written past the buffer; cut said. */
#include <string.h>

#include "check.h"
#include "strbuf.h"

static void
test_joined_and_cut(void)
{
	char buf[12];
	struct strbuf b;

	memset(buf, 'x', sizeof(buf));
	strbuf_init(&b, buf, 8);
	CHECK_STR(buf, "");
	strbuf_add(&b, "%s:%d", "ab", 12);
	CHECK_STR(buf, "ab:12");
	CHECK_INT(b.len, 5);
	CHECK(!b.cut);
	strbuf_add(&b, ";%s", "long");
	CHECK_STR(buf, "ab:12;l"); /* 7 bytes and the NUL */
	CHECK_INT(b.len, 7);
	CHECK(b.cut);
	strbuf_add(&b, "more");
	CHECK_STR(buf, "ab:12;l");
	/* nothing past the 8 it was given */
	CHECK(buf[8] == 'x' && buf[11] == 'x');
	strbuf_init(&b, buf, 1);
	strbuf_add(&b, "a");
	CHECK_STR(buf, "");
	CHECK(b.cut);
	/* on after a text already there */
	strcpy(buf, "zen");
	strbuf_continue(&b, buf, sizeof(buf));
	strbuf_add(&b, ",%s", "bl");
	CHECK_STR(buf, "zen,bl");
	CHECK_INT(b.len, 6);
}

int
main(void)
{
	RUN(test_joined_and_cut);
	return 0;
}
