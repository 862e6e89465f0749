#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Holds lib/ to the layering that ARCHITECTURE.md writes down.

The rule is read from ARCHITECTURE.md's ```layers block: one line per folder of lib/, naming the
folders its files may include besides their own ("generated" is build/lib/generated/, the headers made
from the bus XML and the version). This check fails on
  - a .cpp or .h directly in lib/, or in a folder the rule does not name;
  - an #include "..." that does not name a folder (every include of nerve's own code is
    "folder/file.h", from lib/), or names a file that does not exist;
  - an include of a folder the including file's folder may not use;
  - a file in lib/ over MAX_FILE_LINES lines, or a function body over MAX_FUNCTION_LINES lines.
Usage: check-layers.py SOURCE_DIR. Exit 0 when all holds, 1 with one line per violation.
"""
import os
import re
import sys

MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
GENERATED = {"nerve-adaptor.h", "nerve-proxy.h", "nerve_version.h"}


def read_rule(architecture):
    text = open(architecture, encoding="utf-8").read()
    block = re.search(r"^```layers\n(.*?)^```", text, re.S | re.M)
    if not block:
        sys.exit(f"check-layers: no ```layers block in {architecture}")
    rule = {}
    for line in block.group(1).splitlines():
        if not line.strip():
            continue
        folder, _, uses = line.partition(":")
        rule[folder.strip()] = set(uses.split()) | {folder.strip()}
    return rule


def folder_of(rel, rule):
    """The longest folder of the rule that holds rel (lib/ctl/full/x.cpp is ctl/full, not ctl)."""
    parts = os.path.dirname(rel).split("/")
    for n in range(len(parts), 0, -1):
        cand = "/".join(parts[:n])
        if cand in rule:
            return cand
    return None


def strip_code(text):
    """Text with comments, strings and character literals blanked (line breaks kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def long_functions(text):
    """(first line, lines) of each function body longer than MAX_FUNCTION_LINES: a { that closes a
    parameter list (after ')' and qualifiers such as const, noexcept, override, -> T, or a
    constructor's initialisers), outside any other function body."""
    code = strip_code(text)
    found, depth, body_depth, start = [], 0, None, 0
    for m in re.finditer(r"[{}]", code):
        if m.group() == "{":
            before = code[: m.start()].rstrip()
            is_function = body_depth is None and re.search(
                r"\)\s*(const|noexcept|override|final|mutable|->\s*[\w:<>,\s*&]+|\s)*$", before) and not re.search(
                r"\b(if|for|while|switch|catch)\s*\([^;{}]*\)\s*$", before)
            if not is_function and body_depth is None and re.search(r"\)\s*:\s*[^;{}]*$|\}\s*$", before) \
                    and re.search(r"\)\s*:\s*\w", before[-400:]):
                is_function = True  # a constructor with initialisers: Foo(...) : a_(x), b_{y} {
            if is_function:
                body_depth, start = depth, code.count("\n", 0, m.start())
            depth += 1
        else:
            depth -= 1
            if body_depth is not None and depth == body_depth:
                lines = code.count("\n", 0, m.start()) - start - 1
                if lines > MAX_FUNCTION_LINES:
                    found.append((start + 1, lines))
                body_depth = None
    return found


def check(src):
    lib = os.path.join(src, "lib")
    rule = read_rule(os.path.join(src, "ARCHITECTURE.md"))
    problems = []
    for dirpath, _, files in os.walk(lib):
        for name in sorted(files):
            if not name.endswith((".cpp", ".h")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, lib)
            folder = folder_of(rel, rule)
            if folder is None:
                problems.append(f"lib/{rel}: not in a folder of the layer rule ({', '.join(sorted(rule))})")
                continue
            text = open(path, encoding="utf-8").read()
            lines = text.count("\n")
            if lines > MAX_FILE_LINES:
                problems.append(f"lib/{rel}: {lines} lines (at most {MAX_FILE_LINES})")
            for first, count in long_functions(text):
                problems.append(f"lib/{rel}:{first}: a function of {count} lines (at most {MAX_FUNCTION_LINES})")
            for number, line in enumerate(text.splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = m.group(1)
                where = f"lib/{rel}:{number}: #include \"{target}\""
                if target.startswith("generated/") and target[len("generated/"):] in GENERATED:
                    to = "generated"
                elif "/" not in target:
                    problems.append(f"{where} does not name its folder (write \"folder/{target}\")")
                    continue
                elif not os.path.isfile(os.path.join(lib, target)):
                    problems.append(f"{where}: no such file in lib/")
                    continue
                else:
                    to = folder_of(target, rule)
                if to not in rule[folder]:
                    allowed = " ".join(sorted(rule[folder] - {folder})) or "nothing outside it"
                    problems.append(f"{where}: {folder} may not use {to} (it may use {allowed})")
    return problems


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check-layers.py SOURCE_DIR")
    problems = check(sys.argv[1])
    for p in problems:
        print(p)
    print(f"check-layers: {len(problems)} violation(s)" if problems else "check-layers: lib/ keeps its layers")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
