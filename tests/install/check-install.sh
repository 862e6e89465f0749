#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-install.sh: nerve installs under the prefix it is given, and the installed files work.
#
# Usage: tests/install/check-install.sh BUILD_DIR HARNESS
#
# 1. `cmake --install BUILD_DIR --prefix P` (P a fresh temporary folder): every file of the install
#    manifest is under P; the expected layout is there (programs, user unit, D-Bus activation and
# 2. DESTDIR=D `cmake --install BUILD_DIR --prefix /opt/nerve-test`: every file lands under
#    D/opt/nerve-test, and the unit names /opt/nerve-test/bin/nerved (DESTDIR is not part of it).
# 3. Inside a private user manager (HARNESS), with the manager's unit path and the session bus's data
#    folders extended by P (SYSTEMD_UNIT_PATH, XDG_DATA_DIRS: the environment the manager and its
#    dbus-daemon inherit), activation.sh checks the installed unit with `systemd-analyze --user
#    verify` and shows that `nervectl list` with no nerved running starts P/bin/nerved as
#    nerved.service through D-Bus activation (nervectl and nervectl-full find P's libnerve.so.0 by
#    their RUNPATH), and that a C program built against P's nerve.h and libnerve.pc reaches it.
# 1 also builds that program (libnerve_client.c) with the C compiler, through pkg-config only, and
# runs it against P's libnerve.so.0.
# Exit 0 all good; 1 a check failed (one line each); 2 bad usage.
set -u
(( $# == 2 )) || { echo "usage: check-install.sh BUILD_DIR HARNESS" >&2; exit 2; }
build=$1 harness=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
failures=0
fail() { echo "install: FAIL: $*"; failures=$((failures + 1)); }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nerve-install-test.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

# System folders an install with a wrong (absolute) destination would write into.
watched=(/usr/local /usr/lib/systemd/user /usr/share/dbus-1 /usr/share/man /usr/share/bash-completion
         /usr/share/doc /usr/share/gocode /etc/systemd/user /opt)
marker=$tmp/marker
touch "$marker"

# manifest_under PREFIX [DESTDIR]: every file of the last install's manifest (which names files
# without DESTDIR) is under PREFIX and exists under DESTDIR, and the manifest names every file there.
manifest_under() {
    local prefix=$1 dest=${2:-} n=0 f
    while IFS= read -r f || [[ -n $f ]]; do
        n=$((n + 1))
        [[ $f == "$prefix"/* ]] || fail "installed outside $prefix: $f"
        [[ -f $dest$f ]] || fail "in the manifest but not installed: $dest$f"
    done <"$build/install_manifest.txt"
    (( n > 0 )) || fail "the install manifest is empty"
    local found
    found=$(find "$dest$prefix" ! -type d | wc -l)  # files and links (libnerve.so.0, nerve-bash)
    (( found == n )) || fail "$found files under $dest$prefix, but $n in the install manifest"
    echo "install: $n files, all under ${dest:+DESTDIR }$dest$prefix"
}

# 1. --prefix
if ! cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
    cat "$tmp/install.log"; fail "cmake --install --prefix $prefix failed"; exit 1
fi
manifest_under "$prefix"
for f in bin/nerved bin/nervectl libexec/nerve/nervectl-full libexec/nerve/nerve-held libexec/nerve/nerve-hold lib/systemd/user/nerved.service \
         share/dbus-1/services/org.nerve.Lifecycle1.service share/dbus-1/interfaces/org.nerve.Lifecycle1.xml \
         share/man/man1/nervectl.1.gz share/man/man8/nerved.8.gz share/man/man7/nerve-dbus.7.gz \
         share/bash-completion/completions/nervectl \
         bin/nerve-sh bin/nerve-bash share/man/man1/nerve-sh.1.gz share/man/man1/nerve-bash.1.gz \
         share/bash-completion/completions/nerve-sh share/bash-completion/completions/nerve-bash \
         share/doc/nerve/README.md share/doc/nerve/operations.md share/doc/nerve/records.md share/doc/nerve/dbus-api.md \
         share/doc/nerve/adopting.md \
         share/doc/nerve/copyright share/doc/nerve/changelog.gz share/doc/python3-nerve/copyright \
         lib/python3/dist-packages/nerve/__init__.py lib/python3/dist-packages/nerve/aio.py; do
    [[ -f $prefix/$f ]] || fail "not installed: $f"
done
# The Go package's source, as Debian's golang-*-dev packages install theirs (cmake/NerveGoSource.cmake):
# every file of go/ that a build needs (go.mod and the .go files).
gosrc=share/gocode/src/nerve.dev/nerve
for f in "$here"/../../go/go.mod "$here"/../../go/*.go; do
    cmp -s "$f" "$prefix/$gosrc/${f##*/}" || fail "not installed, or not the source's: $gosrc/${f##*/}"
done
grep -qx 'module nerve.dev/nerve' "$prefix/$gosrc/go.mod" || fail "$gosrc/go.mod does not name module nerve.dev/nerve"
# Every module of python/nerve, and nothing but them (no byte code); the installed copy imports.
src=$here/../../python/nerve
for f in "$src"/*.py; do
    cmp -s "$f" "$prefix/lib/python3/dist-packages/nerve/${f##*/}" || fail "python/nerve/${f##*/} not installed as is"
done
extra=$(find "$prefix/lib/python3/dist-packages/nerve" ! -name '*.py' ! -type d | head -3)
[[ -z $extra ]] || fail "the Python package has files that are not its sources: $extra"
# -B: no __pycache__ written into the prefix (the manifest check below counts its files).
where=$(cd / && PYTHONPATH=$prefix/lib/python3/dist-packages /usr/bin/python3 -B -c \
        'import nerve, nerve.aio; print(nerve.__file__)' 2>&1) ||
    fail "the installed Python package does not import: $where"
[[ $where == "$prefix/lib/python3/dist-packages/nerve/__init__.py" ]] ||
    fail "import nerve found $where, not the installed package"
grep -qx "ExecStart=$prefix/bin/nerved" "$prefix/lib/systemd/user/nerved.service" ||
    fail "nerved.service does not say ExecStart=$prefix/bin/nerved: $(grep ExecStart "$prefix/lib/systemd/user/nerved.service")"
grep -qx "Exec=$prefix/bin/nerved" "$prefix/share/dbus-1/services/org.nerve.Lifecycle1.service" ||
    fail "org.nerve.Lifecycle1.service does not say Exec=$prefix/bin/nerved"
# libnerve: the library with its soname link and link for builds, nerve.h, libnerve.pc, nerve(3); a C
# program built through pkg-config alone (no path of this tree) against them runs.
pc=$(find "$prefix" -name libnerve.pc)
[[ -f $prefix/include/nerve.h && -f $prefix/share/man/man3/nerve.3.gz && -n $pc ]] ||
    fail "libnerve's nerve.h, nerve(3) or libnerve.pc is not installed"
libdir=$(PKG_CONFIG_PATH=${pc%/*} pkg-config --variable=libdir libnerve)
[[ -L $libdir/libnerve.so && -L $libdir/libnerve.so.0 && -f $(readlink -f "$libdir/libnerve.so.0") ]] ||
    fail "libnerve.so and libnerve.so.0 are not links to the library in $libdir"
client=$tmp/libnerve_client
if ! cc -std=c99 -pedantic-errors -Wall -Wextra -o "$client" "$here/libnerve_client.c" \
        $(PKG_CONFIG_PATH=${pc%/*} pkg-config --cflags --libs libnerve) -Wl,-rpath,"$libdir" >"$tmp/cc.log" 2>&1; then
    cat "$tmp/cc.log"; fail "a C program does not build against the installed nerve.h and libnerve.pc"
elif ! out=$("$client" 2>&1); then
    fail "the C program against the installed libnerve: $out"
else
    [[ $(ldd "$client") == *"$libdir/libnerve.so.0"* ]] || fail "the C program does not load $libdir/libnerve.so.0"
    echo "install: a C program built through pkg-config libnerve runs ($out)"
fi
if grep -rl /usr/local "$prefix/lib" "$prefix/share/dbus-1" >/dev/null 2>&1; then
    fail "an installed file names /usr/local: $(grep -rl /usr/local "$prefix/lib" "$prefix/share/dbus-1")"
fi
changed=$(find "${watched[@]}" -xdev -newer "$marker" 2>/dev/null | head -5)
[[ -z $changed ]] || fail "changed outside the prefix during the install: $changed"

# 2. DESTDIR + an absolute prefix
if ! DESTDIR=$tmp/dest cmake --install "$build" --prefix /opt/nerve-test >"$tmp/install2.log" 2>&1; then
    cat "$tmp/install2.log"; fail "DESTDIR=$tmp/dest cmake --install --prefix /opt/nerve-test failed"; exit 1
fi
manifest_under /opt/nerve-test "$tmp/dest"
[[ ! -e /opt/nerve-test ]] || fail "/opt/nerve-test exists: DESTDIR was not honoured"
grep -qx "ExecStart=/opt/nerve-test/bin/nerved" "$tmp/dest/opt/nerve-test/lib/systemd/user/nerved.service" ||
    fail "with DESTDIR, nerved.service does not say ExecStart=/opt/nerve-test/bin/nerved"
changed=$(find "${watched[@]}" -xdev -newer "$marker" 2>/dev/null | head -5)
[[ -z $changed ]] || fail "changed outside DESTDIR during the install: $changed"

# 3. The installed files at work, in a private user manager.
mkdir -p "$tmp/state"
if ! SYSTEMD_UNIT_PATH="$prefix/lib/systemd/user:" \
     XDG_DATA_DIRS="$prefix/share:${XDG_DATA_DIRS:-/usr/local/share:/usr/share}" \
     XDG_STATE_HOME="$tmp/state" MANPATH="$prefix/share/man:" NERVE_FORCE_PRIVATE_MANAGER=1 \
     "$harness" -- "$here/activation.sh" "$prefix" "$client"; then
    fail "activation.sh failed in the private user manager"
fi

(( failures == 0 )) || { echo "install: FAILED: $failures problem(s)"; exit 1; }
echo "install: ok"
