#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""check-interface.py: hold the bus interface of nerved to its committed baseline.

docs/dbus-api.md ("Stability") promises that a member of org.nerve.Lifecycle1, once released, keeps
its signature. tests/interface/org.nerve.Lifecycle1.baseline records every released member, one a
line; this script compares lib/bus/org.nerve.Lifecycle1.xml (the one definition of the interface)
with it.

Usage:
  check-interface.py [--root ROOT] [--baseline FILE] [XML]
      The check (ctest interface-baseline). Fails when a member of the baseline is gone from XML
      (default ROOT/lib/bus/org.nerve.Lifecycle1.xml) or its signature, type or access changed;
      passes, with a note naming them, when members were only added.
  check-interface.py --write [--accept-break] [--root ROOT] [--baseline FILE] [XML]
      Regenerates the baseline from XML: run it deliberately, once new members are released. It
      refuses when XML breaks the baseline, unless --accept-break says the break is meant (a new
      interface name, never an edit of a released member).
  check-interface.py --served [--root ROOT] SERVED.xml...
      Compares what nerved serves (the Introspect answers of its objects, as files) with XML: every
      org.nerve.* interface of XML must be served with exactly its members, types and access.

What a member is (one line of the baseline each, "#" lines are comments):
  interface NAME
  method    IFACE.NAME (in TYPE NAME, ..., out TYPE NAME, ...)   in and out arguments in order
  signal    IFACE.NAME (TYPE NAME, ...)
  property  IFACE.NAME TYPE ACCESS                             ACCESS: read, write or readwrite
Argument names are kept for the reader; they are not part of a signature (a client never sends
them), so a renamed argument is a note, not a break. Annotations are not compared: the ones the XML
has (org.freedesktop.DBus.Method.Async) say how nerved answers, not what a client sees.

Exit: 0 the baseline holds (or was written); 1 a member of the baseline is gone or changed (each on
its own line, "interface-baseline: removed: ..." or "... changed: ..."); 2 an input cannot be read.
"""
import argparse
import os
import re
import sys
import xml.etree.ElementTree as ET

TAG = "interface-baseline"
KINDS = ("interface", "method", "signal", "property")
HEADER = """\
# The released bus interface of nerved (org.nerve.Lifecycle1), one member a line, generated from
# lib/bus/org.nerve.Lifecycle1.xml by tests/interface/check-interface.py --write. ctest
# interface-baseline fails when a member here disappears from the XML or its signature, type or
# access changes (docs/dbus-api.md, "Stability"); members are only ever added. Regenerate it with
# --write once new members are released; never edit a line of a released member.
"""


class Unreadable(Exception):
    pass


class Member:
    """One interface, method, signal or property: what a client relies on, and the argument names."""

    def __init__(self, kind, name, shape, arg_names=()):
        self.kind, self.name, self.shape, self.arg_names = kind, name, tuple(shape), tuple(arg_names)

    def text(self):
        """The member's line of the baseline."""
        if self.kind == "interface":
            return f"interface {self.name}"
        if self.kind == "property":
            return f"property  {self.name} {self.shape[0]} {self.shape[1]}"
        args = ", ".join(" ".join(part for part in (*shape, arg) if part)
                         for shape, arg in zip(self.shape, self.arg_names))
        return f"{self.kind:<9} {self.name} ({args})"

    def signature(self):
        """What must never change, in words for messages."""
        if self.kind == "property":
            return f"type {self.shape[0]}, access {self.shape[1]}"
        if self.kind == "method":
            ins = "".join(t for d, t in self.shape if d == "in")
            outs = "".join(t for d, t in self.shape if d == "out")
            return f"in '{ins}', out '{outs}'"
        if self.kind == "signal":
            return f"signature '{''.join(t for (t,) in self.shape)}'"
        return "exists"


