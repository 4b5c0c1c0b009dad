#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""No call circles between greygate's modules (issue 58): where
import-circles sees only the #includes, this sees the calls. A module is
a .c file without its extension, or the parts of one that share its
private header (foo.c, and each file of its folder that includes
"foo-int.h"); an edge is a call from a module to a function another
defines (not static); no two modules may reach each other. A circle
named in WAITING is one an issue undoes, with its reason; the test fails
on any other, and on a WAITING entry no longer a circle. Prints what it
found; run by meson as the unit test 'call-circles'."""
import os
import re
import sys

from circles import circles

FOLDERS = ["common", "daemon", "nft", "policy", "sensor", "store", "tarpit", "tools"]
# (empty since 2026-12-08: the tarpit's session is handed from phase to
# phase, issue 58, and its base calls none of them)
WAITING = {}
# Files built instead of others (never with them): their functions are
# the others' names.
ALTERNATIVES = {
    "daemon/left_out.c",       # the small build's stand-ins
    "common/pattern_posix.c",  # PCRE2's stand-in
}
KEYWORDS = {"main", "if", "for", "while", "switch", "return", "sizeof", "do",
            "defined", "offsetof", "__attribute__", "_Static_assert"}


def sources(top):
    for folder in FOLDERS:
        for here, _, files in sorted(os.walk(os.path.join(top, folder))):
            for f in sorted(files):
                path = os.path.relpath(os.path.join(here, f), top)
                if f.endswith(".c") and path not in ALTERNATIVES:
                    yield path


def module_of(top, path, text):
    d = os.path.dirname(path)
    for inc in re.findall(r'#include "([\w.]+)-int\.h"', text):
        if os.path.exists(os.path.join(top, d, inc + ".c")):
            return f"{d}/{inc}"
    return path[:-2]


def strip(text):
    """Comments and literals out, in one pass from the left (a '"' or a
    quote inside a comment must not start a literal)."""
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|'
                  r"'(?:\\.|[^'\\\n])*'",
                  lambda m: " " if m.group(0)[0] == "/" else '""',
                  text, flags=re.S)


def graph(top):
    defined, calls, modules = {}, {}, {}
    for path in sources(top):
        with open(os.path.join(top, path), encoding="utf-8") as f:
            text = f.read()
        m = module_of(top, path, text)
        modules[path] = m
        body = strip(text)
        # a definition: a name at the start of a line, its type on the
        # line before (kernel style), not static
        for prev, name in re.findall(r"^([^\n]*)\n(\w+)\([^;{]*\)\s*\{",
                                     body, re.M):
            if "static" not in prev and not prev.startswith("#"):
                defined.setdefault(name, set()).add(m)
        calls.setdefault(m, set()).update(
            n for n in re.findall(r"\b(\w+)\s*\(", body) if n not in KEYWORDS)
    edges = {}
    for m, names in calls.items():
        for n in names:
            targets = defined.get(n, set())
            for target in targets:
                if m not in targets:
                    edges.setdefault(m, set()).add(target)
    return edges


def main(top):
    found = [frozenset(c) for c in circles(graph(top))]
    bad = [c for c in found if c not in WAITING]
    gone = [c for c in WAITING if c not in found]
    for c in bad:
        print("call circle: " + " <-> ".join(sorted(c)))
    for c in gone:
        print("no longer a circle, take it out of WAITING: " +
              " <-> ".join(sorted(c)))
    for c, why in WAITING.items():
        if c in found:
            print(f"(waiting: {' <-> '.join(sorted(c))}, {why})")
    if bad or gone:
        return 1
    print(f"no call circles but {len(found)} waiting")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
