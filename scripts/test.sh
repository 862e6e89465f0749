#!/usr/bin/env bash
# The README's test command: installs what is needed, builds, and runs every test (unit tests, and the
# integration tests, each inside its own private systemd user manager via tests/harness/).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"
"$top/scripts/build.sh"
build=${NERVE_BUILD_DIR:-$top/build}
cd "$build"
ctest --output-on-failure --timeout 600 -j"${NERVE_TEST_JOBS:-2}" "$@"
