#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The README's main job: installs what is needed, builds, then shows a contained run and its verified
# reap. Without a user session (most CI machines), it runs inside a private systemd user manager
# (tests/harness/with-user-manager.sh); with one, it uses the session's own manager.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh" --demo  # what the demo needs; scripts/test.sh installs the rest
# Only the programs the demo runs (nervectl brings nervectl-full, nerved brings nerve-held): the
# tests are built by scripts/test.sh.
"$top/scripts/build.sh" nerved nervectl
exec "$top/tests/harness/with-user-manager.sh" -- "$top/scripts/demo-run.sh" "${NERVE_BUILD_DIR:-$top/build}"
