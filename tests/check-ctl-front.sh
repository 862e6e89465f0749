#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# nervectl's front (lib/ctl/front.h), without a bus: it links no sdbus-c++ and no shared libstdc++ (so it
# starts in half nervectl-full's time); it answers help and usage errors itself; it hands any other verb, with the
# same command line, to nervectl-full ($NERVE_CTL_FULL here), and says so clearly when that is missing.
# Usage: check-ctl-front.sh NERVECTL
set -euo pipefail
ctl=$1
fail() { echo "check-ctl-front: $*" >&2; exit 1; }

needed=$(readelf -d "$ctl" | awk '/NEEDED/ {print $NF}')
for lib in libsdbus-c++ libstdc++; do
  ! grep -q "$lib" <<<"$needed" || fail "nervectl needs $lib: $(tr '\n' ' ' <<<"$needed")"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$ctl" "$tmp/nervectl"  # alone: no nervectl-full next to it
"$tmp/nervectl" --help | grep -q '^Verbs:' || fail "--help without nervectl-full"
set +e
out=$("$tmp/nervectl" reap 'bad id' 2>&1); code=$?
set -e
[[ $code == 2 && $out == *"invalid run id 'bad id'"* ]] || fail "usage error: exit $code, '$out'"
set +e
out=$("$tmp/nervectl" status some-run 2>&1); code=$?
set -e
[[ $code == 1 && $out == *"nervectl-full"* ]] || fail "without nervectl-full: exit $code, '$out'"
out=$(NERVE_CTL_FULL=/bin/echo "$tmp/nervectl" status --json some-run) || fail "handing over to /bin/echo failed"
[[ $out == "status --json some-run" ]] || fail "handed over '$out', not the same command line"
echo "check-ctl-front: ok (needs: $(tr '\n' ' ' <<<"$needed"))"
