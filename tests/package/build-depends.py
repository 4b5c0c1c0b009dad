#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Every library meson.build asks for (dependency('NAME')) comes from a
package debian/control's Build-Depends names: NAME.pc is in that package
or in one it depends on. dpkg-buildpackage checks Build-Depends only
against what the machine has, so a library left out of them (as
libhiredis-dev once was) builds here and fails on a clean builder. Run
by meson as the unit test 'build-depends' (with the tree's root)."""
import os
import re
import subprocess
import sys

# meson's own: not pkg-config files
BUILT_IN = {"dl", "threads"}


def wanted(top):
    names = {}
    for here, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not d.startswith((".", "build"))
                   and d not in ("subprojects", "packaging")]
        if "meson.build" not in files:
            continue
        path = os.path.join(here, "meson.build")
        with open(path) as f:
            for m in re.finditer(r"\bdependency\(\s*'([^']+)'", f.read()):
                if m.group(1) not in BUILT_IN:
                    names.setdefault(m.group(1), os.path.relpath(path, top))
    return names


def build_depends(top):
    with open(os.path.join(top, "debian", "control")) as f:
        text = f.read()
    m = re.search(r"^Build-Depends:(.*?)^\S", text, re.M | re.S)
    if not m:
        sys.exit("debian/control has no Build-Depends")
    packages = []
    for item in m.group(1).split(","):
        # the first of alternatives, without version or architecture
        name = item.split("|")[0].strip().split(" ")[0].split("(")[0]
        if name:
            packages.append(name)
    return packages


def query(fmt, package):
    r = subprocess.run(["dpkg-query", "-W", "-f", fmt, package],
                       capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def pc_files(package, arch):
    """The .pc files of package and of the packages it depends on."""
    out = {}
    for name in [package] + [d.split("|")[0].strip().split(" ")[0]
                             for d in (query("${Depends}", f"{package}:{arch}")
                                       or query("${Depends}", package)
                                       or "").split(",") if d.strip()]:
        name = name.split(":")[0]
        listing = subprocess.run(["dpkg", "-L", f"{name}:{arch}"],
                                 capture_output=True, text=True)
        if listing.returncode != 0:
            listing = subprocess.run(["dpkg", "-L", name],
                                     capture_output=True, text=True)
        for line in listing.stdout.splitlines():
            if line.endswith(".pc"):
                out[os.path.basename(line)[:-3]] = package
    return out


def main():
    top = sys.argv[1]
    arch = subprocess.run(["dpkg", "--print-architecture"],
                          capture_output=True, text=True).stdout.strip()
    provided = {}
    missing_here = []
    # (a virtual package, such as debhelper-compat, is some installed
    # package's Provides)
    virtual = set(re.findall(r"([a-z0-9][a-z0-9+.-]*)",
                             subprocess.run(["dpkg-query", "-W", "-f",
                                             "${Provides}\n"],
                                            capture_output=True,
                                            text=True).stdout))
    for package in build_depends(top):
        status = (query("${Status}", f"{package}:{arch}") or
                  query("${Status}", package) or "")
        if not status.endswith("installed") or "not-installed" in status:
            if package not in virtual:
                missing_here.append(package)
            continue
        provided.update(pc_files(package, arch))
    if missing_here:
        sys.exit("not installed here (scripts/deps installs them): " +
                 " ".join(missing_here))
    asked = wanted(top)
    bad = [f"{name} (asked in {where})" for name, where in
           sorted(asked.items()) if name not in provided]
    if bad:
        print("no Build-Depends of debian/control gives these pkg-config "
              "files:", ", ".join(bad))
        return 1
    print(f"ok: {len(asked)} libraries meson asks for, each from a "
          "package Build-Depends names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
