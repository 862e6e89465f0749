#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-harness-teardown.sh: the harness leaves nothing behind even when it is SIGKILLed (as a ctest
# timeout does): its private manager, the manager's dbus-daemon and the command are ended, and its
# cgroup folder and run folder are removed (by the harness's watchdog, with-user-manager.sh).
#
# Usage: tests/harness/check-harness-teardown.sh HARNESS
# Runs HARNESS -- sh -c 'echo ready >FILE; sleep 600', waits until the command runs (the file), takes
# the pids in the harness's cgroup folder, SIGKILLs the harness, and then waits (bounded) until every
# one of those pids is gone and the folder is removed. Exit 0 when so, 1 (with what is left) if not,
# 77 (skipped) when not root.
set -u
harness=${1:?usage: check-harness-teardown.sh HARNESS}
(( EUID == 0 )) || { echo "skipped: the harness needs root"; exit 77; }

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
ready=$tmp/ready
# With NERVE_HARNESS_USER (scripts/test.sh's unprivileged pass) the command runs as that account: it
# must be able to write its ready file.
if [[ -n ${NERVE_HARNESS_USER:-} ]]; then chown "$NERVE_HARNESS_USER" "$tmp" || exit 1; fi

NERVE_FORCE_PRIVATE_MANAGER=1 "$harness" -- sh -c "echo ready >'$ready'; exec sleep 600" \
    >"$tmp/harness.log" 2>&1 &
harness_pid=$!

deadline=$(( SECONDS + 60 ))
until [[ -s $ready ]]; do
    if (( SECONDS >= deadline )) || ! kill -0 "$harness_pid" 2>/dev/null; then
        echo "FAIL: the command did not start under the harness"; cat "$tmp/harness.log"
        kill -KILL "$harness_pid" 2>/dev/null
        exit 1
    fi
    sleep 0.05
done

cg_dir=$(sed -n 's/^harness: cgroup \(.*\), private cgroup + mount namespace$/\1/p' "$tmp/harness.log")
[[ -n $cg_dir && -d $cg_dir ]] || { echo "FAIL: no cgroup folder named in the harness log"; cat "$tmp/harness.log"; exit 1; }
pids=$(find "$cg_dir" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u | tr '\n' ' ')
[[ -n $pids ]] || { echo "FAIL: no process in $cg_dir"; exit 1; }
echo "harness $harness_pid, cgroup $cg_dir, processes: $pids"

kill -KILL "$harness_pid"
wait "$harness_pid" 2>/dev/null

left=''
deadline=$(( SECONDS + 20 ))
while :; do
    left=''
    for p in $pids; do
        kill -0 "$p" 2>/dev/null && left+="$p($({ tr '\0' ' ' </proc/"$p"/cmdline; } 2>/dev/null | cut -c1-60)) "
    done
    [[ -d $cg_dir ]] && left+="folder $cg_dir"
    [[ -z $left ]] && break
    (( SECONDS < deadline )) || break
    sleep 0.05
done
if [[ -n $left ]]; then
    echo "FAIL: left after the harness was SIGKILLed: $left"
    # Clean up what this test started, by pid and by its own folder only.
    for p in $pids; do kill -KILL "$p" 2>/dev/null; done
    [[ -e $cg_dir/cgroup.kill ]] && echo 1 >"$cg_dir/cgroup.kill" 2>/dev/null && sleep 0.2
    [[ -d $cg_dir ]] && find "$cg_dir" -depth -type d -exec rmdir {} + 2>/dev/null
    exit 1
fi
echo "ok: nothing left after the harness was SIGKILLed"
