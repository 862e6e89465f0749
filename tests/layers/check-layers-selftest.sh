#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The layer check must be able to fail: on a copy of lib/ and ARCHITECTURE.md that passes it, each
# kind of violation is planted in turn and must be reported by name.
set -euo pipefail
src=$1
check=$(dirname "$0")/check-layers.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fresh() { rm -rf "$tmp/t"; mkdir "$tmp/t"; cp -r "$src/lib" "$src/ARCHITECTURE.md" "$tmp/t/"; }
expect() {  # expect WHAT PATTERN: the check fails on the planted copy and says PATTERN
  local out
  if out=$(python3 "$check" "$tmp/t"); then echo "FAIL: $1 was not caught"; exit 1; fi
  grep -q -- "$2" <<<"$out" || { echo "FAIL: $1: the report does not say '$2':"; echo "$out"; exit 1; }
  echo "ok: $1"
}

fresh
python3 "$check" "$tmp/t" >/dev/null || { echo "FAIL: the unchanged copy does not pass"; exit 1; }
echo "ok: the unchanged copy passes"

fresh; sed -i '0,/#include <string>/s//#include "run\/lifecycle.h"\n#include <string>/' "$tmp/t/lib/base/errors.h"
expect "an include up a layer (base -> run)" 'base may not use run'

fresh; echo '#include "bus/manager_object.h"' >> "$tmp/t/lib/ctl/output.cpp"
expect "an include the front may not make (ctl -> bus)" 'ctl may not use bus'

fresh; echo '#include "errors.h"' >> "$tmp/t/lib/base/host.cpp"
expect "an include that does not name its folder" 'does not name its folder'

fresh; echo '#include "base/no_such_file.h"' >> "$tmp/t/lib/base/host.cpp"
expect "an include of a missing file" 'no such file'

fresh; echo 'int stray();' > "$tmp/t/lib/stray.h"
expect "a file directly in lib/" 'lib/stray.h: not in a folder'

fresh; { for i in $(seq 401); do echo "// line $i"; done; } > "$tmp/t/lib/base/long.h"
expect "a file over 400 lines" 'lib/base/long.h: 401 lines'

fresh; { echo 'int f(int x) {'; for i in $(seq 61); do echo "  x += $i;"; done; echo '  return x;'; echo '}'; } > "$tmp/t/lib/base/long_function.cpp"
expect "a function over 60 lines" 'a function of 62 lines'

fresh; sed -i 's/^record:    base$/record:    base run/' "$tmp/t/ARCHITECTURE.md"; echo '#include "run/lifecycle.h"' >> "$tmp/t/lib/record/record.cpp"
python3 "$check" "$tmp/t" >/dev/null || { echo "FAIL: the rule is not read from ARCHITECTURE.md"; exit 1; }
echo "ok: the rule is the one ARCHITECTURE.md writes"
echo "check-layers-selftest: every planted violation was caught"
