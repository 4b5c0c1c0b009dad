#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""nft/ keeps its tests (issue 58): at least 0.3 lines of tests/nft/ for
each line of nft/ (the kernel's side of greygate had 0.09 when the issue
was filed: its unit tests now build the table in a namespace of their
own). Prints the share; fails below it. Run by meson as the unit test
'test-share'."""
import os
import sys

LEAST = 0.3
PAIRS = [("nft", "tests/nft")]


def lines(top, folder):
    n = 0
    for here, _, files in os.walk(os.path.join(top, folder)):
        for f in files:
            if f.endswith((".c", ".h", ".sh", ".py")):
                with open(os.path.join(here, f), encoding="utf-8") as fh:
                    n += sum(1 for _ in fh)
    return n


def main(top):
    short = False
    for product, tests in PAIRS:
        p, t = lines(top, product), lines(top, tests)
        share = t / p if p else 0
        print(f"{product}/: {t} test lines for {p} ({share:.2f} a line)")
        if share < LEAST:
            print(f"{product}/: fewer than {LEAST} test lines a line")
            short = True
    return 1 if short else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
