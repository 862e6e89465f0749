#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# deb-in-overlay.sh TMP: run by check-deb.sh in a private mount namespace (unshare --mount). Mounts
# the root file system as the lower layer of an overlay whose upper layer is a tmpfs, chroots into it,
# installs TMP/nerve.deb, TMP/python3-nerve.deb, TMP/libnerve0.deb and TMP/libnerve-dev.deb with
# apt-get, builds TMP/libnerve_client.c with cc and pkg-config against them and runs it, removes and purges them, then lists what the upper layer still
# holds outside dpkg's and apt's state (/var/lib/dpkg, /var/lib/apt, /var/cache, /var/log): that must be
# nothing. Nothing here is seen outside the namespace, and the machine's files are never written.
set -u
tmp=$1
fail() { echo "deb: FAIL: $*"; exit 1; }
layer=$tmp/layer root=$tmp/root
mkdir -p "$layer" "$root"
mount -t tmpfs -o mode=0755 tmpfs "$layer" || fail "cannot mount a tmpfs"
mkdir "$layer/upper" "$layer/work"
mount -t overlay overlay -o "lowerdir=/,upperdir=$layer/upper,workdir=$layer/work" "$root" ||
    fail "cannot mount the overlay of /"
mount -t proc proc "$root/proc" && mount --rbind /dev "$root/dev" || fail "cannot mount /proc or /dev in the overlay"
mount -t tmpfs tmpfs "$root/tmp" && mount -t tmpfs tmpfs "$root/run" || fail "cannot mount /tmp or /run in the overlay"
cp "$tmp/nerve.deb" "$tmp/python3-nerve.deb" "$tmp/libnerve0.deb" "$tmp/libnerve-dev.deb" "$tmp/libnerve_client.c" \
   "$root/tmp/"

in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }

pkgs=(nerve python3-nerve libnerve0 libnerve-dev)
in_root apt-get install -y -o Dpkg::Use-Pty=0 /tmp/nerve.deb /tmp/python3-nerve.deb /tmp/libnerve0.deb \
    /tmp/libnerve-dev.deb >"$tmp/apt-install.log" 2>&1 ||
    { cat "$tmp/apt-install.log"; fail "apt-get install of ${pkgs[*]} failed"; }
files=$(in_root dpkg -L "${pkgs[@]}" | while read -r f; do [[ -f $root$f ]] && echo "$f"; done)
[[ $files == *"/usr/bin/nerved"* && $files == *"/usr/lib/systemd/user/nerved.service"* &&
   $files == *"/usr/libexec/nerve/nerve-held"* && $files == *"/usr/libexec/nerve/nerve-hold"* ]] ||
    fail "dpkg -L nerve does not list the programs and the unit: $files"
in_root /usr/bin/nervectl --help >/dev/null || fail "the installed nervectl does not run"
in_root /usr/bin/nerved --help >/dev/null || fail "the installed nerved does not run"
in_root man -w nerved >/dev/null 2>&1 || fail "man -w nerved does not find the installed page"
where=$(in_root /usr/bin/python3 -c 'import nerve, nerve.aio; print(nerve.__file__)' 2>&1) ||
    fail "the installed Python package does not import: $where"
[[ $where == /usr/lib/python3/dist-packages/nerve/__init__.py ]] || fail "import nerve found $where"
out=$(in_root sh -c 'cc -std=c99 -pedantic-errors -o /tmp/client /tmp/libnerve_client.c $(pkg-config --cflags --libs libnerve) && /tmp/client' 2>&1) ||
    fail "a C program against the installed libnerve-dev: $out"
echo "deb: apt-get install: $(wc -l <<<"$files") files installed; import nerve: $where; C: $out"

in_root apt-get remove -y -o Dpkg::Use-Pty=0 "${pkgs[@]}" >"$tmp/apt-remove.log" 2>&1 ||
    { cat "$tmp/apt-remove.log"; fail "apt-get remove ${pkgs[*]} failed"; }
left=$(while read -r f; do [[ -e $root$f ]] && echo "$f"; done <<<"$files")
[[ -z $left ]] || fail "apt-get remove left: $left"
[[ ! -e $root/usr/lib/python3/dist-packages/nerve ]] || fail "apt-get remove left $(find "$root/usr/lib/python3/dist-packages/nerve" | head -3)"
in_root dpkg -P "${pkgs[@]}" >"$tmp/purge.log" 2>&1 || { cat "$tmp/purge.log"; fail "dpkg -P failed"; }
in_root dpkg -s nerve >/dev/null 2>&1 && fail "dpkg -s nerve still knows the package after dpkg -P"
for p in python3-nerve libnerve0 libnerve-dev; do
    in_root dpkg -s "$p" >/dev/null 2>&1 && fail "dpkg -s $p still knows the package after dpkg -P"
done
echo "deb: apt-get remove and dpkg -P: no file of the package left"

# The upper layer: only dpkg/apt state may remain (and directories whose timestamps changed), and
# /etc/ld.so.cache, which ldconfig (libnerve0's trigger) writes anew when a library comes or goes.
extra=$(cd "$layer/upper" && find . \( -path ./var/lib/dpkg -o -path ./var/lib/apt -o -path ./var/cache \
            -o -path ./var/log -o -path ./etc/ld.so.cache \) -prune -o ! -type d -print | head -10)
[[ -z $extra ]] || fail "after purge, the install left or removed (whiteouts) files: $extra"
echo "deb: the overlay holds nothing outside dpkg's and apt's state"
