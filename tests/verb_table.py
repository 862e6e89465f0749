#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""verb_table.py: the verbs and options of nervectl and nerved, as the programs print them.

Usage: tests/verb_table.py NERVECTL     prints one line per verb, "VERB --opt1 --opt2 ...", then a
                                        line "* --opt ..." with nervectl's own options.
Used by check-man-pages.py and check-completion.sh, so that both compare against the programs
themselves rather than against a copy of their verb table:
  - the verbs: the lines of the "Verbs:" section of `nervectl --help` (or, without one, its lines
    that start with two spaces and a lower-case word);
  - each verb's options: the option lines of `nervectl VERB --help` when that exits 0, else the
    --options of the verb's line in `nervectl --help` (its usage, before the summary);
  - a program's own options: the lines of its `--help` that start with spaces and an option
    (-h, --name).
"""
import re
import subprocess
import sys

OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])")
LONG_OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)(?![\w-])")


def die(msg):
    print(f"{sys.argv[0].rsplit('/', 1)[-1]}: error: {msg}", file=sys.stderr)
    sys.exit(2)


def run(argv):
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except OSError as e:
        die(f"cannot run {argv[0]}: {e}")
    return p.returncode, p.stdout + p.stderr


def help_text(argv):
    rc, out = run(argv + ["--help"])
    if rc != 0:
        die(f"'{' '.join(argv)} --help' exited {rc}:\n{out}")
    return out


def option_lines(text):
    """Options of the lines that start with spaces and an option: "  -h,--help  ...", "  --runs-dir DIR",
    "  --json[=MODE]  ..." (an optional value glued on with "=")."""
    found = set()
    for line in text.splitlines():
        m = re.match(r"^\s+(-[-\w, ]*?)(\[?=|\s{2,}|\s+[A-Z<]|$)", line)
        if m:
            found.update(o for o in OPTION.findall(m.group(1)) if o.startswith("--"))
    return found


def verb_lines(text):
    """(verb, rest of line) of `nervectl --help`: the lines of its "Verbs:" section (up to an empty
    line) if it has one, else every line that starts with two spaces and a lower-case word."""
    lines = text.splitlines()
    if "Verbs:" in lines:
        start = lines.index("Verbs:") + 1
        end = lines.index("", start) if "" in lines[start:] else len(lines)
        lines = lines[start:end]
    for line in lines:
        m = re.match(r"^  ([a-z][a-z0-9-]*)(?:\s|$)(.*)", line)
        if m and m.group(1) != "help":
            yield m.group(1), m.group(2)


def ctl_verbs(nervectl):
    """({verb: its --options}, nervectl's own --options)."""
    text = help_text([nervectl])
    verbs = {}
    for verb, rest in verb_lines(text):
        rc, own = run([nervectl, verb, "--help"])
        if rc == 0:
            verbs[verb] = option_lines(own)
        else:  # no VERB --help: the options of the usage on the verb's line, before the summary
            verbs[verb] = set(LONG_OPTION.findall(rest.split("  ")[0]))
    if not verbs:
        die(f"no verbs found in '{nervectl} --help':\n{text}")
    return verbs, option_lines(text)

if __name__ == "__main__":
    if len(sys.argv) != 2:
        die("usage: verb_table.py NERVECTL")
    verbs, own = ctl_verbs(sys.argv[1])
    for verb, opts in sorted(verbs.items()):
        print(" ".join([verb] + sorted(opts)))
    print(" ".join(["*"] + sorted(own)))
