/* SPDX-License-Identifier: GPL-2.0-or-later */
/* JSON a test made, read back by a real parser (python3's json) and held
 * to asserts written in Python over it. */
#ifndef GREYGATE_TEST_JSON_CHECK_H
#define GREYGATE_TEST_JSON_CHECK_H

/* json_check - json parses, and the Python asserts hold with it as r
 * (e.g. "assert r[\"funnel\"][\"attempts\"]==5, r"); else the test
 * fails. */
void json_check(const char *json, const char *asserts);

#endif
