#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Makes greygate.conf(5) from the example configuration an admin copies
(etc/greygate.conf) and greygated's own table of keys (greygated --keys),
so the manual page, the example and the program cannot drift: a key the
program has and the example lacks, or the other way round, stops the
build.

The example's shape is what this reads: a header comment, then sections;
in each, groups of a comment (the description) followed by one or more
keys, "key = default" or, for a key with no fixed default, a commented
"#key = example". Comment lines indented by two blanks or more (after
"# ") are kept as a literal display (tables of values, commands).

usage: conf-to-man.py EXAMPLE KEYS-FILE OUTPUT DATE
"""
import re
import sys

KEY = re.compile(r"^(#?)([a-z][a-z0-9_]*) = ?(.*)$")
SECTION = re.compile(r"^\[([a-z]+)\]$")


def escape(text):
    """Text safe in a roff line: backslashes, and a leading dot or quote."""
    text = text.replace("\\", "\\e")
    if text[:1] in (".", "'"):
        text = "\\&" + text
    return text


def parse(path):
    intro, sections = [], []
    comment, group = [], None
    section = None
    for raw in open(path, encoding="utf-8"):
        line = raw.rstrip("\n")
        m_sec = SECTION.match(line)
        m_key = KEY.match(line)
        if m_sec:
            section = {"name": m_sec.group(1), "groups": []}
            sections.append(section)
            comment, group = [], None
        elif m_key and section is not None:
            if group is None:
                group = {"text": comment, "keys": []}
                section["groups"].append(group)
                comment = []
            group["keys"].append(
                (m_key.group(2), m_key.group(3), m_key.group(1) == "#"))
        elif line.startswith("#"):
            text = line[2:] if line.startswith("# ") else line[1:]
            if section is None:
                intro.append(text)
            else:
                group = None
                comment.append(text)
        elif not line.strip():
            group = None
    return intro, sections


def prose(words, out):
    """Running text, one sentence a line (roff's rule for the spacing
    after a full stop)."""
    text = " ".join(words).strip()
    if text:
        out.extend(escape(s) for s in re.split(r"(?<=[.!?])\s+", text))


def paragraphs(lines, out):
    """Comment lines as text; runs indented by 2+ blanks as displays."""
    words = []
    literal = False
    for text in lines:
        is_literal = text.startswith("  ")
        if is_literal and not literal:
            prose(words, out)
            words = []
            out.append(".Bd -literal -offset indent")
        elif literal and not is_literal:
            out.append(".Ed")
        literal = is_literal
        if literal:
            out.append(escape(text.rstrip()))
        elif not text.strip():
            prose(words, out)
            words = []
            out.append(".Pp")
        else:
            words.append(text.strip())
    prose(words, out)
    if literal:
        out.append(".Ed")


def main():
    example, keys_file, output, date = sys.argv[1:5]
    program = {}
    for line in open(keys_file, encoding="utf-8"):
        sec, key, when = line.split()
        program[(sec, key)] = when
    intro, sections = parse(example)
    seen = {(s["name"], k[0]) for s in sections for g in s["groups"]
            for k in g["keys"]}
    missing = sorted(set(program) - seen)
    unknown = sorted(seen - set(program))
    if missing or unknown:
        for sec, key in missing:
            print("%s: [%s] %s is a key of greygated's but is not in the "
                  "example" % (example, sec, key), file=sys.stderr)
        for sec, key in unknown:
            print("%s: [%s] %s is in the example but greygated has no such "
                  "key" % (example, sec, key), file=sys.stderr)
        sys.exit(1)

    out = [
        '.\\" SPDX-License-Identifier: GPL-2.0-or-later',
        '.\\" Made by man/conf-to-man.py from etc/greygate.conf: edit those.',
        ".Dd " + date,
        ".Dt GREYGATE.CONF 5",
        ".Os",
        ".Sh NAME",
        ".Nm greygate.conf",
        ".Nd configuration of the greygate greylisting gateway",
        ".Sh DESCRIPTION",
        ".Xr greygated 8",
        "reads",
        ".Pa /etc/greygate/greygate.conf ,",
        "an INI file, at start and on",
        ".Dv SIGHUP",
        "(or",
        ".Ic greygatectl reload ) .",
    ]
    # The example's header, without the file's own name in front.
    intro[0] = re.sub(r"^greygate\.conf\s+\S+\s+[^.]*\.\s*", "", intro[0])
    paragraphs(intro, out)
    out += [
        ".Pp",
        "Each key below shows its default; a key shown as an example",
        "has none.",
        "A key marked",
        ".Sy restart",
        "keeps its old value on a reload (the log says so) until",
        ".Nm greygated",
        "restarts; the others take effect on a reload.",
        "The example file, with the same text, is installed as",
        ".Pa /usr/share/greygate/greygate.conf .",
    ]
    for section in sections:
        out += [".Ss [" + section["name"] + "]", ".Bl -tag -width Ds"]
        for group in section["groups"]:
            for key, value, example_only in group["keys"]:
                when = program[(section["name"], key)]
                # Quoted: a value's words are never read as macros.
                out.append('.It Cm %s No = Ar "%s"' % (
                    key, escape(value).replace('"', "\\(dq")))
                tags = []
                if example_only:
                    tags.append("an example, not a default")
                tags.append("restart" if when == "restart" else "reload")
                out[-1] += " Pq " + escape(", ".join(tags))
            paragraphs(group["text"], out)
        out.append(".El")
    out += [
        ".Sh FILES",
        ".Bl -tag -width Ds",
        ".It Pa /etc/greygate/greygate.conf",
        "this file",
        ".It Pa /etc/greygate/allow.d/",
        "allow lists (",
        ".Cm allow_dir )",
        ".It Pa /var/lib/greygate/",
        "the greylist store (",
        ".Cm store_dir )",
        ".El",
        ".Sh SEE ALSO",
        ".Xr greygate-provider-banks 8 ,",
        ".Xr greygatectl 8 ,",
        ".Xr greygated 8 ,",
        ".Xr nft 8",
    ]
    with open(output, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


main()
