#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# activation.sh PREFIX [C_CLIENT]: run by check-install.sh inside a private user manager (the harness) whose unit
# path and session bus data folders include PREFIX. Checks, in this order:
#   - `systemd-analyze --user verify` of the installed PREFIX/lib/systemd/user/nerved.service passes
#     (this includes its Documentation=man:nerved(8), found through MANPATH);
#   - the session bus lists org.nerve.Lifecycle1 as activatable (it read the installed service file),
#     nobody owns the name and nerved.service is inactive;
#   - `PREFIX/bin/nervectl list` succeeds: the call started nerved;
#   - nerved.service is now active, its main process runs PREFIX/bin/nerved, and that process owns
#     org.nerve.Lifecycle1: the activation went through the installed unit (SystemdService=), not a
#     direct Exec by the bus;
#   - C_CLIENT bus (check-install.sh's C program on the installed libnerve) gets nerved's named error
#     for a bad run id;
#   - PREFIX/bin/nerve-sh and nerve-bash run a command as a run, through PREFIX/bin/nervectl;
#   - `systemctl --user stop nerved` stops it (nothing of it is left for the harness to kill).
set -u
prefix=$1 client=${2:-}
fail() { echo "activation: FAIL: $*"; exit 1; }
unit=$prefix/lib/systemd/user/nerved.service
dbus_call() { busctl --user call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus "$@"; }

out=$(systemd-analyze --user verify "$unit" 2>&1) || fail "systemd-analyze --user verify $unit: $out"
[[ -z $out ]] || fail "systemd-analyze --user verify $unit printed: $out"
echo "activation: systemd-analyze --user verify $unit: ok"

[[ $(dbus_call ListActivatableNames) == *'"org.nerve.Lifecycle1"'* ]] ||
    fail "the session bus does not list org.nerve.Lifecycle1 as activatable (XDG_DATA_DIRS=${XDG_DATA_DIRS:-})"
[[ $(dbus_call NameHasOwner s org.nerve.Lifecycle1) == 'b false' ]] || fail "org.nerve.Lifecycle1 is owned before the test"
state=$(systemctl --user is-active nerved.service)
[[ $state == inactive ]] || fail "nerved.service is '$state' before the test"

out=$("$prefix/bin/nervectl" list 2>&1) || fail "nervectl list with no nerved running failed: $out"

state=$(systemctl --user is-active nerved.service)
[[ $state == active ]] || fail "after nervectl list, nerved.service is '$state', not active"
pid=$(systemctl --user show -P MainPID nerved.service)
exe=$(readlink "/proc/$pid/exe")
[[ $exe == "$prefix/bin/nerved" ]] || fail "nerved.service's main process $pid runs '$exe', not $prefix/bin/nerved"
owner=$(dbus_call GetConnectionUnixProcessID s org.nerve.Lifecycle1)
[[ $owner == "u $pid" ]] || fail "org.nerve.Lifecycle1 is owned by pid '${owner#u }', not by nerved.service's $pid"
echo "activation: nervectl list started $exe (pid $pid) as nerved.service through D-Bus activation"

if [[ -n $client ]]; then
    out=$("$client" bus 2>&1) || fail "the C program on the installed libnerve: $out"
    echo "activation: $out"
fi
# The installed nerve-sh and nerve-bash run their command as a run through the nervectl next to them
# (no other in PATH), with bash as nerve-bash.
out=$(PATH=/usr/bin:/bin "$prefix/bin/nerve-sh" -c 'echo "$NERVE_RUN"' 2>&1) || fail "the installed nerve-sh failed: $out"
[[ $out =~ -[0-9]{8}T[0-9]{6}\.[0-9]{9}-[0-9]+$ ]] || fail "the installed nerve-sh's command saw NERVE_RUN='$out'"
out=$(PATH=/usr/bin:/bin "$prefix/bin/nerve-bash" -c 'echo "$BASH_VERSION"' 2>&1) || fail "the installed nerve-bash failed: $out"
[[ -n $out ]] || fail "the installed nerve-bash did not run bash"
echo "activation: $prefix/bin/nerve-sh and nerve-bash ran their commands as runs"

systemctl --user stop nerved.service || fail "systemctl --user stop nerved.service failed"
state=$(systemctl --user is-active nerved.service)
[[ $state == inactive ]] || fail "nerved.service is '$state' after stop"
echo "activation: ok"
