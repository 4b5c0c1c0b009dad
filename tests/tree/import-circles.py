#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""No import circles in greygate's tree (issue 30): a module is a file
without its extension (foo.c and foo.h are one; foo-int.h is foo's
private half), an edge is an #include "..." of a header in the tree
(the including file's folder first, then any; folders walked whole), and
no two modules may reach each other; nor may two folders (each of
greygated's services has one: daemon/decide, daemon/child, ...). Prints
each circle found and fails; run by meson as the unit test
'import-circles'."""
import os
import re
import sys

from circles import circles

FOLDERS = ["common", "daemon", "nft", "policy", "sensor", "store", "tarpit", "tools"]


def module(path):
    stem = path.rsplit(".", 1)[0]
    return stem[:-4] if stem.endswith("-int") else stem


def edges_of(top):
    by_name = {}
    for top_folder in FOLDERS:
        for here, _, files in sorted(os.walk(os.path.join(top, top_folder))):
            d = os.path.relpath(here, top)
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    by_name.setdefault(f, []).append(f"{d}/{f}")
    edges = {}
    for paths in by_name.values():
        for path in paths:
            d = os.path.dirname(path)
            with open(os.path.join(top, path), encoding="utf-8") as f:
                text = f.read()
            for inc in re.findall(r'#include "([^"]+)"', text):
                here = f"{d}/{inc}"
                target = here if os.path.exists(os.path.join(top, here)) else (by_name.get(inc) or [None])[0]
                if target and module(target) != module(path):
                    edges.setdefault(module(path), set()).add(module(target))
    return edges


def folder_edges(edges):
    """The same edges between folders (a service's folder is one)."""
    folders = {}
    for a, targets in edges.items():
        for b in targets:
            fa, fb = os.path.dirname(a), os.path.dirname(b)
            if fa != fb:
                folders.setdefault(fa, set()).add(fb)
    return folders


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else "."
    edges = edges_of(top)
    found = circles(edges)
    for c in found:
        print("import circle: " + " <-> ".join(c))
    between = circles(folder_edges(edges))
    for c in between:
        print("import circle between folders: " + " <-> ".join(c))
    if not found and not between:
        print("no import circle, between files or folders")
    return 1 if found or between else 0


if __name__ == "__main__":
    sys.exit(main())
