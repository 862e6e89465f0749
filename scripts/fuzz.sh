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
#   NERVE_FUZZ_JOBS=N    targets run at once, each on a core (default: every core)
#   NERVE_BUILD_JOBS=N   parallel compiles (default: every core)
#   NERVE_FUZZ_STEP=build|run  only that half (default: both): scripts/test.sh builds while its ctest
#                        passes run, and fuzzes after them
set -euo pipefail
step=${NERVE_FUZZ_STEP:-all}
case $step in
  all|build|run) ;;
  *) echo "fuzz.sh: NERVE_FUZZ_STEP is '$step' (build, run, or unset for both)" >&2; exit 2 ;;
esac
top=$(cd "$(dirname "$0")/.." && pwd)
build=${NERVE_FUZZ_BUILD_DIR:-$top/build-fuzz}
seconds=${NERVE_FUZZ_SECONDS:-20}
targets=${NERVE_FUZZ_TARGETS:-$(sed -n 's/^nerve_fuzz_target(\([a-z_]*\) .*/\1/p' "$top/fuzz/CMakeLists.txt")}

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# Ninja, where it is installed, for a new build folder (scripts/build.sh says why).
generator=()
[[ ! -e $build/CMakeCache.txt ]] && command -v ninja >/dev/null && generator=(-G Ninja)
# Only what the targets link is built (fuzz/CMakeLists.txt: base, record and one file of nerved); the
# tests are not configured. Warnings are clang's and not errors here: the gcc builds hold that line.
if [ "$step" != run ]; then
  cmake -S "$top" -B "$build" "${generator[@]}" "${launcher[@]}" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
    -DNERVE_FUZZ=ON -DNERVE_BUILD_TESTS=OFF -DNERVE_WERROR=OFF >/dev/null
  cmake --build "$build" -j"${NERVE_BUILD_JOBS:-$(nproc)}" --target nerve_fuzz_targets
  [ "$step" = build ] && exit 0
fi

# A finding is fatal and its report whole; leaks count (LeakSanitizer works here, not under ptrace).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# One target: its run, then its verdict in fuzz-<target>.verdict (what is printed, in the targets'
# order once all have ended). Each target is one process on one core; NERVE_FUZZ_JOBS of them run at
# once (default: every core), each for its own NERVE_FUZZ_SECONDS.
fuzz_one() {
  local t=$1 work=$build/corpus/$1 artifacts=$build/artifacts/$1 start=$SECONDS
  mkdir -p "$work" "$artifacts"
  local dict=() seed=()  # the target's tokens (JSON, field names, units), where it has them
  [ -e "$top/fuzz/dict/$t.dict" ] && dict=(-dict="$top/fuzz/dict/$t.dict")
  [ -n "${NERVE_FUZZ_SEED:-}" ] && seed=(-seed="$NERVE_FUZZ_SEED")
  if "$build/fuzz/fuzz_$t" "${seed[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       "${dict[@]}" -artifact_prefix="$artifacts/" "$work" "$top/fuzz/corpus/$t" >"$build/fuzz-$t.log" 2>&1; then
    echo "fuzz.sh: $t: no finding in $(( SECONDS - start )) s ($(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$build/fuzz-$t.log" | grep -o '[0-9]*$') runs)" >"$build/fuzz-$t.verdict"
  else
    { echo "fuzz.sh: $t: FOUND A DEFECT (input in $artifacts/); its report:"
      grep -v '^#[0-9]' "$build/fuzz-$t.log" | tail -60; } >"$build/fuzz-$t.verdict"
    return 1
  fi
}
jobs=${NERVE_FUZZ_JOBS:-$(nproc)}
running=0
for t in $targets; do
  rm -f "$build/fuzz-$t.verdict"
  if (( running >= jobs )); then wait -n || true; running=$(( running - 1 )); fi
  fuzz_one "$t" &
  running=$(( running + 1 ))
done
wait
status=0
for t in $targets; do
  if [[ -r $build/fuzz-$t.verdict ]] && head -1 "$build/fuzz-$t.verdict" | grep -q ': no finding in '; then
    cat "$build/fuzz-$t.verdict"
  else
    status=1
    cat "$build/fuzz-$t.verdict" >&2 2>/dev/null || echo "fuzz.sh: $t: no verdict (see $build/fuzz-$t.log)" >&2
  fi
done
exit "$status"
