#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-api-docs-selftest.sh: shows that tests/check-api-docs.sh fails on each kind of drift.
#
# Usage: tests/check-api-docs-selftest.sh [REPO_ROOT]
#
# For each case, copies the four inputs of the check into a temp folder, breaks one thing (a stale
# signature, member, error, link, exit code, ...), and expects exit 1 and a line naming the problem.
# The unbroken copy must pass. Exit 0 when every case behaved, 1 otherwise.
set -euo pipefail

root="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
check="$root/tests/check-api-docs.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

copy() {
  rm -rf "$tmp/r"
  mkdir -p "$tmp/r/lib/bus" "$tmp/r/lib/base" "$tmp/r/lib/ctl" "$tmp/r/docs"
  cp "$root/lib/bus/org.nerve.Lifecycle1.xml" "$tmp/r/lib/bus/"
  cp "$root/lib/base/errors.h" "$tmp/r/lib/base/"
  cp "$root/lib/ctl/ctl.h" "$tmp/r/lib/ctl/"
  cp "$root/docs/dbus-api.md" "$tmp/r/docs/"
}

# expect NAME FILE SED-SCRIPT TEXT: after `sed -i SED-SCRIPT FILE`, the check exits 1 and says TEXT.
expect() {
  local name=$1 file=$2 script=$3 text=$4 out rc=0
  copy
  sed -i "$script" "$tmp/r/$file"
  if cmp -s "$tmp/r/$file" "$root/$file"; then
    echo "selftest: $name: the edit changed nothing (update this case)"
    failed=1
    return
  fi
  out=$("$check" "$tmp/r" 2>&1) || rc=$?
  if [[ $rc -ne 1 || "$out" != *"$text"* ]]; then
    echo "selftest: $name: expected exit 1 and '$text', got exit $rc:"
    echo "$out"
    failed=1
  else
    echo "selftest: $name: caught"
  fi
}

copy
"$check" "$tmp/r" >/dev/null || { echo "selftest: the unbroken copy fails the check"; exit 1; }

expect "member gone from the XML" lib/bus/org.nerve.Lifecycle1.xml '/<method name="Forget">/,/<\/method>/d' \
  "'### Forget' is not a method"
expect "error gone from errors.h" lib/base/errors.h '/Error.RunBusy"/d' "Error.RunBusy, which lib/base/errors.h does not define"
expect "argument renamed in the XML" lib/bus/org.nerve.Lifecycle1.xml 's/name="receipt_json"/name="receipt"/' \
  "does not state its signature"
expect "argument type changed in the XML" lib/bus/org.nerve.Lifecycle1.xml \
  '0,/<arg type="t" name="grace_usec"/s//<arg type="u" name="grace_usec"/' "does not state its signature"
expect "property type changed" lib/bus/org.nerve.Lifecycle1.xml 's/<property name="MainPID" type="u"/<property name="MainPID" type="t"/' \
  "Property \`MainPID\`, type \`t\`"
expect "signal argument renamed" lib/bus/org.nerve.Lifecycle1.xml 's/name="exit_code"/name="code"/' "Signal \`RunExited("
expect "short signature wrong" docs/dbus-api.md 's/(in `st`, out `ss`)/(in `s`, out `ss`)/' "the XML (in \`st\`, out \`ss\`)"
expect "error said to come from a gone method" docs/dbus-api.md \
  's/^| `org.nerve.Lifecycle1.Error.RunBusy` | Forget |/| `org.nerve.Lifecycle1.Error.RunBusy` | Forget, Frob |/' "'Frob', which is not a method"
expect "XML names a gone error" lib/bus/org.nerve.Lifecycle1.xml 's/Errors: InvalidRunId, NoSuchRun, RunNotFinished/Errors: InvalidRunId, NoSuchRun, RunDone/' \
  "names error RunDone"
expect "link to a gone heading" docs/dbus-api.md '0,/\[Forget\](#forget)/s//[Forget](#forget-it)/' "link to '#forget-it'"
expect "exit code gone from ctl.h" lib/ctl/ctl.h '/kExitRetry = 75/d' "lists 75"
expect "exit code missing from the table" docs/dbus-api.md '/^| 69 | /d' "exit code 69"

exit $failed
