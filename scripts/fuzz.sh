#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds the fuzz targets (fuzz/) with clang and libFuzzer into build-fuzz/ (or $NERVE_FUZZ_BUILD_DIR)
# and runs each for a bounded time, starting from its committed corpus fuzz/corpus/<target>/. What a
# run finds new goes to a scratch folder in the build folder, never into the committed corpus; a
# crash stops that target and leaves its input in build-fuzz/artifacts/<target>/, and the script
# fails. (Fix the defect, then commit that input as fuzz/corpus/<target>/crash-<what>: every build
# replays the corpus as the test fuzz-replay.<target>.)
#   NERVE_FUZZ_SECONDS=N   time per target (default 20)
#   NERVE_FUZZ_SEED=N      libFuzzer's seed (default: a new one each run, as exploring wants; test.sh
#                          passes a fixed one so that CI's verdict is repeatable: the same mutations in
#                          the same order, only how far they get in the time depends on the machine)
#   NERVE_FUZZ_TARGETS="record receipt"  only these targets (default: all of fuzz/CMakeLists.txt's)
#   NERVE_BUILD_JOBS=N   parallel compiles (default: every core)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${NERVE_FUZZ_BUILD_DIR:-$top/build-fuzz}
seconds=${NERVE_FUZZ_SECONDS:-20}
targets=${NERVE_FUZZ_TARGETS:-$(sed -n 's/^nerve_fuzz_target(\([a-z_]*\) .*/\1/p' "$top/fuzz/CMakeLists.txt")}

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# Only what the targets link is built (fuzz/CMakeLists.txt: base, record and one file of nerved); the
# tests are not configured. Warnings are clang's and not errors here: the gcc builds hold that line.
cmake -S "$top" -B "$build" "${launcher[@]}" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
  -DNERVE_FUZZ=ON -DNERVE_BUILD_TESTS=OFF -DNERVE_WERROR=OFF >/dev/null
cmake --build "$build" -j"${NERVE_BUILD_JOBS:-$(nproc)}" --target nerve_fuzz_targets

# A finding is fatal and its report whole; leaks count (LeakSanitizer works here, not under ptrace).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for t in $targets; do
  work=$build/corpus/$t artifacts=$build/artifacts/$t
  mkdir -p "$work" "$artifacts"
  dict=()  # the target's tokens (JSON, field names, units), where it has them
  [ -e "$top/fuzz/dict/$t.dict" ] && dict=(-dict="$top/fuzz/dict/$t.dict")
  seed=()
  [ -n "${NERVE_FUZZ_SEED:-}" ] && seed=(-seed="$NERVE_FUZZ_SEED")
  start=$SECONDS
  if "$build/fuzz/fuzz_$t" "${seed[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       "${dict[@]}" -artifact_prefix="$artifacts/" "$work" "$top/fuzz/corpus/$t" >"$build/fuzz-$t.log" 2>&1; then
    echo "fuzz.sh: $t: no finding in $(( SECONDS - start )) s ($(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$build/fuzz-$t.log" | grep -o '[0-9]*$') runs)"
  else
    status=1
    echo "fuzz.sh: $t: FOUND A DEFECT (input in $artifacts/); its report:" >&2
    grep -v '^#[0-9]' "$build/fuzz-$t.log" | tail -60 >&2
  fi
done
exit "$status"
