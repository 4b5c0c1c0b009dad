#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""greygated's root stays small (issue 30): struct gateway in
daemon/gateway.c holds at most 16 fields, each a pointer (a service's
handle, or the settings), none of them state of its own. Prints what it
found and fails otherwise; run by meson as the unit test
'root-handles'. (A sixteenth handle once came in unseen; the sixteenth
now is the DNS signals, issue 56: the root's service, lent to the child's
supervisor and the policy door, which owned it before.)"""
import re
import sys

MOST = 16


def fields(source):
    body = re.search(r"^struct gateway \{\n(.*?)^\};", source, re.S | re.M)
    if not body:
        sys.exit("daemon/gateway.c: no struct gateway")
    text = re.sub(r"/\*.*?\*/", "", body.group(1), flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return [" ".join(d.split()) for d in text.split(";") if d.strip()]


def main(top):
    with open(f"{top}/daemon/gateway.c", encoding="utf-8") as f:
        found = fields(f.read())
    bad = [d for d in found if not re.fullmatch(r"(const )?struct \w+ \*\w+", d)]
    for d in bad:
        print(f"not a handle: {d}")
    if len(found) > MOST:
        print(f"struct gateway has {len(found)} fields, more than {MOST}:")
        for d in found:
            print(f"  {d}")
    if bad or len(found) > MOST:
        return 1
    print(f"struct gateway: {len(found)} handles")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
