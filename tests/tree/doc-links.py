#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The docs' links hold (issue 59): every relative link of README.md and
docs/*.md, [text](path) or [text](path#anchor), names a file of the tree
and, with an anchor, one of its headings (as GitHub makes an anchor of
a heading: lower case, punctuation dropped, spaces as hyphens); and
every guide in docs/ is linked from the README. Prints each broken link
and fails; run by meson as the unit test 'doc-links'."""
import os
import re
import sys

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def anchors(path):
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"```.*?```", "", f.read(), flags=re.S)
    out = set()
    for h in re.findall(r"^#+ (.+)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
        out.add(slug)
    return out


def main(top):
    pages = ["README.md"] + sorted(
        os.path.join("docs", f) for f in os.listdir(os.path.join(top, "docs"))
        if f.endswith(".md"))
    broken = []
    linked = set()
    for page in pages:
        with open(os.path.join(top, page), encoding="utf-8") as f:
            text = f.read()
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue  # (a URL: not this tree's)
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(top, os.path.dirname(page), path)) if path else os.path.join(top, page)
            if page == "README.md":
                linked.add(os.path.relpath(full, top))
            if not os.path.exists(full):
                broken.append(f"{page}: {target}: no such file")
            elif anchor and anchor not in anchors(full):
                broken.append(f"{page}: {target}: no such heading")
    for page in pages[1:]:
        if page not in linked:
            broken.append(f"README.md: does not link {page}")
    for b in broken:
        print(b)
    print(f"{len(pages)} pages read, {len(broken)} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
