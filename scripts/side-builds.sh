#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# side-builds.sh TIMES_FILE: the builds that scripts/test.sh runs beside its ctest passes: the
# sanitizer tree (scripts/sanitize.sh, NERVE_SANITIZE_STEP=build) unless NERVE_TEST_SANITIZE=0, then
# the fuzz tree (scripts/fuzz.sh, NERVE_FUZZ_STEP=build) unless NERVE_TEST_FUZZ=0. No test of theirs
# runs here; test.sh runs those after its passes.
#
# The passes spend much of their time waiting (on a user manager's jobs, a grace period, a process's
# end), so a build beside them is nearly free, as long as it never takes the CPU from a test: these
# builds run at the lowest priority there is for an ordinary process. They are a session of their own
# (setsid) whose autogroup is niced to 19 (with the kernel's autogroups on, as on Debian, a nice value
# counts only within its session), and every compiler is niced to 19 too (for a kernel without them).
#
# Each build's wall time and exit status go to TIMES_FILE as "NAME<TAB>SECONDS<TAB>STATUS" lines,
# for test.sh's table; the output goes to standard output. Exit status: 0 if both built, else 1.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
times=${1:?usage: side-builds.sh TIMES_FILE}
: >"$times"
if [[ ${NERVE_SIDE_BUILDS_NICED:-0} != 1 ]]; then
  export NERVE_SIDE_BUILDS_NICED=1
  exec setsid nice -n 19 "$0" "$@"
fi
echo 19 >"/proc/$$/autogroup" 2>/dev/null || true  # no autogroups: nice alone
status=0
side_build() {  # side_build NAME SCRIPT STEP_VARIABLE
  local name=$1 script=$2 variable=$3 start=$SECONDS rc=0
  env "$variable=build" "$top/scripts/$script" || rc=$?
  printf '%s\t%s\t%s\n' "$name" "$(( SECONDS - start ))" "$rc" >>"$times"
  (( rc == 0 )) || status=1
}
[ "${NERVE_TEST_SANITIZE:-1}" = 0 ] || side_build "sanitizer build (beside the passes)" sanitize.sh NERVE_SANITIZE_STEP
[ "${NERVE_TEST_FUZZ:-1}" = 0 ] || side_build "fuzz build (beside the passes)" fuzz.sh NERVE_FUZZ_STEP
exit "$status"
