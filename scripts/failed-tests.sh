#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# failed-tests.sh BUILD_DIR: after a ctest run in BUILD_DIR that failed, says why each failed test
# (ctest's Testing/Temporary/LastTestsFailed.log) failed: the first 40 lines of its output in
# Testing/Temporary/LastTest.log that say so (gtest's failures, Go's and Python's, a harness's or a
# script's errors), each with the 3 lines after it. The first, because a test's own failures come
# before the logs it prints after them (nerved's, for one). scripts/test.sh prints it right after a
# pass that failed, next to ctest's summary: a reader of a long CI log (or of the part of it that CI
# keeps) sees the cause there, not only the test's name. Call it only after a ctest run that failed:
# ctest leaves LastTestsFailed.log as it was when no test fails.
set -u
dir=${1:?usage: failed-tests.sh BUILD_DIR}/Testing/Temporary
[[ -r $dir/LastTestsFailed.log && -r $dir/LastTest.log ]] || exit 0
why='Failure$|FAILED|--- FAIL|^FAIL|_test\.go:[0-9]+:|Traceback|Error:|error:|: FAIL|timed out|Timeout'
while IFS=: read -r _ name; do
  [[ -n $name ]] || continue
  echo "failed-tests: why $name failed (from $dir/LastTest.log):"
  # The test's own block of LastTest.log: from its "N/M Testing: NAME" line to the next test's.
  awk -v t="$name" '
    /^[0-9]+\/[0-9]+ Testing: / { inside = (substr($0, index($0, "Testing: ") + 9) == t) }
    inside' "$dir/LastTest.log" |
    grep -E -A3 "$why" | grep -v -e '^\[ RUN' -e '^--$' | head -n 40 | sed 's/^/  | /'
done < "$dir/LastTestsFailed.log"
