#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The sanitizer pass: builds nerve with NERVE_SANITIZE=ON (AddressSanitizer with LeakSanitizer, and
# UndefinedBehaviorSanitizer, every finding fatal) into build-asan/ (or $NERVE_ASAN_BUILD_DIR), and
# runs the unit tests (their program once, with the fuzz corpora's replays) and a chosen part of the integration tests
# there (NERVE_SANITIZE_FULL=1: all of them): nerved,
# nervectl, nervectl-full and nerve-held of that build, under the harness's private user managers.
# Only what those tests run is built (no benchmark, no soak programs). Arguments go to ctest.
#   NERVE_TEST_JOBS=N   ctest's parallel tests (default: twice the cores, as scripts/test.sh)
#   NERVE_BUILD_JOBS=N  parallel compiles (default: every core)
#   NERVE_SANITIZE_MINUTES=N  the bound of the tests (default 12): ctest stops every test still
#                       running then and fails it, and fails every test not yet started
#   NERVE_SANITIZE_STEP=build|test  only that half (default: both): scripts/test.sh builds while its
#                       ctest passes run, and tests after them
# scripts/test.sh runs it after its own passes.
set -euo pipefail
step=${NERVE_SANITIZE_STEP:-all}
case $step in
  all|build|test) ;;
  *) echo "sanitize.sh: NERVE_SANITIZE_STEP is '$step' (build, test, or unset for both)" >&2; exit 2 ;;
esac
top=$(cd "$(dirname "$0")/.." && pwd)
build=${NERVE_ASAN_BUILD_DIR:-$top/build-asan}
werror=${NERVE_WERROR:-$([ "${CI:-}" = true ] && echo ON || echo OFF)}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# Ninja, where it is installed, for a new build folder (scripts/build.sh says why).
generator=()
[[ ! -e $build/CMakeCache.txt ]] && command -v ninja >/dev/null && generator=(-G Ninja)
# The integration tests it runs (docs/testing.md says why these): those that drive nerved's own code
# where memory errors live (records read back, crash and restart, launch and reap, the option and
# property parses, the reaper, escaped scopes, engines and the supervisor, error paths under EIO, the
# private socket), unless NERVE_SANITIZE_FULL=1 asks for the whole suite. Suites by the start of
# their names; a parameterized test is "Instance/Suite.Test/param".
suites='ALaunch|ARun|AReap|RunControls|AnInvalidRunId|AFinalReceipt|ARecordOfAnotherBoot|CorruptRecords|Reconcile|ANervedKilled|NervedTest|HardeningRecords|HardeningFaults|A[A-Za-z]*SystemdBus|AnEscapedScope|AnEngine|ASupervisor'
integration="^([A-Za-z]+/)?($suites)"
# Only the files that hold those suites are built (a sanitized compile is slow; the others would be
# built for nothing): every *_test.cpp with a TEST, TEST_F or TEST_P of one of them.
files=''
if [ "${NERVE_SANITIZE_FULL:-0}" = 1 ]; then
  integration=.
else
  files=$(grep -lE "^TEST(_F|_P)?\(($suites)" "$top"/tests/integration/*_test.cpp | xargs -n1 basename | paste -sd';')
  [ -n "$files" ] || { echo "sanitize.sh: no integration test file holds the chosen suites" >&2; exit 1; }
fi
if [ "$step" != test ]; then
  cmake -S "$top" -B "$build" "${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Debug -DNERVE_SANITIZE=ON -DNERVE_WERROR="$werror" \
    -DNERVE_INTEGRATION_FILES="$files" >/dev/null
  echo "sanitize.sh: integration test files built: ${files:-all}"
  fuzz_replays=$(sed -n 's/^nerve_fuzz_target(\([a-z_]*\) .*/fuzz_\1/p' "$top/fuzz/CMakeLists.txt")
  start=$SECONDS
  # shellcheck disable=SC2086 # one target per word
  cmake --build "$build" -j"${NERVE_BUILD_JOBS:-$(nproc)}" --target nerve_unit_tests nerve_integration_tests nervectl $fuzz_replays
  echo "sanitize.sh: the build took $(( SECONDS - start )) s"
  [ "$step" = build ] && exit 0
fi
[ -x "$build/tests/unit/nerve_unit_tests" ] ||
  { echo "sanitize.sh: $build has no sanitizer build (NERVE_SANITIZE_STEP=build first)" >&2; exit 1; }

# Every program of the build reads these (the harness and the tests pass the environment on; nerve-held,
# started with an empty environment, has the defaults, leaks detected too). LeakSanitizer works here,
# in the harness's namespaces and as an unprivileged account; it cannot work under ptrace (strace,
# gdb). verify_asan_link_order=0: the fault tests LD_PRELOAD their shim ahead of the runtime.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:verify_asan_link_order=0:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$build"
# Left to the normal passes: the harness's own tests (harness-teardown, harness.*: no nerve code), and
# HardeningFds.OutOfFds*, which takes every fd from nerved: UBSan's vptr check needs a pipe to read a
# vtable safely, and without one it reports a valid object as having an invalid vptr.
# go.* are Go programs (no C++ to sanitize; pass 1 runs them) and are not built here; libnerve-abi
# checks what the shipped libnerve.so links, which a sanitizer build changes on purpose (libasan).
# clock.* run tests again with libfaketime preloaded (the date, not memory, is what they vary; pass 1
# runs them).
exclude='^harness|^HardeningFds\.OutOfFds|^go\.|^libnerve-abi$|^clock\.'
# ctest's --stop-time (a time of day) bounds the whole pass, and ends tests as its --timeout does.
stop=$(date -d "+${NERVE_SANITIZE_MINUTES:-12} min" +%H:%M:%S)
jobs=${NERVE_TEST_JOBS:-$(( $(nproc) * 2 ))}  # as scripts/test.sh
start=$SECONDS
status=0
# The unit tests' program once, every test in one process: through ctest each of its ~500 tests is a
# process of its own, and a sanitized process costs about a second to start and to end (LeakSanitizer's
# scan at exit): 252 s through ctest, 4 s at once. Then the other unit-labelled tests (the fuzz
# corpus replays, the front of nervectl, ...), named in lower case where a gtest suite never is.
echo "sanitize.sh: tests/unit/nerve_unit_tests, every test in one process"
./tests/unit/nerve_unit_tests --gtest_brief=1 || status=$?
ctest --output-on-failure --timeout 600 --stop-time "$stop" -j"$jobs" -L unit -E "$exclude|^[A-Z]" "$@" ||
  status=$?
ctest --output-on-failure --timeout 600 --stop-time "$stop" -j"$jobs" -L integration \
  -R "$integration" -E "$exclude" "$@" || status=$?
echo "sanitize.sh: the tests took $(( SECONDS - start )) s (bound: ${NERVE_SANITIZE_MINUTES:-12} min)"
exit "$status"
