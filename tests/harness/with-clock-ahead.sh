#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# with-clock-ahead.sh OFFSET -- CMD [ARGS...]: runs CMD with the wall clock (CLOCK_REALTIME, time(),
# gettimeofday) moved by OFFSET, e.g. +365d, for CMD and every program it starts (libfaketime's
# LD_PRELOAD, inherited). The monotonic and boot clocks are left alone: nerve compares process start
# times (boot-relative) and waits by CLOCK_MONOTONIC, which a real machine never moves.
#
# What it is for: no test may depend on the date it runs on. A test that wrote a fixed "recent" date
# into a record passed for a week and then failed everywhere, once nerved's keep_finished (7 days)
# made the record old (tests/CMakeLists.txt, clock.AYearAhead.*).
#
# Exit status: CMD's; 2 when the arguments are wrong or faketime is not installed.
set -euo pipefail
if [[ $# -lt 3 || $2 != -- || ! $1 =~ ^[+-][0-9]+[smhdy]?$ ]]; then
  echo "with-clock-ahead: usage: with-clock-ahead.sh +OFFSET -- CMD [ARGS...] (OFFSET like +365d; got '${1:-}')" >&2
  exit 2
fi
offset=$1
shift 2
command -v faketime >/dev/null ||
  { echo "with-clock-ahead: faketime is not installed (Debian package faketime; scripts/install-deps.sh installs it)" >&2; exit 2; }
export FAKETIME_DONT_FAKE_MONOTONIC=1
# The clock really is moved, or the test would pass for nothing: the date CMD sees must differ from
# this shell's by OFFSET (to the day, whatever the seconds between the two calls).
real=$(date -u +%s)
moved=$(faketime -f "$offset" date -u +%s)
case ${offset: -1} in
  m) unit=60 ;; h) unit=3600 ;; d) unit=86400 ;; y) unit=31536000 ;; *) unit=1 ;;
esac
number=${offset//[!0-9]/}
want=$(( ${offset:0:1}1 * number * unit ))
if (( moved - real < want - 60 || moved - real > want + 60 )); then
  echo "with-clock-ahead: faketime did not move the clock by $offset (moved by $(( moved - real )) s)" >&2
  exit 2
fi
exec faketime -f "$offset" "$@"
