#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""No source file of greygated's services is over 700 lines (issue 30:
daemon/ split by service, "no file over ~700 lines"). Prints each one
over and fails; run by meson as the unit test 'file-lengths'. (metrics.c
once grew to 704 unseen.)"""
import os
import sys

MOST = 700


def main(top):
    over = []
    for here, _, files in sorted(os.walk(os.path.join(top, "daemon"))):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                path = os.path.join(here, f)
                with open(path, encoding="utf-8") as src:
                    n = sum(1 for _ in src)
                if n > MOST:
                    over.append((n, os.path.relpath(path, top)))
    for n, path in over:
        print(f"{path}: {n} lines, more than {MOST}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
