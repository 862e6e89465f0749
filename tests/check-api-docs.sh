#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-api-docs.sh: fail when docs/dbus-api.md and the bus API disagree.
#
# Usage: tests/check-api-docs.sh [REPO_ROOT]      (default: the folder above this script)
#
# Reads every method, signal and property of every interface in lib/bus/org.nerve.Lifecycle1.xml and
# every error name in lib/base/errors.h (string constants "org.nerve.Lifecycle1.Error.X"), and checks
# docs/dbus-api.md:
#   - each member has a heading "### Name" (one per interface that defines the name);
#   - each error name appears in full somewhere on the page;
#   - no "### Name" member heading names a member the XML no longer has. A member heading is a "###"
#     heading whose text is one CamelCase word; headings of more words are free text and are not
#     checked. Headings inside ``` fences are ignored;
#   - no full error name on the page is missing from lib/base/errors.h;
#   - each member's section states its signature as the XML has it: "`Name(in s run, ..., out s x)`"
#     (with "(in `st`, out `ss`)" when given) for a method, "Signal `Name(s run, ...)` (signature
#     `s...`)" for a signal, "Property `Name`, type `s`" for a property;
#   - each method named in the "Returned by" column of the error table exists in the XML;
#   - each error named in an "Errors:" list of the XML's comments exists in lib/base/errors.h;
#   - each "(#anchor)" link on the page leads to a heading of the page;
#   - the "nervectl exit codes" table lists exactly 0 and the kExit* codes of lib/ctl/ctl.h.
# Exit: 0 all documented (prints "api-docs: N members and M errors documented"); 1 something is
# missing or stale (each problem on its own line); 2 the inputs cannot be read.
set -euo pipefail

root="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
python=/usr/bin/python3

if [[ ! -x "$python" ]]; then
  echo "api-docs: error: $python is needed to parse the D-Bus XML" >&2
  exit 2
fi

exec "$python" - "$root" <<'PY'
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter

root = sys.argv[1]
xml_path = f"{root}/lib/bus/org.nerve.Lifecycle1.xml"
errors_path = f"{root}/lib/base/errors.h"
ctl_path = f"{root}/lib/ctl/ctl.h"
docs_path = f"{root}/docs/dbus-api.md"


def die(msg):
    print(f"api-docs: error: {msg}", file=sys.stderr)
    sys.exit(2)


try:
    tree = ET.parse(xml_path)
except (OSError, ET.ParseError) as e:
    die(f"cannot parse {xml_path}: {e}")
try:
    with open(errors_path, encoding="utf-8") as f:
        errors_text = f.read()
    with open(docs_path, encoding="utf-8") as f:
        docs_lines = f.read().splitlines()
    with open(ctl_path, encoding="utf-8") as f:
        ctl_text = f.read()
    with open(xml_path, encoding="utf-8") as f:
        xml_text = f.read()
except OSError as e:
    die(str(e))

# Members: name -> how many interfaces define it; (interface, kind, name) for messages.
members = []
elements = {}  # name -> (kind, element), for the signature checks
for iface in tree.getroot().iter("interface"):
    for kind in ("method", "signal", "property"):
        for el in iface.findall(kind):
            members.append((iface.get("name"), kind, el.get("name")))
            elements.setdefault(el.get("name"), (kind, el))
if not members:
    die(f"no members found in {xml_path}")
needed = Counter(name for _, _, name in members)

error_re = re.compile(r"org\.nerve\.Lifecycle1\.Error\.([A-Za-z][A-Za-z0-9_]*)")
errors = sorted(set(error_re.findall(errors_text)))
if not errors:
    die(f"no error names found in {errors_path}")

# Member headings of the docs, outside code fences; every heading's anchor; each member's section.
heading_re = re.compile(r"^###[ \t]+([A-Z][A-Za-z0-9_]*)[ \t]*#*[ \t]*$")
any_heading_re = re.compile(r"^#+[ \t]+(.*?)[ \t]*#*[ \t]*$")
headings = Counter()
heading_line = {}
anchors = set()
sections = {}  # member name -> the lines of its (first) section
current = None
in_fence = False
for n, line in enumerate(docs_lines, 1):
    if line.lstrip().startswith("```"):
        in_fence = not in_fence
        continue
    if in_fence:
        continue
    h = any_heading_re.match(line)
    if h:
        anchors.add(re.sub(r"[^a-z0-9 _-]", "", h.group(1).lower()).replace(" ", "-"))
        current = None
    m = heading_re.match(line)
    if m:
        headings[m.group(1)] += 1
        heading_line.setdefault(m.group(1), n)
        if m.group(1) not in sections:
            current = sections.setdefault(m.group(1), [])
    elif current is not None:
        current.append(line)
docs_text = "\n".join(docs_lines)


