#!/usr/bin/env bash
# Configures and builds nerve into build/ (or $NERVE_BUILD_DIR): build/daemon/nerved, build/client/nervectl.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${NERVE_BUILD_DIR:-$top/build}
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-RelWithDebInfo} >/dev/null
cmake --build "$build" -j"$(nproc)"
