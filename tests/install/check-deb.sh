#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-deb.sh: the Debian package is built, installs with apt, and removes without a trace.
#
# Usage: tests/install/check-deb.sh BUILD_DIR          (root; needs unshare, mount, chroot, apt-get)
#
# 1. `cpack -G DEB` (into a temporary folder) makes nerve_<version>_<arch>.deb and
#    python3-nerve_<version>_all.deb; `dpkg-deb --info` shows nerve's Depends with libsdbus-c++1,
#    libsystemd0, systemd and dbus-user-session, python3-nerve's with python3-jeepney and nerve;
#    every file is under /usr (python3-nerve's under /usr/lib/python3/dist-packages/nerve, the
#    sources only); the unit and the activation file name /usr/bin/nerved; the Go package's source
#    is in /usr/share/gocode/src/nerve.dev/nerve.
# 2. In a private mount namespace, the machine's root file system is seen through an overlay whose
#    upper layer is a tmpfs (the machine's files are never written: everything the package does lands
#    in the tmpfs, and is gone with the namespace). In a chroot into that overlay:
#    `apt-get install` of both (offline: the dependencies are the machine's installed packages),
#    the installed programs answer --help, the installed Python package imports (its byte code
#    compiled by its postinst), `apt-get remove` removes every file of both packages, `dpkg -P`
#    purges them (with libnerve0 and libnerve-dev, against which a C program is built and run there);
#    then the overlay's upper layer holds nothing outside dpkg's and apt's own state
#    and caches: the packages left no file behind (byte code included) and removed none of the machine's.
# Exit 0 all good; 1 a check failed; 2 bad usage or missing tools.
set -u
(( $# == 1 )) || { echo "usage: check-deb.sh BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
fail() { echo "deb: FAIL: $*"; exit 1; }
(( EUID == 0 )) || { echo "deb: needs root (a private mount namespace and a chroot)" >&2; exit 2; }
for tool in cpack dpkg-deb unshare mount chroot; do
    command -v "$tool" >/dev/null || { echo "deb: '$tool' not found" >&2; exit 2; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nerve-deb-test.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

# 1. Build and inspect.
(cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out") >"$tmp/cpack.log" 2>&1 ||
    { cat "$tmp/cpack.log"; fail "cpack -G DEB failed"; }
debs=("$tmp"/out/nerve_*_*.deb)
[[ ${#debs[@]} == 1 && -f ${debs[0]} ]] || fail "expected one nerve_<version>_<arch>.deb, got: $(ls "$tmp/out")"
deb=${debs[0]}
echo "deb: built ${deb##*/}"
depends=$(dpkg-deb --field "$deb" Depends)
for d in libsdbus-c++1 libsystemd0 systemd dbus-user-session; do
    [[ ", $depends" == *", $d"[\ ,]* || ", $depends" == *", $d" ]] || fail "Depends lacks $d: $depends"
done
echo "deb: Depends: $depends"
outside=$(dpkg-deb --contents "$deb" | awk '{print $6}' | grep -v '^\./$' | grep -v '^\./usr/' | head -5)
[[ -z $outside ]] || fail "files outside /usr: $outside"
dpkg-deb -x "$deb" "$tmp/x"
grep -qx 'ExecStart=/usr/bin/nerved' "$tmp/x/usr/lib/systemd/user/nerved.service" || fail "the unit does not name /usr/bin/nerved"
grep -qx 'Exec=/usr/bin/nerved' "$tmp/x/usr/share/dbus-1/services/org.nerve.Lifecycle1.service" ||
    fail "the activation file does not name /usr/bin/nerved"
for f in go.mod doc.go command.go nervectl.go receipt.go; do  # the Go package's source (cmake/NerveGoSource.cmake)
    [[ -f $tmp/x/usr/share/gocode/src/nerve.dev/nerve/$f ]] || fail "no /usr/share/gocode/src/nerve.dev/nerve/$f"
done

pydebs=("$tmp"/out/python3-nerve_*_all.deb)
[[ ${#pydebs[@]} == 1 && -f ${pydebs[0]} ]] || fail "expected one python3-nerve_<version>_all.deb, got: $(ls "$tmp/out")"
pydeb=${pydebs[0]}
echo "deb: built ${pydeb##*/}"
pydepends=$(dpkg-deb --field "$pydeb" Depends)
for d in python3-jeepney nerve python3:any; do
    [[ ", $pydepends" == *", $d"[\ ,]* || ", $pydepends" == *", $d" ]] || fail "python3-nerve's Depends lacks $d: $pydepends"
done
echo "deb: python3-nerve Depends: $pydepends"
pyfiles=$(dpkg-deb --contents "$pydeb" | awk '$1 !~ /^d/ {print $6}')
outside=$(grep -v '^\./usr/lib/python3/dist-packages/nerve/[a-z_]*\.py$' <<<"$pyfiles" | grep -v '^\./usr/share/doc/' | head -5)
[[ -z $outside ]] || fail "python3-nerve has files that are not the package's sources: $outside"
grep -qx './usr/lib/python3/dist-packages/nerve/__init__.py' <<<"$pyfiles" || fail "python3-nerve lacks nerve/__init__.py"
cp "$pydeb" "$tmp/python3-nerve.deb"

# libnerve0: the library and its soname link, named in nerve's Depends; libnerve-dev: nerve.h, the
# link libnerve.so, libnerve.pc and nerve(3) (cmake/NervePackage.cmake says why two packages).
[[ ", $depends" == *", libnerve0 ("* ]] || fail "nerve's Depends lacks libnerve0: $depends"
for pkg in libnerve0 libnerve-dev; do
    found=("$tmp"/out/${pkg}_*_*.deb)
    [[ ${#found[@]} == 1 && -f ${found[0]} ]] || fail "expected one ${pkg}_<version>_<arch>.deb, got: $(ls "$tmp/out")"
    cp "${found[0]}" "$tmp/$pkg.deb"
    echo "deb: built ${found[0]##*/}: Depends: $(dpkg-deb --field "${found[0]}" Depends)"
done
libfiles=$(dpkg-deb --contents "$tmp/libnerve0.deb" | awk '$1 !~ /^d/ {print $6}')
grep -q '/libnerve\.so\.0$' <<<"$libfiles" && ! grep -q '/libnerve\.so$\|nerve\.h$' <<<"$libfiles" ||
    fail "libnerve0 does not hold libnerve.so.0 alone: $libfiles"
devfiles=$(dpkg-deb --contents "$tmp/libnerve-dev.deb" | awk '$1 !~ /^d/ {print $6}')
for f in /usr/include/nerve.h /libnerve.so /pkgconfig/libnerve.pc /usr/share/man/man3/nerve.3.gz; do
    grep -q -- "$f\(\.gz\)\?$" <<<"$devfiles" || fail "libnerve-dev lacks $f: $devfiles"
done
cp "$(dirname "${BASH_SOURCE[0]}")/libnerve_client.c" "$tmp/"

# 2. Install and remove in an overlay of the root file system, in a private mount namespace.
cp "$deb" "$tmp/nerve.deb"
unshare --mount --propagation private -- "$BASH" "$(dirname "${BASH_SOURCE[0]}")/deb-in-overlay.sh" "$tmp" ||
    fail "install/remove in the overlay failed"
echo "deb: ok"