def signature_lines(kind, el):
    """The line(s) a member's section must contain, from the XML."""
    name = el.get("name")
    args = el.findall("arg")
    if kind == "property":
        return [f"Property `{name}`, type `{el.get('type')}`"]
    if kind == "signal":
        inner = ", ".join(f"{a.get('type')} {a.get('name')}" for a in args)
        return [f"Signal `{name}({inner})` (signature `{''.join(a.get('type') for a in args)}`)"]
    inner = ", ".join(f"{a.get('direction', 'in')} {a.get('type')} {a.get('name')}" for a in args)
    return [f"`{name}({inner})`"]


def method_types(el, direction):
    types = "".join(a.get("type") for a in el.findall("arg") if a.get("direction", "in") == direction)
    return f"{direction} `{types}`" if types else f"{direction}: none"

problems = []
for iface, kind, name in members:
    if headings[name] < needed[name]:
        problems.append(f"missing: {kind} {iface}.{name} has no '### {name}' heading in docs/dbus-api.md")
        needed[name] = 0  # report each name once
for name in sorted(headings):
    if name not in needed:
        problems.append(f"stale: docs/dbus-api.md:{heading_line[name]}: '### {name}' is not a method, "
                        f"signal or property in lib/bus/org.nerve.Lifecycle1.xml")
documented = set(error_re.findall(docs_text))
for name in errors:
    if name not in documented:
        problems.append(f"missing: error org.nerve.Lifecycle1.Error.{name} (lib/base/errors.h) does not appear "
                        f"in docs/dbus-api.md")
for name in sorted(documented - set(errors)):
    problems.append(f"stale: docs/dbus-api.md names org.nerve.Lifecycle1.Error.{name}, which lib/base/errors.h "
                    f"does not define")

for name, (kind, el) in sorted(elements.items()):
    text = "\n".join(sections.get(name, []))
    if name not in sections:
        continue  # reported above as missing
    for want in signature_lines(kind, el):
        if want not in text:
            problems.append(f"stale: docs/dbus-api.md:{heading_line[name]}: the section of {kind} {name} does not "
                            f"state its signature as the XML has it: {want}")
    if kind == "method":
        m = re.search(r"\(in(?: `[^`]*`|: none), out(?: `[^`]*`|: none)\)", text)
        want = f"({method_types(el, 'in')}, {method_types(el, 'out')})"
        if m and m.group(0) != want:
            problems.append(f"stale: docs/dbus-api.md:{heading_line[name]}: method {name} says {m.group(0)}, "
                            f"the XML {want}")

methods = {name for _, kind, name in members if kind == "method"}
row_re = re.compile(r"^\| `org\.nerve\.Lifecycle1\.Error\.([A-Za-z]+)` \| ([^|]*) \|")
in_error_names = False
for n, line in enumerate(docs_lines, 1):
    if line.startswith("## "):
        in_error_names = line.strip() == "## Error names"
    m = row_re.match(line)
    if not m or not in_error_names:
        continue
    for method in (w.strip() for w in m.group(2).split(",")):
        if method not in methods:
            problems.append(f"stale: docs/dbus-api.md:{n}: error {m.group(1)} is said to be returned by "
                            f"'{method}', which is not a method in lib/bus/org.nerve.Lifecycle1.xml")

for listed in re.findall(r"Errors:([^.]*)\.", xml_text):
    for name in re.findall(r"(?:^|,)\s*([A-Z][A-Za-z]+)", re.sub(r"\([^)]*\)", "", listed)):
        if name not in errors:
            problems.append(f"stale: lib/bus/org.nerve.Lifecycle1.xml names error {name} in an 'Errors:' list, "
                            f"which lib/base/errors.h does not define")

for n, line in enumerate(docs_lines, 1):
    for anchor in re.findall(r"\]\(#([^)]+)\)", line):
        if anchor not in anchors:
            problems.append(f"stale: docs/dbus-api.md:{n}: link to '#{anchor}', which is no heading of the page")

codes = {0} | {int(c) for c in re.findall(r"constexpr int kExit[A-Za-z]+ = (\d+);", ctl_text)}
table = re.search(r"^## nervectl exit codes\n(.*?)(?=^## )", docs_text, re.S | re.M)
documented_codes = {int(c) for c in re.findall(r"^\| (\d+) \|", table.group(1), re.M)} if table else set()
for c in sorted(codes - documented_codes):
    problems.append(f"missing: nervectl exit code {c} (lib/ctl/ctl.h) is not in the 'nervectl exit codes' table")
for c in sorted(documented_codes - codes):
    problems.append(f"stale: the 'nervectl exit codes' table lists {c}, which lib/ctl/ctl.h does not define")

if problems:
    for p in problems:
        print(f"api-docs: {p}")
    print(f"api-docs: FAILED: {len(problems)} problem(s) in docs/dbus-api.md "
          f"({len(members)} members, {len(errors)} errors checked)")
    sys.exit(1)
print(f"api-docs: {len(members)} members and {len(errors)} errors documented")
PY
