#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-interface-selftest.sh: shows that tests/interface/check-interface.py can fail, and when not.
#
# Usage: tests/interface/check-interface-selftest.sh [REPO_ROOT]
#
# Each case copies the XML and the committed baseline into a temp folder, makes one change to the
# XML, and expects the check's exit status and a line of its output: a removed method, a changed
# argument type, a changed property type or access, a removed signal argument and a removed interface
# fail (exit 1); an added method and a renamed argument pass (exit 0) with a note. --write must refuse
# a break, and --served must fail on a served interface that differs from the XML. The unchanged
# copy must pass. Exit 0 when every case behaved, 1 otherwise.
set -euo pipefail

root="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
check=("/usr/bin/python3" "$root/tests/interface/check-interface.py")
xml=lib/bus/org.nerve.Lifecycle1.xml
baseline=tests/interface/org.nerve.Lifecycle1.baseline
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

copy() {
  rm -rf "$tmp/r"
  mkdir -p "$tmp/r/lib/bus" "$tmp/r/tests/interface"
  cp "$root/$xml" "$tmp/r/$xml"
  cp "$root/$baseline" "$tmp/r/$baseline"
}

# run_case NAME RC TEXT ARGS...: the check with ARGS exits RC and prints TEXT.
run_case() {
  local name=$1 want_rc=$2 text=$3 out rc=0
  shift 3
  out=$("${check[@]}" --root "$tmp/r" "$@" 2>&1) || rc=$?
  if [[ $rc -ne $want_rc || "$out" != *"$text"* ]]; then
    echo "selftest: $name: expected exit $want_rc and '$text', got exit $rc:"
    echo "$out"
    failed=1
  else
    echo "selftest: $name: exit $rc, as expected"
  fi
}

# expect NAME RC TEXT SED-SCRIPT: after `sed -i SED-SCRIPT` on the copied XML, the check exits RC
# and prints TEXT.
expect() {
  local name=$1 want_rc=$2 text=$3 script=$4
  copy
  sed -i "$script" "$tmp/r/$xml"
  if cmp -s "$tmp/r/$xml" "$root/$xml"; then
    echo "selftest: $name: the edit changed nothing (update this case)"
    failed=1
    return
  fi
  run_case "$name" "$want_rc" "$text"
}

copy
run_case "unchanged XML" 0 "members of the baseline are unchanged (0 added)"

expect "method removed" 1 "removed: method org.nerve.Lifecycle1.Manager.Forget" \
  '/<method name="Forget">/,/<\/method>/d'
expect "argument type changed" 1 "changed: method org.nerve.Lifecycle1.Manager.Reap: the baseline has in 'st', out 'ss'" \
  '/<method name="Reap">/,/<\/method>/s/<arg type="t" name="grace_usec"/<arg type="u" name="grace_usec"/'
expect "property type changed" 1 "changed: property org.nerve.Lifecycle1.Run.MainPID: the baseline has type u, access read" \
  's/<property name="MainPID" type="u"/<property name="MainPID" type="t"/'
expect "property access changed" 1 "changed: property org.nerve.Lifecycle1.Manager.Version" \
  's/<property name="Version" type="s" access="read"/<property name="Version" type="s" access="readwrite"/'
expect "signal argument removed" 1 "changed: signal org.nerve.Lifecycle1.Manager.RunExited: the baseline has signature 'siis'" \
  '/<signal name="RunExited">/,/<\/signal>/{/<arg type="s" name="cause"\/>/d}'
expect "interface removed" 1 "removed: interface org.nerve.Lifecycle1.Run" \
  '/<interface name="org.nerve.Lifecycle1.Run">/,/<\/interface>/d'
expect "method added" 0 "note: added, not in the baseline yet: method org.nerve.Lifecycle1.Manager.Ping" \
  's|^    <method name="Forget">|    <method name="Ping"><arg type="s" name="reply" direction="out"/></method>\n&|'
expect "argument renamed" 0 "note: method org.nerve.Lifecycle1.Manager.Reap: argument names" \
  '/<method name="Reap">/,/<\/method>/s/name="receipt_json"/name="receipt"/'

# --write records additions and refuses a break.
copy
sed -i '/<method name="Forget">/,/<\/method>/d' "$tmp/r/$xml"
run_case "--write of a break" 1 "refused: the XML breaks the baseline" --write
cmp -s "$tmp/r/$baseline" "$root/$baseline" || { echo "selftest: --write of a break changed the baseline"; failed=1; }
copy
sed -i 's|^    <method name="Forget">|    <method name="Ping"/>\n&|' "$tmp/r/$xml"
run_case "--write of an addition" 0 "(1 new, 0 broken)" --write
run_case "the check after --write" 0 "members of the baseline are unchanged (0 added)"

# --served: the served interface is the XML's, or the check fails.
copy
run_case "served as defined" 0 "nerved serves the" --served "$tmp/r/$xml"
cp "$tmp/r/$xml" "$tmp/served.xml"
sed -i 's/<property name="Frozen" type="b"/<property name="Frozen" type="s"/' "$tmp/served.xml"
run_case "served with another type" 1 "changed: property org.nerve.Lifecycle1.Run.Frozen" --served "$tmp/served.xml"
cp "$tmp/r/$xml" "$tmp/served.xml"
sed -i 's|^    <method name="Forget">|    <method name="Ping"/>\n&|' "$tmp/served.xml"
run_case "served with a member more" 1 "served but not in" --served "$tmp/served.xml"

exit $failed
