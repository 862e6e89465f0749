#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# with-nerved.sh: run one command against a nerved of its own, on a fresh runs folder.
#
# Usage: tests/harness/with-nerved.sh [--nerved PATH] [--keep-log] -- CMD [ARGS...]
#
# Starts nerved (PATH, default $NERVE_NERVED, else `nerved` in PATH) with --runs-dir on a new
# temporary folder and --ready-fd on a pipe, waits (at most 20 s) until it writes READY, which it
# does once it owns its bus name, runs CMD, then stops nerved with SIGTERM (SIGKILL if it is still
# there after 10 s) and removes the folder. Meant to run inside tests/harness/with-user-manager.sh
# (the session bus and user manager nerved drives); a test program in any language uses it:
#
#   with-user-manager.sh -- with-nerved.sh --nerved build/daemon/nerved -- python3 -m unittest ...
#
# CMD sees NERVE_TEST_RUNS_DIR (the runs folder), NERVE_TEST_NERVED_PID and NERVE_TEST_NERVED_LOG
# (nerved's stdout and stderr, printed on stderr when CMD or nerved fails, or with --keep-log).
# Exit status: CMD's; 125 when nerved cannot be started or did not get ready, or exited with an
# error after CMD; 2 for bad usage.
set -u

nerved=${NERVE_NERVED:-nerved}
keep_log=0
while (( $# > 0 )); do
    case $1 in
        --nerved) nerved=${2:?--nerved needs a path}; shift 2 ;;
        --keep-log) keep_log=1; shift ;;
        --) shift; break ;;
        *) echo "usage: with-nerved.sh [--nerved PATH] [--keep-log] -- CMD [ARGS...]" >&2; exit 2 ;;
    esac
done
(( $# > 0 )) || { echo "with-nerved: no command given" >&2; exit 2; }
[[ -n ${DBUS_SESSION_BUS_ADDRESS:-} ]] ||
    { echo "with-nerved: no session bus (DBUS_SESSION_BUS_ADDRESS); run it inside with-user-manager.sh" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nerve-with-nerved.XXXXXX") || exit 125
log=$tmp/nerved.log
pid=
cleanup() {
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
show_log() { echo "with-nerved: nerved's log ($log):" >&2; sed 's/^/  nerved: /' "$log" >&2; }

mkdir -m 0700 "$tmp/runs"
mkfifo "$tmp/ready"
"$nerved" --runs-dir "$tmp/runs" --ready-fd 3 --verbose >"$log" 2>&1 3>"$tmp/ready" &
pid=$!
# Opening the fifo waits for nerved's side to be open; nerved closing it without READY (it exited)
# ends the read at once.
exec {ready}<"$tmp/ready"
said=
read -r -t 20 -u "$ready" said
read_status=$?
exec {ready}<&-
if [[ $said != READY ]]; then
    if (( read_status > 128 )); then
        echo "with-nerved: $nerved did not report READY within 20 s (got '${said}')" >&2
    else
        wait "$pid"
        echo "with-nerved: $nerved exited with status $? before it reported READY" >&2
        pid=
    fi
    show_log; exit 125
fi

export NERVE_TEST_RUNS_DIR=$tmp/runs NERVE_TEST_NERVED_PID=$pid NERVE_TEST_NERVED_LOG=$log
"$@"
status=$?

kill -TERM "$pid" 2>/dev/null
# Bounded wait for nerved's exit: a watcher SIGKILLs it after 10 s.
( sleep 10; kill -KILL "$pid" 2>/dev/null ) &
watcher=$!
wait "$pid"
nerved_status=$?
kill "$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null
pid=
if (( nerved_status != 0 )); then
    echo "with-nerved: nerved exited with $nerved_status after SIGTERM" >&2
    show_log
    (( status == 0 )) && status=125
elif (( status != 0 || keep_log )); then
    show_log
fi
exit "$status"
