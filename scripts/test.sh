#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The README's test command: installs what is needed, builds, and runs the tests (unit tests, docs
# checks, and the integration tests, each inside its own private systemd user manager via
# tests/harness/). The soak tests (label soak: the soak and the stress tests, minutes) run too when
# NERVE_TEST_SOAK=1.
#
# Run as root, the integration suite runs twice: once as root, and once more as an unprivileged account
# with a delegated cgroup subtree, the way user@.service delegates one (the harness's --user mode, chosen
# by NERVE_HARNESS_USER). Root hides permission mistakes; the second pass finds them.
# Then both again on nerved's other backend (--backend cgroup, docs/operations.md "Backends"): the
# harness's --no-manager mode (NERVE_HARNESS_BACKEND=cgroup) gives each test a private cgroup namespace
# with a writable cgroup2 mount and a session bus, and no user manager, as a privileged container
# would; as root, and as the account over its delegated subtree. NERVE_TEST_BACKENDS="systemd cgroup"
# (the default) chooses which backends' passes run.
#   NERVE_TEST_USER=NAME  the account of the second pass (default nerve-test). If it does not exist it is
#                         created here (useradd, a system account with a temporary home) and removed on exit;
#                         an account that existed before is used and left alone. Empty: no second pass.
# Arguments are passed to both ctest runs (e.g. -R Pattern).
#
# Then, unless NERVE_TEST_SANITIZE=0, the sanitizer pass (scripts/sanitize.sh: the unit tests and a
# chosen part of the integration tests again, built with ASan and UBSan in build-asan/, as the
# caller, bounded by NERVE_SANITIZE_MINUTES), and unless NERVE_TEST_FUZZ=0, the fuzz pass
# (scripts/fuzz.sh: each fuzz target for NERVE_FUZZ_SECONDS, built with clang in build-fuzz/, from a
# fixed seed). Either failing fails the run. Their two builds run beside passes 1 to 4, at the lowest
# CPU priority (scripts/side-builds.sh): the passes spend much of their time waiting. Each step prints
# how long it took, and the run ends with a table of every step's wall time.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
started=$SECONDS
steps=()  # "NAME<TAB>SECONDS<TAB>STATUS" of each step, for the table at the end

timed() {  # timed LABEL CMD...: runs CMD, prints how long it took and keeps that for the table
  local label=$1 start=$SECONDS rc=0
  shift
  "$@" || rc=$?
  echo "test.sh: $label took $(( SECONDS - start )) s (exit $rc)"
  steps+=("$label"$'\t'"$(( SECONDS - start ))"$'\t'"$rc")
  return "$rc"
}

timed "install-deps" "$top/scripts/install-deps.sh"
umask 022  # the build tree must be readable by the unprivileged pass
timed "build (build/)" "$top/scripts/build.sh"
build=${NERVE_BUILD_DIR:-$top/build}
cd "$build"
build=$PWD  # absolute, for check_access
# Tests at once: twice the cores. A test mostly waits (for a user manager's job, a grace period, a
# process's end): at 2 on 2 cores, pass 1 kept the CPU a third busy.
jobs=${NERVE_TEST_JOBS:-$(( $(nproc) * 2 ))}

# The sanitizer and fuzz trees are built beside passes 1 to 4 (scripts/side-builds.sh: its own
# session, niced to 19, its output in build/side-builds.log); their tests run after the passes.
side_pid='' side_times=$build/side-builds.times side_log=$build/side-builds.log
if [[ ${NERVE_TEST_SANITIZE:-1} != 0 || ${NERVE_TEST_FUZZ:-1} != 0 ]]; then
  "$top/scripts/side-builds.sh" "$side_times" >"$side_log" 2>&1 &
  side_pid=$!
  echo "test.sh: the sanitizer and fuzz builds run beside the passes (pid $side_pid, output in $side_log)"
