#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The benchmark: nerve against systemd-run, systemctl and a raw sdbus-c++ client, measured
# in one run inside a private user manager (tests/harness/with-user-manager.sh). Figures, never
# pass/fail. docs/performance.md explains the rows and keeps the latest table.
#
# Usage: scripts/bench.sh [--smoke] [--iterations N] [--only LIST] [--out DIR] [--update-docs]
#   --smoke         one iteration, sizes / 100 (under a minute): checks that the benchmark works
#   --iterations N  samples per row, regime and contender (default 30)
#   --only LIST     comma-separated scenarios: engine,cli,throughput,idle,startup,memory; and profile
#                   (not in the default set): strace of nerved into <out>/strace-{counts,timeline}.txt
#   --out DIR       where bench.json and bench.md go (default: <build>/bench/out)
#   --update-docs   replace the table in docs/performance.md with this run's (with the machine line)
# Environment: NERVE_BUILD_DIR (default ./build); NERVE_BENCH_NO_BUILD=1 skips the build.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${NERVE_BUILD_DIR:-$top/build}
out='' update_docs=0 args=()
while (($#)); do
  case $1 in
    --smoke) args+=(--smoke); shift ;;
    --iterations|--only) [[ $# -ge 2 ]] || { echo "bench.sh: $1 needs a value" >&2; exit 2; }; args+=("$1" "$2"); shift 2 ;;
    --out) [[ $# -ge 2 ]] || { echo "bench.sh: --out needs a value" >&2; exit 2; }; out=$2; shift 2 ;;
    --update-docs) update_docs=1; shift ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
out=${out:-$build/bench/out}
if [[ ${NERVE_BENCH_NO_BUILD:-0} != 1 ]]; then
  [[ -f $build/CMakeCache.txt ]] || cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-RelWithDebInfo}" >/dev/null
  cmake --build "$build" --target nerved nervectl nerve_bench -j"$(nproc)" >/dev/null
fi
work=$out/work
rm -rf "$work"
mkdir -p "$work" "$out"
"$top/tests/harness/with-user-manager.sh" -- "$build/bench/nerve_bench" --nerved "$build/daemon/nerved" \
  --nervectl "$build/client/nervectl" --work "$work" --out "$out" "${args[@]}"
rm -rf "$work"
echo "bench.sh: wrote $out/bench.json and $out/bench.md" >&2
if ((update_docs)); then
  # The table sits between two marker lines of docs/performance.md.
  docs=$top/docs/performance.md
  awk -v table="$out/bench.md" '
    /<!-- bench-table:end -->/ { skip = 0 }
    !skip { print }
    /<!-- bench-table:begin -->/ { while ((getline line < table) > 0) print line; skip = 1 }
  ' "$docs" >"$docs.new" && mv "$docs.new" "$docs"
  echo "bench.sh: updated the table in $docs" >&2
fi
