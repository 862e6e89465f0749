#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-spdx-selftest.sh: scripts/spdx.py can fail, and its --fix puts the line where each language
# wants it. In a scratch git repository with one file of each kind, the check lists every source file
# without the line and the unclassified file, and exits 1; --fix inserts the line (first line; after
# #! and a coding line; after an scdoc preamble; in Go with a blank line, out of the doc comment),
# leaves data alone, and the check then passes; a second --fix changes nothing.
# Usage: tests/check-spdx-selftest.sh SOURCE_DIR. Exit 0 all good, 1 a check failed.
set -u
src=$1
spdx=$src/scripts/spdx.py
fail() { echo "spdx-selftest: FAIL: $*"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nerve-spdx.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
tag='SPDX-License-Identifier: LGPL-2.1-or-later'

cd "$tmp" && git init -q . || fail "git init"
mkdir -p lib go man scripts debian
printf '// x.h: a header\n#pragma once\n' >lib/x.h
printf '#!/usr/bin/env bash\n# run.sh: runs\ntrue\n' >scripts/run.sh
printf '#!/usr/bin/python3\n# -*- coding: utf-8 -*-\n"""Doc."""\n' >scripts/tool.py
printf '// Package p does things.\npackage p\n' >go/doc.go
printf 'p(1)\n\n# NAME\n\np - a page\n' >man/p.1.scd
printf '#!/bin/sh\nset -e\n' >debian/postinst
printf 'cmake_minimum_required(VERSION 3.20)\n' >CMakeLists.txt
printf '{"a": 1}\n' >data.json
printf '# Title\n' >README.md
printf 'what\n' >odd.xyz
git add -A

out=$(python3 "$spdx" "$tmp"); rc=$?
[[ $rc == 1 ]] || fail "the check exited $rc on files without the line, not 1: $out"
for f in lib/x.h scripts/run.sh scripts/tool.py go/doc.go man/p.1.scd debian/postinst CMakeLists.txt; do
    grep -q "of $f\$" <<<"$out" || fail "the check does not name $f: $out"
done
grep -q 'odd.xyz: neither source nor data' <<<"$out" || fail "the check does not name the unclassified odd.xyz: $out"
grep -q 'data.json\|README.md' <<<"$out" && fail "the check names a data file: $out"

git rm -q --cached odd.xyz
python3 "$spdx" --fix "$tmp" >/dev/null || fail "--fix exited $?"
expect() {  # FILE LINE-NUMBER TEXT: line N of FILE is TEXT
    [[ $(sed -n "$2p" "$1") == "$3" ]] || fail "$1 line $2 is '$(sed -n "$2p" "$1")', not '$3'"
}
expect lib/x.h 1 "// $tag"; expect lib/x.h 2 '// x.h: a header'
expect scripts/run.sh 1 '#!/usr/bin/env bash'; expect scripts/run.sh 2 "# $tag"
expect scripts/tool.py 2 '# -*- coding: utf-8 -*-'; expect scripts/tool.py 3 "# $tag"
expect go/doc.go 1 "// $tag"; expect go/doc.go 2 ''; expect go/doc.go 3 '// Package p does things.'
expect man/p.1.scd 1 'p(1)'; expect man/p.1.scd 2 "; $tag"
expect debian/postinst 2 "# $tag"
expect CMakeLists.txt 1 "# $tag"
[[ $(cat data.json) == '{"a": 1}' ]] || fail "--fix changed data.json"
if command -v scdoc >/dev/null; then scdoc <man/p.1.scd >/dev/null || fail "scdoc refuses the fixed page"; fi
python3 "$spdx" "$tmp" >/dev/null || fail "the check fails after --fix"
before=$(git diff | md5sum)
python3 "$spdx" --fix "$tmp" | grep -q '0 fixed' || fail "a second --fix changed files"
[[ $(git diff | md5sum) == "$before" ]] || fail "a second --fix changed files"
echo "spdx-selftest: ok"
