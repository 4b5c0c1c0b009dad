#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""No import circles in greygate's tree (issue 30): a module is a file
without its extension (foo.c and foo.h are one; foo-int.h is foo's
private half), an edge is an #include "..." of a header in the tree
(the including file's folder first, then any), and no two modules may
reach each other. Prints each circle found and fails; run by meson as
the unit test 'import-circles'."""
import os
import re
import sys

FOLDERS = ["common", "daemon", "nft", "policy", "sensor", "tarpit", "tools"]


def module(path):
    stem = path.rsplit(".", 1)[0]
    return stem[:-4] if stem.endswith("-int") else stem


def edges_of(top):
    by_name = {}
    for d in FOLDERS:
        for f in sorted(os.listdir(os.path.join(top, d))):
            if f.endswith((".c", ".h")):
                by_name.setdefault(f, []).append(f"{d}/{f}")
    edges = {}
    for paths in by_name.values():
        for path in paths:
            d = path.split("/")[0]
            with open(os.path.join(top, path), encoding="utf-8") as f:
                text = f.read()
            for inc in re.findall(r'#include "([^"]+)"', text):
                here = f"{d}/{inc}"
                target = here if os.path.exists(os.path.join(top, here)) else (by_name.get(inc) or [None])[0]
                if target and module(target) != module(path):
                    edges.setdefault(module(path), set()).add(module(target))
    return edges


def circles(edges):
    """Tarjan's strongly connected components of more than one module."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else "."
    found = circles(edges_of(top))
    for c in found:
        print("import circle: " + " <-> ".join(c))
    if not found:
        print("no import circle")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