fi
stop_side_builds() {  # on any exit: no build of ours outlives test.sh
  [[ -n $side_pid ]] && kill -0 "$side_pid" 2>/dev/null && kill -TERM -- "-$side_pid" 2>/dev/null
  return 0
}
trap stop_side_builds EXIT

# The table of every step (test.sh's own and the side builds'), with the whole run's wall time.
print_table() {
  local line name secs rc
  [[ -r $side_times ]] && while IFS= read -r line; do steps+=("$line"); done <"$side_times"
  echo "test.sh: every step's wall time (the side builds ran beside passes 1 to 4):"
  printf 'test.sh:   %-72s %7s %5s\n' step seconds exit
  for line in "${steps[@]}"; do
    IFS=$'\t' read -r name secs rc <<<"$line"
    printf 'test.sh:   %-72s %7s %5s\n' "$name" "$secs" "$rc"
  done
  printf 'test.sh:   %-72s %7s %5s\n' "the whole run" "$(( SECONDS - started ))" "$status"
}

# The sanitizer and the fuzz passes, after the others however those went; then the exit status.
finish() {
  if [[ -n $side_pid ]]; then
    local rc=0
    timed "waiting for the side builds after the passes" wait "$side_pid" || rc=$?
    side_pid=''
    if (( rc != 0 )); then
      status=$rc  # counted here, not left to its tests: a tree built before may still hold old binaries
      echo "test.sh: a side build failed (exit $rc); the end of $side_log:"
      tail -n 40 "$side_log" | sed 's/^/  | /'
    fi
  fi
  [ "${NERVE_TEST_SANITIZE:-1}" = 0 ] || NERVE_SANITIZE_STEP=test \
    timed "sanitizer tests (ASan + UBSan: unit and chosen integration tests)" "$top/scripts/sanitize.sh" || status=$?
  # A fixed seed: a CI verdict that can be repeated (scripts/fuzz.sh without one explores anew).
  [ "${NERVE_TEST_FUZZ:-1}" = 0 ] || NERVE_FUZZ_STEP=run NERVE_FUZZ_SEED=${NERVE_FUZZ_SEED:-20261202} \
    timed "fuzz runs" "$top/scripts/fuzz.sh" || status=$?
  print_table
  local f
  for f in "${failed[@]}"; do echo "test.sh: FAILED in $f"; done
  exit "$status"
}

failed=()  # "<the pass's name>: <its failed tests>" for each ctest pass that failed, said again at the end
soak=(-LE soak)
[ "${NERVE_TEST_SOAK:-0}" = 1 ] && soak=()
backends=${NERVE_TEST_BACKENDS:-systemd cgroup}
status=0
# backend_pass NAME BACKEND [USER]: the tests with nerved on BACKEND: pass 1 (the systemd backend as
# the caller) runs all of them; the others only those of label integration, the tests that start a
# nerved, whose outcome the account and the backend can change. The rest are the same program
# with the same input in every pass: the unit and docs tests start no harness and read neither
# NERVE_HARNESS_BACKEND nor NERVE_HARNESS_USER, and the install and bench tests set
# NERVE_HARNESS_BACKEND=systemd themselves (tests/CMakeLists.txt, bench/CMakeLists.txt).
backend_pass() {
  local name=$1 backend=$2 user=$3 label=()
  shift 3
  [[ " $backends " == *" $backend "* ]] || { echo "test.sh: $name skipped (NERVE_TEST_BACKENDS=$backends)"; return 0; }
  [[ -n $user || $backend != systemd ]] && label=(-L integration)
  local rc=0
  rm -f Testing/Temporary/LastTestsFailed.log  # ctest leaves an old one when nothing fails
  NERVE_HARNESS_BACKEND=$backend NERVE_HARNESS_USER=$user timed "$name" \
    ctest --output-on-failure --timeout 600 -j"$jobs" "${soak[@]}" "${label[@]}" "$@" || rc=$?
  if (( rc != 0 )); then
    "$top/scripts/failed-tests.sh" "$build"  # why, next to ctest's summary
    failed+=("$name: $(cut -d: -f2- Testing/Temporary/LastTestsFailed.log 2>/dev/null | paste -sd' ')")
  fi
  return "$rc"
}
backend_pass "pass 1 (as $(id -un), systemd backend)" systemd "" "$@" || status=$?

