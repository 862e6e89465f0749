#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""check-man-pages.py: fail when a verb or option of nervectl or nerved, or a member of the bus API,
is missing from its manual page.

Usage: tests/check-man-pages.py NERVECTL NERVED REPO_ROOT

What the programs accept is read from the programs themselves (verb_table.py: the verbs and
the options of each verb from `nervectl --help` and `nervectl VERB --help`, the options of nerved
from `nerved --help`).
What the pages say is read from man/*.scd:
  - nervectl.1: each verb is an entry "*verb* ..." at the start of a line under "# COMMANDS"; its
    options are defined inside that entry (up to the next verb) by an indented line that starts with
    "*--option*"; global options (and --help) are defined under "# OPTIONS";
  - nerved.8: each option is defined by a line that starts with "*--option*" under "# OPTIONS";
  - nerve-dbus.7: each method, signal and property of lib/bus/org.nerve.Lifecycle1.xml and each
    error of lib/base/errors.h is an entry "*Name*" (errors: "*org.nerve.Lifecycle1.Error.Name*").
Stale entries fail too: a verb, or an option of a verb, that the program does not have.
Exit 0 all documented; 1 a problem (one line each); 2 the inputs cannot be read.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from verb_table import ctl_verbs, die, help_text, option_lines  # noqa: E402


def sections(path):
    """'# TITLE' -> list of lines, of a scdoc page."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        die(str(e))
    out, current = {}, None
    for line in lines:
        if line.startswith("# "):
            current = line[2:].strip()
            out[current] = []
        elif current:
            out[current].append(line)
    return out


def documented_options(lines):
    """Options with a definition: a line that starts (after tabs) with "*--option*" or "*-h*, *--help*"."""
    found = set()
    for line in lines:
        m = re.match(r"^\t*(\*--?[a-zA-Z][a-z0-9-]*\*(?:, \*--?[a-zA-Z][a-z0-9-]*\*)*)", line)
        if m:
            found.update(re.findall(r"\*(--?[a-zA-Z][a-z0-9-]*)\*", m.group(1)))
    return found


def verb_entries(lines):
    """verb -> the lines of its entry under # COMMANDS (from '*verb*' to the next verb)."""
    entries, current = {}, None
    for line in lines:
        m = re.match(r"^\*([a-z][a-z0-9-]*)\*", line)
        if m:
            current = m.group(1)
            entries[current] = []
        if current:
            entries[current].append(line)
    return entries


def check_nervectl(nervectl, root, problems):
    verbs, global_opts = ctl_verbs(nervectl)
    page = sections(f"{root}/man/nervectl.1.scd")
    entries = verb_entries(page.get("COMMANDS", []))
    global_doc = documented_options(page.get("OPTIONS", []))
    for opt in sorted(global_opts | {"--help"}):
        if opt not in global_doc:
            problems.append(f"nervectl.1: option {opt} (nervectl --help) is not under # OPTIONS")
    for verb, opts in sorted(verbs.items()):
        if verb not in entries:
            problems.append(f"nervectl.1: verb '{verb}' (nervectl --help) has no '*{verb}*' entry under # COMMANDS")
            continue
        doc = documented_options(entries[verb])
        for opt in sorted(opts):
            if opt not in doc and not (opt == "--help" and opt in global_doc):
                problems.append(f"nervectl.1: option {opt} of verb '{verb}' is not in its entry")
        for opt in sorted(doc - opts):
            problems.append(f"nervectl.1: stale: verb '{verb}' has no option {opt}")
    for verb in sorted(set(entries) - set(verbs)):
        problems.append(f"nervectl.1: stale: '{verb}' is documented under # COMMANDS but is not a verb of nervectl")
    return len(verbs), sum(len(o) for o in verbs.values())


def check_nerved(nerved, root, problems):
    opts = option_lines(help_text([nerved])) | {"--help"}
    doc = documented_options(sections(f"{root}/man/nerved.8.scd").get("OPTIONS", []))
    for opt in sorted(opts - doc):
        problems.append(f"nerved.8: option {opt} (nerved --help) is not under # OPTIONS")
    return len(opts)


def check_bus(root, problems):
    try:
        tree = ET.parse(f"{root}/lib/bus/org.nerve.Lifecycle1.xml")
        with open(f"{root}/lib/base/errors.h", encoding="utf-8") as f:
            errors = sorted(set(re.findall(r"org\.nerve\.Lifecycle1\.Error\.([A-Za-z]\w*)", f.read())))
        with open(f"{root}/man/nerve-dbus.7.scd", encoding="utf-8") as f:
            entries = set(re.findall(r"^\*([\w.]+)\*", f.read(), re.M))
    except (OSError, ET.ParseError) as e:
        die(str(e))
    members = [(k, el.get("name")) for iface in tree.getroot().iter("interface")
               for k in ("method", "signal", "property") for el in iface.findall(k)]
    for kind, name in members:
        if name not in entries:
            problems.append(f"nerve-dbus.7: {kind} {name} has no '*{name}*' entry")
    for name in errors:
        if f"org.nerve.Lifecycle1.Error.{name}" not in entries:
            problems.append(f"nerve-dbus.7: error org.nerve.Lifecycle1.Error.{name} has no entry")
    return len(members), len(errors)


def main():
    if len(sys.argv) != 4:
        die("usage: check-man-pages.py NERVECTL NERVED REPO_ROOT")
    nervectl, nerved, root = sys.argv[1:]
    problems = []
    verbs, verb_opts = check_nervectl(nervectl, root, problems)
    nerved_opts = check_nerved(nerved, root, problems)
    members, errors = check_bus(root, problems)
    for p in problems:
        print(f"man-pages: {p}")
    if problems:
        print(f"man-pages: FAILED: {len(problems)} problem(s)")
        return 1
    print(f"man-pages: nervectl {verbs} verbs with {verb_opts} options, nerved {nerved_opts} options, "
          f"bus {members} members and {errors} errors documented")
    return 0


if __name__ == "__main__":
    sys.exit(main())