def members_of_xml(path, prefix=None):
    """The members of the interfaces in the D-Bus introspection XML at PATH (those whose name starts
    with PREFIX, when given), by (kind, name)."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise Unreadable(f"cannot parse {path}: {e}")
    found = {}

    def add(m):
        if (m.kind, m.name) in found:
            raise Unreadable(f"{path}: {m.kind} {m.name} is defined twice")
        found[(m.kind, m.name)] = m

    for iface in root.iter("interface"):
        iname = iface.get("name", "")
        if prefix and not iname.startswith(prefix):
            continue
        add(Member("interface", iname, ()))
        for el in iface:
            if el.tag not in ("method", "signal", "property"):
                continue
            name = f"{iname}.{el.get('name')}"
            if el.tag == "property":
                add(Member("property", name, (el.get("type"), el.get("access"))))
                continue
            args = el.findall("arg")
            if el.tag == "method":
                shape = [(a.get("direction", "in"), a.get("type")) for a in args]
            else:
                shape = [(a.get("type"),) for a in args]
            add(Member(el.tag, name, shape, [a.get("name", "") for a in args]))
    if not found:
        raise Unreadable(f"{path}: no interface found")
    return found


LINE_RE = re.compile(r"^(interface|method|signal|property)\s+(\S+)\s*(.*)$")


def parse_args_text(kind, text, where):
    """The shape and argument names of a method's or signal's "(...)" in the baseline."""
    if not (text.startswith("(") and text.endswith(")")):
        raise Unreadable(f"{where}: expected '(arguments)' after the name, got {text!r}")
    inner = text[1:-1].strip()
    shape, names = [], []
    for arg in (a.strip() for a in inner.split(",")) if inner else ():
        words = arg.split()
        want = 3 if kind == "method" else 2
        if len(words) not in (want - 1, want) or (kind == "method" and words[0] not in ("in", "out")):
            raise Unreadable(f"{where}: cannot read argument {arg!r}")
        fixed = words[:want - 1]
        shape.append(tuple(fixed))
        names.append(words[want - 1] if len(words) == want else "")
    return shape, names


def members_of_baseline(path):
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise Unreadable(f"cannot read {path}: {e}")
    found = {}
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path}:{n}"
        m = LINE_RE.match(line.strip())
        if not m:
            raise Unreadable(f"{where}: not a member line: {line!r}")
        kind, name, rest = m.groups()
        if kind == "interface":
            member = Member(kind, name, ())
        elif kind == "property":
            words = rest.split()
            if len(words) != 2 or words[1] not in ("read", "write", "readwrite"):
                raise Unreadable(f"{where}: expected 'property NAME TYPE read|write|readwrite'")
            member = Member(kind, name, words)
        else:
            member = Member(kind, name, *parse_args_text(kind, rest.strip(), where))
        if (kind, name) in found:
            raise Unreadable(f"{where}: {kind} {name} is listed twice")
        found[(kind, name)] = member
    if not found:
        raise Unreadable(f"{path}: no member lines")
    return found


def compare(old, new, new_label, old_label="the baseline"):
    """Breaks (old members gone or changed in NEW), additions and notes, as message lists."""
    breaks, notes = [], []
    for key, was in old.items():
        now = new.get(key)
        if now is None:
            breaks.append(f"removed: {was.kind} {was.name} ({was.signature()}) is not in {new_label}")
        elif now.shape != was.shape:
            breaks.append(f"changed: {was.kind} {was.name}: {old_label} has {was.signature()}, "
                          f"{new_label} {now.signature()}")
        elif now.arg_names != was.arg_names:
            notes.append(f"note: {was.kind} {was.name}: argument names ({', '.join(now.arg_names)}) differ "
                         f"from those of {old_label} ({', '.join(was.arg_names)}); names are not part of the signature")
    added = [m for key, m in new.items() if key not in old]
    return breaks, added, notes


def baseline_text(members):
    order = sorted(members.values(), key=lambda m: (m.name if m.kind == "interface" else m.name.rsplit(".", 1)[0],
                                                    KINDS.index(m.kind), m.name))
    return HEADER + "".join(("\n" if m.kind == "interface" else "") + m.text() + "\n" for m in order)


def report(lines):
    for line in lines:
        print(f"{TAG}: {line}")


def served_check(xml_path, served_paths):
    """The served interfaces (org.nerve.* in the Introspect answers) are exactly those of the XML."""
    defined = members_of_xml(xml_path, "org.nerve.")
    served = {}
    for p in served_paths:
        for key, m in members_of_xml(p, "org.nerve.").items():
            if key in served and served[key].shape != m.shape:
                report([f"changed: {m.kind} {m.name} is served in two shapes ({p})"])
                return 1
            served.setdefault(key, m)
    breaks, added, notes = compare(defined, served, "what nerved serves", xml_path)
    extra = [f"served but not in {xml_path}: {m.kind} {m.name} ({m.signature()})" for m in added]
    report(notes)
    if breaks or extra:
        report(breaks + extra)
        report([f"FAILED: what nerved serves is not {xml_path}"])
        return 1
    print(f"{TAG}: nerved serves the {len(defined)} members of {os.path.basename(xml_path)}, no more")
    return 0


def main():
    ap = argparse.ArgumentParser(description="Hold the bus interface to its committed baseline.")
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    ap.add_argument("--baseline")
    ap.add_argument("--write", action="store_true", help="regenerate the baseline from the XML")
    ap.add_argument("--accept-break", action="store_true", help="with --write: a break is meant")
    ap.add_argument("--served", nargs="+", metavar="SERVED_XML", help="compare these Introspect answers to the XML")
    ap.add_argument("xml", nargs="?")
    a = ap.parse_args()
    xml_path = a.xml or os.path.join(a.root, "lib/bus/org.nerve.Lifecycle1.xml")
    baseline_path = a.baseline or os.path.join(a.root, "tests/interface/org.nerve.Lifecycle1.baseline")
    try:
        if a.served:
            return served_check(xml_path, a.served)
        now = members_of_xml(xml_path)
        old = members_of_baseline(baseline_path) if not a.write or os.path.exists(baseline_path) else {}
    except Unreadable as e:
        print(f"{TAG}: error: {e}", file=sys.stderr)
        return 2
    breaks, added, notes = compare(old, now, xml_path)
    report(notes)
    if a.write:
        if breaks and not a.accept_break:
            report(breaks)
            report(["refused: the XML breaks the baseline (above); released members keep their signature. "
                    "--accept-break writes it anyway"])
            return 1
        with open(baseline_path, "w", encoding="utf-8") as f:
            f.write(baseline_text(now))
        print(f"{TAG}: wrote {baseline_path}: {len(now)} members ({len(added)} new, {len(breaks)} broken)")
        return 0
    if breaks:
        report(breaks)
        report([f"FAILED: {len(breaks)} member(s) of {baseline_path} removed or changed; a released member keeps "
                "its signature (docs/dbus-api.md, Stability): add a new member instead"])
        return 1
    if added:
        report([f"note: added, not in the baseline yet: {m.kind} {m.name} ({m.signature()})" for m in added])
        report(["note: additions keep the interface compatible; record them with "
                "tests/interface/check-interface.py --write once they are released"])
    print(f"{TAG}: the {len(old)} members of the baseline are unchanged ({len(added)} added)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