test_user=${NERVE_TEST_USER-nerve-test}
unprivileged=1
if [[ $(id -u) -ne 0 || -z $test_user ]]; then
  echo "test.sh: no unprivileged passes (${test_user:+not root}${test_user:-NERVE_TEST_USER is empty})"
  unprivileged=0
fi

readonly account_marker="nerve test account (scripts/test.sh)"
# Creates the account unless it exists; removes it on exit only if it is ours (our marker in its
# comment field: made here, now or by an earlier run that was interrupted).
ensure_account() {
  if ! getent passwd "$test_user" >/dev/null; then
    # A home of its own: the user manager keeps persistent unit settings there (SetUnitProperties).
    useradd --system --user-group --create-home --home-dir "$(mktemp -u /tmp/nerve-test-home.XXXXXX)" --shell /usr/sbin/nologin \
      --comment "$account_marker" "$test_user"
    echo "test.sh: created account $test_user"
  fi
  if [[ $(getent passwd "$test_user" | cut -d: -f5) == "$account_marker" ]]; then
    trap 'revoke_access; stop_side_builds; userdel --remove "$test_user" 2>/dev/null && echo "test.sh: removed account $test_user"' EXIT
  fi
}

# Every folder from / down to the build tree must be searchable by the account, and the test programs
# and the harness readable and executable. A folder that is not (a clone under /root, mode 0700) gets
# search permission for this one account alone, by an ACL entry that is removed again on exit; anything
# else that blocks is named and fails the run.
granted=()
revoke_access() {
  local d
  for d in "${granted[@]}"; do setfacl -x "u:$test_user" "$d" && echo "test.sh: removed $test_user's search ACL from $d"; done
}
check_access() {
  local as_user=(setpriv --reuid="$(id -u "$test_user")" --regid="$(id -g "$test_user")" --init-groups --)
  local path=/ part
  local -a parts
  IFS=/ read -r -a parts <<<"${build#/}"
  for part in "${parts[@]}"; do
    path=${path%/}/$part
    "${as_user[@]}" test -x "$path" && continue
    setfacl -m "u:$test_user:--x" "$path" && granted+=("$path") &&
      echo "test.sh: gave $test_user search permission on $path (an ACL entry, removed on exit)"
    "${as_user[@]}" test -x "$path" ||
      { echo "test.sh: $test_user cannot enter $path ($(stat -c '%A %U:%G' "$path")); clone elsewhere or set NERVE_TEST_USER=" >&2; return 1; }
  done
  for path in "$build"/tests/integration/nerve_integration_tests "$build"/daemon/nerved "$build"/client/nervectl "$build"/client/nervectl-full \
              "$top"/tests/harness/with-user-manager.sh; do
    "${as_user[@]}" test -r "$path" -a -x "$path" ||
      { echo "test.sh: $test_user cannot read and run $path ($(stat -c '%A %U:%G' "$path"))" >&2; return 1; }
  done
}

if (( unprivileged )); then
  trap 'revoke_access; stop_side_builds' EXIT
  ensure_account
  check_access
  backend_pass "pass 2 (unprivileged '$test_user': integration tests, systemd backend)" systemd "$test_user" "$@" || status=$?
fi
backend_pass "pass 3 (as $(id -un): integration tests, cgroup backend)" cgroup "" "$@" || status=$?
if (( unprivileged )); then
  backend_pass "pass 4 (unprivileged '$test_user': integration tests, cgroup backend)" cgroup "$test_user" "$@" || status=$?
fi
finish
