#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Configures and builds nerve into build/ (or $NERVE_BUILD_DIR): build/daemon/nerved, build/client/nervectl.
# Usage: scripts/build.sh [TARGET...]: only those targets (and what they need); none: everything.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${NERVE_BUILD_DIR:-$top/build}
# CI (CI=true) builds with warnings as errors; NERVE_WERROR=ON|OFF says so elsewhere.
werror=${NERVE_WERROR:-$([ "${CI:-}" = true ] && echo ON || echo OFF)}
# ccache, where it is installed, makes rebuilds across several work trees cheap; nothing needs it.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# Ninja, where it is installed, for a new build folder (one configured before keeps its generator):
# it keeps both cores busy to the end, and its .ninja_log has every compile's time.
generator=()
[[ ! -e $build/CMakeCache.txt ]] && command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$top" -B "$build" "${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-RelWithDebInfo} -DNERVE_WERROR="$werror" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
