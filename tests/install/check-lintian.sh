#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-lintian.sh: the Debian packages are ones Debian would accept: lintian finds no error and no
# warning in any of them.
#
# Usage: tests/install/check-lintian.sh BUILD_DIR          (needs cpack, dpkg-deb, lintian)
#
# `cpack -G DEB` (into a temporary folder) makes every package of the build (nerve, python3-nerve,
# ...); lintian checks each with --display-info --pedantic --show-overrides, and every tag it prints is
# shown, but only errors (E:) and warnings (W:) fail. The override of nerve-held's static link
# (cmake/deb/nerve.lintian-overrides) must be used (O:), which also shows that lintian looked at
# the binaries. Besides, what lintian does not see: each package's changelog.gz starts with an
# entry for the package's own version, and its copyright file says LGPL-2.1+.
# Exit 0 all good; 1 a check failed; 2 bad usage or missing tools.
set -u
(( $# == 1 )) || { echo "usage: check-lintian.sh BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
for tool in cpack dpkg-deb lintian; do
    command -v "$tool" >/dev/null || { echo "lintian: '$tool' not found (scripts/install-deps.sh)" >&2; exit 2; }
done
failures=0
fail() { echo "lintian: FAIL: $*"; failures=$((failures + 1)); }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nerve-lintian-test.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out") >"$tmp/cpack.log" 2>&1 ||
    { cat "$tmp/cpack.log"; echo "lintian: FAIL: cpack -G DEB failed"; exit 1; }
debs=("$tmp"/out/*.deb)
(( ${#debs[@]} >= 2 )) || { echo "lintian: FAIL: expected nerve and python3-nerve, got: $(ls "$tmp/out")"; exit 1; }

for deb in "${debs[@]}"; do
    pkg=$(dpkg-deb --field "$deb" Package)
    version=$(dpkg-deb --field "$deb" Version)
    # lintian exits 0, or 2 when it showed an error tag (an overridden one too, with --show-overrides,
    # so the E: and W: lines decide); 1 or anything else: lintian itself failed.
    lintian --display-info --pedantic --show-overrides --tag-display-limit 0 "$deb" >"$tmp/$pkg.lintian" 2>&1
    rc=$?
    grep -v '^running with root privileges' "$tmp/$pkg.lintian" | sed "s/^/lintian: $pkg: /"
    bad=$(grep -c '^[EW]: ' "$tmp/$pkg.lintian")
    (( bad == 0 )) || fail "$pkg: $bad errors and warnings (E:, W: above)"
    (( rc == 0 || rc == 2 )) || fail "$pkg: lintian exited $rc"
    if [[ $pkg == nerve ]]; then
        for helper in nerve-held nerve-hold; do
            grep -qx "O: nerve: statically-linked-binary \\[usr/libexec/nerve/$helper\\]" "$tmp/$pkg.lintian" ||
                fail "nerve: lintian did not use the override of $helper's static link"
        done
    fi

    dpkg-deb -x "$deb" "$tmp/x-$pkg"
    doc=$tmp/x-$pkg/usr/share/doc/$pkg
    first=$(gzip -dc "$doc/changelog.gz" 2>/dev/null | head -1)
    [[ $first == "nerve ($version) "* ]] ||
        fail "$pkg: changelog.gz starts with '$first', not an entry for $version (add one to cmake/deb/changelog)"
    grep -qx 'License: LGPL-2.1+' "$doc/copyright" 2>/dev/null || fail "$pkg: no copyright file saying LGPL-2.1+"
    echo "lintian: $pkg $version: $bad errors and warnings, $(grep -c '^[IP]: ' "$tmp/$pkg.lintian") info and pedantic tags"
done
(( failures == 0 )) || exit 1
echo "lintian: ok"
