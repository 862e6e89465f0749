#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# with-nerved.sh NERVED NERVECTL -- CMD [ARG...]: runs CMD against a nerved of its own, as the Go
# package's integration test (go/integration_test.go) needs it. Must run inside
# tests/harness/with-user-manager.sh (ctest does that): NERVED starts on a temporary runs folder,
# its READY on --ready-fd is waited for (bounded), CMD runs with NERVE_TEST_NERVECTL=NERVECTL, and
# nerved is stopped (SIGTERM; SIGKILL after 10 s). Exit status: CMD's; 2 when nerved could not be
# started (its log is printed), or when not under the harness. On a failure of CMD, nerved's log is
# printed too.
set -u
if (( $# < 4 )) || [[ $3 != -- ]]; then
    echo "usage: with-nerved.sh NERVED NERVECTL -- CMD [ARG...]" >&2
    exit 2
fi
nerved=$1 nervectl=$2
shift 3
if [[ -z ${NERVE_TEST_PRIVATE_MANAGER:-} || -z ${DBUS_SESSION_BUS_ADDRESS:-} ]]; then
    echo "with-nerved: not under tests/harness/with-user-manager.sh (NERVE_TEST_PRIVATE_MANAGER or" \
         "DBUS_SESSION_BUS_ADDRESS is not set); run it with ctest -R '^go\\.'" >&2
    exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nerve-go.XXXXXX") || exit 2
nerved_pid=
stop_nerved() {
    [[ -n $nerved_pid ]] || return 0
    kill -TERM "$nerved_pid" 2>/dev/null
    # A bound on the stop: SIGKILL by pid after 10 s (the timer ends with nerved).
    ( sleep 10; kill -KILL "$nerved_pid" 2>/dev/null ) &
    local timer=$!
    wait "$nerved_pid"
    local rc=$?
    kill "$timer" 2>/dev/null
    wait "$timer" 2>/dev/null
    nerved_pid=
    (( rc == 0 )) || echo "with-nerved: nerved exited with $rc after SIGTERM" >&2
}
show_log() {
    echo "---- nerved's log ----" >&2
    tail -n 80 "$tmp/nerved.log" >&2
}
trap 'stop_nerved; rm -rf "$tmp"' EXIT

mkdir -m 0700 "$tmp/state"
mkfifo "$tmp/ready"
"$nerved" --ready-fd 3 --verbose --runs-dir "$tmp/state/runs" 3>"$tmp/ready" >"$tmp/nerved.log" 2>&1 &
nerved_pid=$!
said=
read -r -t 20 said <"$tmp/ready"
if [[ $said != READY ]]; then
    echo "with-nerved: nerved (pid $nerved_pid) did not say READY within 20 s (it said '$said')" >&2
    show_log
    exit 2
fi

NERVE_TEST_NERVECTL=$nervectl "$@"
status=$?
(( status == 0 )) || show_log
exit "$status"
