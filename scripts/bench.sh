#!/usr/bin/env bash
# Measures nerve's steps (bench/bench.cpp) against a real user manager: builds, then runs nerved and
# nerve_bench inside tests/harness/with-user-manager.sh. Usage: scripts/bench.sh [RUNS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${NERVE_BUILD_DIR:-$top/build}
"$top/scripts/build.sh" >/dev/null
exec "$top/tests/harness/with-user-manager.sh" -- bash -c '
  set -euo pipefail
  build=$1; runs=$2
  work=$(mktemp -d); trap "kill \$np 2>/dev/null; wait \$np 2>/dev/null; rm -rf $work" EXIT
  mkfifo "$work/ready"
  "$build/daemon/nerved" --runs-dir "$work/runs" --ready-fd 3 ${NERVE_BENCH_VERBOSE:+--verbose} 3>"$work/ready" 2>"$work/nerved.log" & np=$!
  read -r -t 10 _ <"$work/ready"
  "$build/bench/nerve_bench" "$runs"
  [ -z "${NERVE_BENCH_VERBOSE:-}" ] || cp "$work/nerved.log" /tmp/nerve-bench-nerved.log
' bench "$build" "${1:-50}"
