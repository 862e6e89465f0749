#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every source file of nerve says its license in its first lines: SPDX-License-Identifier:
LGPL-2.1-or-later, in a comment of its own language (LICENSE has the text).

Usage: scripts/spdx.py [--fix] [SOURCE_DIR]      (default: the checkout this script is in)

The files are those git tracks. Each is either source (its comment syntax below), data, or
unclassified:
  - source: C and C++ (.c .cc .cpp .h .hpp, and the header template .h.in), Go, linker version
    scripts (.map .sym), CMake (CMakeLists.txt, .cmake), shell (.sh .bash), Python (.py),
    Makefiles and Snakefiles, TOML, pkg-config templates (.pc.in), scdoc (.scd), and any file whose
    first line is a #! of sh, bash or python (the package's maintainer scripts);
  - data, which carries no line: documentation and text (.md .txt), data a test or a program reads
    (.json .xml .baseline .yml .yaml .prom .expected), patches, go.mod and go.sum, systemd and D-Bus
    unit templates (.service.in), the packages' changelog, copyright file and lintian overrides
    (cmake/deb/: Debian's formats; the copyright file says the license itself), .gitignore,
    LICENSE, and the fuzz targets' dictionaries (.dict) and corpora (fuzz/corpus/: the bytes a
    target reads). None of it is generated or vendored code: nerve has none in its tree (generated
    headers are made in the build folder).
Without --fix: lists each source file that lacks the line, and each unclassified file (add its kind
to SOURCE or DATA below), and exits 1 if there is any; 0 otherwise; 77 when SOURCE_DIR is not a git
checkout (ctest skips). With --fix: inserts the line into each source file that lacks it, first
line, or after a #! line (and a Python coding line after it), or after an scdoc page's preamble
(scdoc wants the preamble first); in Go followed by a blank line, so that it does not join the
package's doc comment. Prints what it changed and exits 1 if unclassified files remain.
"""
import fnmatch
import os
import re
import subprocess
import sys

TAG = "SPDX-License-Identifier: LGPL-2.1-or-later"
HEAD_LINES = 5  # the line must be within the first lines: after a #! and a coding line at most

# (glob on the file name, how a comment line is written)
SOURCE = [
    ("*.c", "// {}"), ("*.cc", "// {}"), ("*.cpp", "// {}"), ("*.h", "// {}"), ("*.hpp", "// {}"),
    ("*.h.in", "// {}"), ("*.go", "// {}"), ("*.map", "/* {} */"), ("*.sym", "/* {} */"),
    ("CMakeLists.txt", "# {}"), ("*.cmake", "# {}"), ("*.sh", "# {}"), ("*.bash", "# {}"),
    ("*.py", "# {}"), ("Makefile", "# {}"), ("*.mk", "# {}"), ("Snakefile", "# {}"),
    ("*.smk", "# {}"), ("*.toml", "# {}"), ("*.pc.in", "# {}"), ("*.scd", "; {}"),
]
DATA = ["*.md", "*.txt", "*.json", "*.xml", "*.baseline", "*.yml", "*.yaml", "*.prom",
        "*.expected", "*.patch", "go.mod", "go.sum", "*.service.in", ".gitignore", "LICENSE",
        "changelog", "copyright", "*.lintian-overrides", "*.dict"]
# Folders whose every file is data: the fuzz targets' inputs (a corpus entry is the bytes a target
# reads, often no text at all; a comment in it would be a different input).
DATA_DIRS = ["fuzz/corpus/"]
SHEBANG = re.compile(r"^#!\s*\S*(/|env\s+)(sh|bash|python3?)\b")
CODING = re.compile(r"^[ \t\f]*#.*?coding[:=]")


def comment_of(path, first_line):
    name = os.path.basename(path)
    if any(path.startswith(d) for d in DATA_DIRS):
        return None
    for glob, comment in SOURCE:
        if fnmatch.fnmatchcase(name, glob):
            return comment
    if any(fnmatch.fnmatchcase(name, glob) for glob in DATA):
        return None
    if SHEBANG.match(first_line):
        return "# {}"
    return "?"


def insert_at(lines, path):
    """Where the line goes: after a #! (and a coding line), after an scdoc preamble, else first."""
    at = 0
    if lines and lines[0].startswith("#!"):
        at = 1
        if len(lines) > 1 and CODING.match(lines[1]):
            at = 2
    elif path.endswith(".scd") and lines:
        at = 1
    return at


def fix(full, path, comment):
    with open(full, encoding="utf-8", newline="") as f:
        lines = f.read().splitlines(keepends=True)
    at = insert_at(lines, path)
    new = [comment.format(TAG) + "\n"]
    if path.endswith(".go") and at < len(lines) and lines[at].strip():
        new.append("\n")
    if at > 0 and not lines[at - 1].endswith("\n"):
        lines[at - 1] += "\n"
    lines[at:at] = new
    with open(full, "w", encoding="utf-8", newline="") as f:
        f.write("".join(lines))


def tracked(top):
    try:
        out = subprocess.run(["git", "-C", top, "ls-files", "-z"], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return [p for p in out.split("\0") if p and os.path.isfile(os.path.join(top, p))]


def main(argv):
    fixing = "--fix" in argv
    args = [a for a in argv if a != "--fix"]
    top = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = tracked(top)
    if files is None:
        print(f"spdx: {top} is not a git checkout: nothing to check")
        return 77
    lacking, unclassified = [], []
    for path in sorted(files):
        full = os.path.join(top, path)
        with open(full, encoding="utf-8", errors="replace") as f:
            head = [f.readline() for _ in range(HEAD_LINES)]
        comment = comment_of(path, head[0])
        if comment is None:
            continue
        if comment == "?":
            unclassified.append(path)
        elif not any(TAG in line for line in head):
            lacking.append((path, comment))
    for path, comment in lacking:
        if fixing:
            fix(os.path.join(top, path), path, comment)
            print(f"spdx: added to {path}")
        else:
            print(f"spdx: no '{TAG}' in the first {HEAD_LINES} lines of {path}")
    for path in unclassified:
        print(f"spdx: {path}: neither source nor data: add its kind to SOURCE or DATA in scripts/spdx.py")
    verb = "fixed" if fixing else "lacking the line"
    print(f"spdx: {len(files)} files tracked, {len(lacking)} {verb}, {len(unclassified)} unclassified")
    return 1 if unclassified or (lacking and not fixing) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
