#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs what nerve needs to build, test and run: Debian 12 packages only. Idempotent: packages that
# are already installed are not fetched again. Needs root (or sudo).
# Usage: scripts/install-deps.sh [--demo]
#   --demo  only what scripts/demo.sh needs: configure and build nerved and nervectl, and run them in
#           a private user manager (about 180 packages, 120 MB on a fresh Debian 12, against some 520,
#           410 MB for everything: the compilers and tools of the fuzz and sanitizer passes, Go, the
#           engines, lintian and Prometheus are the tests' alone)
set -euo pipefail

demo_packages=(
  cmake g++ make pkg-config
  libsdbus-c++-dev libsdbus-c++-bin       # sdbus-c++ 1.2 and sdbus-c++-xml2cpp
  nlohmann-json3-dev libspdlog-dev libsystemd-dev
  libcli11-dev                            # CLI11: the command lines of nerved and nervectl
  googletest libgtest-dev libgmock-dev    # configured with the tests (the same build folder serves both)
  scdoc                                   # the manual pages (man/*.scd), rendered at build time
  systemd dbus dbus-user-session util-linux procps  # the user manager, its bus, unshare/setpriv
  python3                                 # the harness's cgroup watchdog
)
packages=(
  "${demo_packages[@]}"
  passwd                                  # useradd/userdel: the unprivileged test pass's account
  acl                                     # setfacl: search permission for that account on a clone under /root
  python3-dbus python3-gi                 # examples and their tests (/usr/bin/python3)
  golang-go                               # the Go package (go/) and examples/go-engine, built and tested
  python3-jeepney                         # the Python package nerve (python/nerve): its D-Bus library
  dpkg-dev man-db                         # the .deb's Depends (dpkg-shlibdeps); man pages checked by systemd-analyze verify
  parallel snakemake                      # real engines (with make) run through nerve-sh, stopped mid-run (engines_test.cpp)
  tmux screen gnupg openssh-client xvfb ninja-build  # the escaper zoo (zoo_test.cpp): real daemons reaped with their run
  lintian                                 # the .debs checked as Debian checks packages (tests/install/check-lintian.sh)
  faketime                                # clock.AYearAhead.*: the tests again with the wall clock a year ahead
  ccache                                  # the compiler cache scripts/build.sh, sanitize.sh and fuzz.sh use
  clang libclang-rt-14-dev                # the fuzz targets (scripts/fuzz.sh): clang 14 and its libFuzzer runtime
  llvm                                    # llvm-symbolizer: the fuzz pass's reports name files and lines
  libasan8 libubsan1                      # the sanitizer pass (scripts/sanitize.sh): gcc's ASan and UBSan runtimes (g++ has them; named for that pass)
)
# Only the metrics test runs their binaries (node_exporter on loopback, promtool): installed with
# their services kept from starting (a policy-rc.d that says no, for this install only, where the
# host has none of its own).
quiet_services=(prometheus-node-exporter prometheus)
case ${1:-} in
  --demo) packages=("${demo_packages[@]}") quiet_services=() ;;
  '') ;;
  *) echo "install-deps: unknown argument '$1' (--demo or nothing)" >&2; exit 2 ;;
esac

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=() missing_quiet=()
for p in "${packages[@]}"; do installed "$p" || missing+=("$p"); done
for p in "${quiet_services[@]}"; do installed "$p" || missing_quiet+=("$p"); done
if [ ${#missing[@]} -eq 0 ] && [ ${#missing_quiet[@]} -eq 0 ]; then
  echo "install-deps: all $(( ${#packages[@]} + ${#quiet_services[@]} )) packages are installed"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]} ${missing_quiet[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
echo "install-deps: installing ${missing[*]} ${missing_quiet[*]}"
"${sudo[@]}" apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ${#missing_quiet[@]} -gt 0 ]; then
  policy=/usr/sbin/policy-rc.d
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null && "${sudo[@]}" chmod 755 "$policy"
    trap '"${sudo[@]}" rm -f "$policy"' EXIT  # removed however the install ends
  fi
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing_quiet[@]}" >/dev/null
fi
echo "install-deps: done"
