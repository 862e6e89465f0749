#!/usr/bin/env bash
# check-api-docs.sh: fail when docs/dbus-api.md and the bus API disagree.
#
# Usage: tests/check-api-docs.sh [REPO_ROOT]      (default: the folder above this script)
#
# Reads every method, signal and property of every interface in lib/bus/org.nerve.Lifecycle1.xml and
# every error name in lib/errors.h (string constants "org.nerve.Lifecycle1.Error.X"), and checks
# docs/dbus-api.md:
#   - each member has a heading "### Name" (one per interface that defines the name);
#   - each error name appears in full somewhere on the page;
#   - no "### Name" member heading names a member the XML no longer has. A member heading is a "###"
#     heading whose text is one CamelCase word; headings of more words are free text and are not
#     checked. Headings inside ``` fences are ignored;
#   - no full error name on the page is missing from lib/errors.h.
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
errors_path = f"{root}/lib/errors.h"
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
except OSError as e:
    die(str(e))

# Members: name -> how many interfaces define it; (interface, kind, name) for messages.
members = []
for iface in tree.getroot().iter("interface"):
    for kind in ("method", "signal", "property"):
        for el in iface.findall(kind):
            members.append((iface.get("name"), kind, el.get("name")))
if not members:
    die(f"no members found in {xml_path}")
needed = Counter(name for _, _, name in members)

error_re = re.compile(r"org\.nerve\.Lifecycle1\.Error\.([A-Za-z][A-Za-z0-9_]*)")
errors = sorted(set(error_re.findall(errors_text)))
if not errors:
    die(f"no error names found in {errors_path}")

# Member headings of the docs, outside code fences.
heading_re = re.compile(r"^###[ \t]+([A-Z][A-Za-z0-9_]*)[ \t]*#*[ \t]*$")
headings = Counter()
heading_line = {}
in_fence = False
for n, line in enumerate(docs_lines, 1):
    if line.lstrip().startswith("```"):
        in_fence = not in_fence
        continue
    m = heading_re.match(line)
    if m and not in_fence:
        headings[m.group(1)] += 1
        heading_line.setdefault(m.group(1), n)
docs_text = "\n".join(docs_lines)

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
        problems.append(f"missing: error org.nerve.Lifecycle1.Error.{name} (lib/errors.h) does not appear "
                        f"in docs/dbus-api.md")
for name in sorted(documented - set(errors)):
    problems.append(f"stale: docs/dbus-api.md names org.nerve.Lifecycle1.Error.{name}, which lib/errors.h "
                    f"does not define")

if problems:
    for p in problems:
        print(f"api-docs: {p}")
    print(f"api-docs: FAILED: {len(problems)} problem(s) in docs/dbus-api.md "
          f"({len(members)} members, {len(errors)} errors checked)")
    sys.exit(1)
print(f"api-docs: {len(members)} members and {len(errors)} errors documented")
PY
