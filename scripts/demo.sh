#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The README's main job: installs what is needed, builds, then shows a contained run and its verified
# reap. Without a user session (most CI machines), it runs inside a private systemd user manager
# (tests/harness/with-user-manager.sh); with one, it uses the session's own manager.
#
#   --backend cgroup   the same demo on nerved's other backend (docs/operations.md "Backends"): no user
#                      manager at all, only a private cgroup namespace with a writable cgroup2 mount
#                      and a session bus (the harness's --no-manager mode), as in a privileged container.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
backend=systemd
case "${1:-}" in
  '') ;;
  --backend) backend=${2:-}; [[ $backend == systemd || $backend == cgroup ]] ||
               { echo "demo: --backend takes systemd or cgroup, not '${backend}'" >&2; exit 2; } ;;
  *) echo "demo: unknown argument '$1' (usage: demo.sh [--backend systemd|cgroup])" >&2; exit 2 ;;
esac
"$top/scripts/install-deps.sh" --demo  # what the demo needs; scripts/test.sh installs the rest
# Only the programs the demo runs (nervectl brings nervectl-full, nerved brings nerve-held): the
# tests are built by scripts/test.sh.
"$top/scripts/build.sh" nerved nervectl
harness=("$top/tests/harness/with-user-manager.sh")
[[ $backend == cgroup ]] && harness+=(--no-manager)
exec "${harness[@]}" -- "$top/scripts/demo-run.sh" "${NERVE_BUILD_DIR:-$top/build}" "$backend"
