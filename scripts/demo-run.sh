#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The demo itself (scripts/demo.sh runs it under a user manager): start nerved, launch a tree of
# processes that escape process-group kills (setsid, double fork, TERM ignored), then reap it and
# prove nothing is left.
set -euo pipefail
build=$1
backend=${2:-systemd}  # nerved's backend: systemd (a user manager's scopes) or cgroup (a delegated subtree)
nerved=$build/daemon/nerved
nervectl=$build/client/nervectl
work=$(mktemp -d /tmp/nerve-demo.XXXXXX)
runs=$work/runs
nerved_pid=""
launch_pid=""
cleanup() {
  [ -n "$launch_pid" ] && kill -KILL "$launch_pid" 2>/dev/null || true
  if [ -n "$nerved_pid" ]; then kill -TERM "$nerved_pid" 2>/dev/null || true; wait "$nerved_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "start nerved --backend $backend (runs in $runs)"
mkfifo "$work/ready"
"$nerved" --backend "$backend" --runs-dir "$runs" --ready-fd 3 3>"$work/ready" 2>"$work/nerved.log" &
nerved_pid=$!
read -r -t 10 line <"$work/ready" || { cat "$work/nerved.log"; echo "nerved did not start" >&2; exit 1; }
sed 's/^/  /' "$work/nerved.log"

say "launch run 'demo': a shell that starts escapers, then waits"
# setsid: own session and process group; ( ... & ): double fork, reparented away from the shell;
# trap '' TERM: ignores the polite stop. Each writes its pid, then the shell says it is ready.
mkfifo "$work/started"
"$nervectl" launch --grace 2 demo -- sh -c '
  setsid sleep 1000 & echo "setsid     $!" >>'"$work"'/pids
  ( sleep 1000 & echo "dbl-fork   $!" >>'"$work"'/pids ) &
  sh -c "trap \"\" TERM; echo \"term-proof \$\$\" >>'"$work"'/pids; exec sleep 1000" &
  while [ "$(wc -l <'"$work"'/pids 2>/dev/null || echo 0)" -lt 3 ]; do sleep 0.05; done
  echo "$$" >'"$work"'/started
  wait' &
launch_pid=$!
read -r leader <"$work/started"
echo "  nervectl exec'd the command in place: leader pid $leader (nervectl's pid was $launch_pid)"
sed 's/^/  /' "$work/pids"

say "nervectl status demo"
"$nervectl" status demo | sed 's/^/  /'
cgroup=$(sed -n 's/.*"cgroup": "\(.*\)".*/\1/p' "$runs/demo/lifecycle.json")
echo "  every escaper is still in the scope's cgroup:"
while read -r role pid; do
  printf '    %-10s pid %-6s cgroup %s\n' "$role" "$pid" "$(grep '^0::' /proc/"$pid"/cgroup | cut -d: -f3)"
done <"$work/pids"

say "nervectl reap --grace 2 demo   (TERM to all, SIGKILL after 2 s, wait until the cgroup is empty)"
"$nervectl" reap --grace 2 demo | sed 's/^/  /'
wait "$launch_pid" 2>/dev/null || true
launch_pid=""

say "check: nothing is left"
left=0
while read -r role pid; do
  if kill -0 "$pid" 2>/dev/null && ! grep -q '^State:.*Z' /proc/"$pid"/status 2>/dev/null; then
    echo "  $role pid $pid is STILL ALIVE"; left=1
  else
    echo "  $role pid $pid: gone"
  fi
done <"$work/pids"
root=${NERVE_CGROUP_ROOT:-/sys/fs/cgroup}
# An emptied scope is removed right after the reap (by the user manager, or by nerved on the cgroup
# backend, once the scope's holder is collected): give it a bounded moment.
for _ in $(seq 40); do [ -d "$root$cgroup" ] || break; sleep 0.05; done
if [ -d "$root$cgroup" ]; then echo "  cgroup $cgroup still exists"; left=1; else echo "  cgroup $cgroup: gone"; fi
echo "  receipt.json:"
sed 's/^/    /' "$runs/demo/receipt.json"

say "the run is final: a relaunch is refused, nothing starts"
"$nervectl" launch demo -- touch "$work/should-not-exist" || echo "  (nervectl exited $?)"
[ -e "$work/should-not-exist" ] && { echo "  the command ran!"; left=1; }

if [ $left -ne 0 ]; then echo; echo "DEMO FAILED: something was left behind" >&2; exit 1; fi
echo; echo "demo: the run was contained and its reap verified: no process, no cgroup left."
