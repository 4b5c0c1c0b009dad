#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""No product source file is over 700 lines (issue 30: daemon/ split by
service, "no file over ~700 lines"; issue 58: every product folder).
Prints each one over and fails; run by meson as the unit test
'file-lengths'. (metrics.c once grew to 704 unseen.) A file named in
WAITING is over for a reason the issue that splits it gives, and fails
once it is within the bound (then take it out)."""
import os
import sys

MOST = 700
FOLDERS = ("common", "daemon", "nft", "policy", "sensor", "store", "tarpit", "tools")
# (empty since 2026-12-08: tarpit/server.c split by the session's
# phases, issue 58)
WAITING = {}


def main(top):
    over, stale = [], []
    for folder in FOLDERS:
        for here, _, files in sorted(os.walk(os.path.join(top, folder))):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(here, f)
                rel = os.path.relpath(path, top)
                with open(path, encoding="utf-8") as src:
                    n = sum(1 for _ in src)
                if n > MOST and rel not in WAITING:
                    over.append((n, rel))
                elif n <= MOST and rel in WAITING:
                    stale.append(rel)
    for n, path in over:
        print(f"{path}: {n} lines, more than {MOST}")
    for path in stale:
        print(f"{path}: within {MOST} lines now: take it out of WAITING")
    for path, why in WAITING.items():
        print(f"(waiting: {path}, {why})")
    return 1 if over or stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
