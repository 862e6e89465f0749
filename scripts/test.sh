#!/usr/bin/env bash
# The README's test command: installs what is needed, builds, and runs the tests (unit tests, docs
# checks, and the integration tests, each inside its own private systemd user manager via
# tests/harness/). The soak tests (label soak: the soak and the stress tests, minutes) run too when
# NERVE_TEST_SOAK=1.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"
"$top/scripts/build.sh"
build=${NERVE_BUILD_DIR:-$top/build}
cd "$build"
soak=(-LE soak)
[ "${NERVE_TEST_SOAK:-0}" = 1 ] && soak=()
ctest --output-on-failure --timeout 600 -j"${NERVE_TEST_JOBS:-2}" "${soak[@]}" "$@"
