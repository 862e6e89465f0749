#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# with-user-manager.sh: run one command against a PRIVATE systemd user manager.
#
# Usage: tests/harness/with-user-manager.sh [--user USER] -- CMD [ARGS...]
#
# Exit status: CMD's own status. When the harness itself fails it prints a
# "harness: error: ..." line and exits 2 (refused before doing anything: not
# root, no cgroup2 mount, a tool missing, bad arguments) or 125 (failed while
# setting up or running the private manager). 128+N after signal N.
#
# Why this is needed: a machine without a user session (PID 1 is not systemd)
# has no user manager to talk to, and a `systemd --user` started in the
# machine's own cgroup namespace takes the machine's root cgroup as its own and
# moves every process, PID 1 included, into its init.scope. So the manager is
# only ever started inside private namespaces, following
# docs/private-user-manager.md (the facts and the recipe, with why):
#
#   outer (host namespaces, root)
#     1. mkdir a fresh cgroup2 folder DIR = <cgroup2 mount>/nerve-test-<pid>
#        (/sys/fs/cgroup/unified/... on a hybrid host, /sys/fs/cgroup/... on a
#        pure cgroup2 host); a child process moves itself into DIR and execs
#     2. unshare --cgroup --mount --propagation private  -> this file again, with
#        the internal flag --__inner, whose cgroup namespace is rooted at DIR:
#          - replace /sys/fs/cgroup by a plain cgroup2 mount (the manager sees a
#            pure cgroup2 system whose root is DIR), tmpfs on /run/systemd with
#            /run/systemd/system in it (else systemd --user refuses to start);
#          - fresh 0700 XDG_RUNTIME_DIR, /lib/systemd/systemd --user; wait
#            (bounded) until the manager says running/degraded AND the name
#            org.freedesktop.systemd1 has an owner on the session bus;
#          - run CMD, record its status; `systemctl --user exit`, bounded wait
#            for the manager's pid, then SIGKILL by pid.
#     3. (trap on EXIT/INT/TERM/HUP) cgroup.kill on DIR, wait for "populated 0",
#        rmdir the sub-folders depth first and DIR, remove the runtime folder.
#        A watchdog outside the harness's process tree does the same once the
#        harness is gone however it ended, SIGKILL included (start_watchdog).
#   Everything that must see the manager's cgroups (the daemon under test, its
#   CLI, checks of /sys/fs/cgroup) must therefore run as CMD or a child of it.
#
# CMD sees: XDG_RUNTIME_DIR, XDG_CONFIG_HOME (a fresh folder in it: persistent
# unit settings such as a slice's limits stay with this manager), DBUS_SESSION_BUS_ADDRESS
# (the private bus), NERVE_TEST_PRIVATE_MANAGER=1 and NERVE_CGROUP_ROOT=/sys/fs/cgroup.
# The same variables are in the manager's environment, so user units started by CMD see
# them too. HOME is the caller's (the user's own home with --user); with
# XDG_CONFIG_HOME private, the manager does not read ~/.config/systemd/user.
# The session bus ($XDG_RUNTIME_DIR/bus) is the manager's own socket-activated
# dbus.socket/dbus.service, as in a real user session, not a dbus-daemon
# started by the harness: see step 2 of inner_main for why. Without the
# dbus-user-session units on the machine, equivalent runtime units are written.
# Units started by the manager have no journal: their stdout/stderr is lost
# unless they set StandardOutput= themselves.
#
# --user USER: the unprivileged variant (any existing account; without --user,
# the environment variable NERVE_HARNESS_USER names it, which is how
# scripts/test.sh runs the integration suite a second time unprivileged). DIR
# and its cgroup.procs, cgroup.subtree_control and cgroup.threads are chowned
# to USER and USER's primary group (delegation, as user@.service does); the
# namespaces and mounts are still made as root, but systemd --user (hence its
# bus), the readiness checks and CMD run as USER via `setpriv --reuid=UID
# --regid=GID --init-groups`, the uid and group taken from the account (a
# group need not be named like its user: nobody's is nogroup), with HOME, USER
# and LOGNAME set to USER's and an XDG_RUNTIME_DIR owned by USER.
#
# Existing session: if DBUS_SESSION_BUS_ADDRESS is set and
# `systemctl --user is-system-running` answers running or degraded (a desktop,
# a CI runner with lingering), no private manager is made: CMD is exec'ed
# directly with NERVE_TEST_PRIVATE_MANAGER=0 and NERVE_CGROUP_ROOT set to the
# cgroup2 mount point (unless already set). Set NERVE_FORCE_PRIVATE_MANAGER=1
# to always make a private manager. --user disables this shortcut.
#
# Progress goes to stderr, one "harness: ..." line per phase. The manager's own
# output (its stderr, and its log lines, which it writes to /dev/console: a
# file is bind-mounted there in the private mount namespace) goes to log files
# that are printed only when the harness fails.

set -u
shopt -s nullglob

readonly EXIT_REFUSED=2
readonly EXIT_HARNESS=125
readonly READY_TIMEOUT_S=20      # manager start until running + bus name owned
readonly STOP_TIMEOUT_S=10       # systemctl --user exit until the manager is gone
readonly CG_DRAIN_TIMEOUT_S=10   # cgroup.kill until "populated 0"

log() { printf 'harness: %s\n' "$*" >&2; }
refuse() { log "error: $*"; exit "$EXIT_REFUSED"; }

usage() {
    cat >&2 <<'EOF'
usage: with-user-manager.sh [--user USER] [--no-manager] -- CMD [ARGS...]
Runs CMD against a private systemd user manager (own cgroup + mount namespace),
then tears it down. Exit status is CMD's (2 or 125 if the harness fails).
--user USER (default: $NERVE_HARNESS_USER): the manager and CMD run as that
existing account, over a cgroup subtree delegated to it.
--no-manager (or NERVE_HARNESS_BACKEND=cgroup): no systemd --user, only a
session bus; CMD sees NERVE_TEST_BACKEND=cgroup (nerved's cgroup backend).
EOF
}

# Monotonic milliseconds, for bounded waits and the final timing line.
now_ms() {
    local up
    read -r up _ </proc/uptime
    echo $(( 10#${up/./} * 10 ))
}

# True while PID exists and is not a zombie.
alive() {
    local pid=$1 stat
    [[ -n $pid && -r /proc/$pid/stat ]] || return 1
    read -r stat </proc/"$pid"/stat 2>/dev/null || return 1
    stat=${stat##*) }
    [[ ${stat%% *} != Z ]]
}

# wait_dead PID TIMEOUT_S: bounded wait for PID to end; SIGKILL it after that.
wait_dead() {
    local pid=$1 deadline=$(( $(now_ms) + $2 * 1000 ))
    while alive "$pid"; do
        if (( $(now_ms) >= deadline )); then
            log "pid $pid still alive after ${2}s, sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null
            sleep 0.05
            break
        fi
        sleep 0.02
    done
    wait "$pid" 2>/dev/null
    return 0
}

# The first cgroup2 mount point in this mount namespace (mountinfo field 5;
# the filesystem type follows the " - " separator).
find_cgroup2_mount() {
    local line
    while IFS= read -r line; do
        local -a fields
        local post=${line#* - }
        read -r -a fields <<<"$line"
        [[ ${post%% *} == cgroup2 ]] || continue
        printf '%s\n' "${fields[4]}"
        return 0
    done </proc/self/mountinfo
    return 1
}

# Does the manager get dbus.socket + dbus.service from the usual unit folders?
# (Debian: package dbus-user-session.)
have_dbus_user_units() {
    local d
    for d in /etc/systemd/user /usr/local/lib/systemd/user /usr/lib/systemd/user /lib/systemd/user; do
        [[ -e $d/dbus.socket && -e $d/dbus.service ]] && return 0
    done
    return 1
}

# Fallback copies of dbus-user-session's units, as runtime units of the
# private manager ($XDG_RUNTIME_DIR/systemd/user is in its search path).
write_dbus_user_units() {
    local dir=$1 daemon
    daemon=$(command -v dbus-daemon) || return 1
    mkdir -p "$dir/sockets.target.wants" || return 1
    printf '%s\n' '[Unit]' 'Description=D-Bus User Message Bus Socket (nerve test harness)' \
        '[Socket]' 'ListenStream=%t/bus' >"$dir/dbus.socket" || return 1
    printf '%s\n' '[Unit]' 'Description=D-Bus User Message Bus (nerve test harness)' 'Requires=dbus.socket' \
        '[Service]' 'Type=notify' 'NotifyAccess=main' \
        "ExecStart=$daemon --session --address=systemd: --nofork --nopidfile --systemd-activation --syslog-only" \
        'Slice=session.slice' >"$dir/dbus.service" || return 1
    ln -s ../dbus.socket "$dir/sockets.target.wants/dbus.socket"
}

# --no-manager, inside the namespaces: a session bus (dbus-daemon) and CMD, no systemd --user; CMD
# sees NERVE_TEST_BACKEND=cgroup, and nerved under test takes this namespace's tree (its own cgroup).
# Uses inner_main's locals (as_user, rt, status_file).
run_without_manager() {
    rmdir /run/systemd/system  # nothing here is a systemd-managed system
    export NERVE_TEST_BACKEND=cgroup
    "${as_user[@]}" dbus-daemon --session --nofork --nopidfile --address="$DBUS_SESSION_BUS_ADDRESS" \
        >"$run_base/dbus.log" 2>&1 &
    local bus_pid=$! deadline=$(( $(now_ms) + READY_TIMEOUT_S * 1000 ))
    until "${as_user[@]}" busctl --user status org.freedesktop.DBus >/dev/null 2>&1; do
        alive "$bus_pid" || inner_fail "dbus-daemon exited during start-up"
        (( $(now_ms) < deadline )) || inner_fail "the session bus did not answer within ${READY_TIMEOUT_S}s"
        sleep 0.02
    done
    log "no user manager (--no-manager): session bus ready; running: $*"
    local status
    "${as_user[@]}" "$@"
    status=$?
    echo "$status" >"$status_file"
    log "command exited with status $status; stopping the bus"
    kill -TERM "$bus_pid" 2>/dev/null
    wait_dead "$bus_pid" "$STOP_TIMEOUT_S"
    rm -rf "$rt" 2>/dev/null
    exit 0
}

###############################################################################
# Inner part: runs as root in the private cgroup + mount namespaces.
# argv: --__inner RUN_BASE USER_OR_EMPTY -- CMD...
###############################################################################
inner_main() {
    local run_base=$1 user=$2
    shift 3
    local -a as_user=()
    local status_file=$run_base/status
    local rt=$run_base/xdg
    local sd_pid=''

    inner_fail() {
        log "error: $*"
        local f
        for f in "$run_base"/systemd.log "$run_base"/console.log; do
            [[ -s $f ]] || continue
            log "---- ${f##*/} ----"
            sed 's/^/harness:   /' "$f" >&2
        done
        exit "$EXIT_HARNESS"
    }

    if [[ -n $user ]]; then
        # Numeric ids from the account itself: the primary group is the
        # account's (id -g), whatever its name.
        as_user=(setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups --)
        local home
        home=$(getent passwd "$user" | cut -d: -f6)
        export HOME=${home:-/} USER=$user LOGNAME=$user
    fi

    # 1. Mounts: a pure cgroup2 view rooted at our folder, and the marker
    #    directory systemd --user insists on. Propagation is private, so none
    #    of this is seen outside.
    if mountpoint -q /sys/fs/cgroup; then
        umount -R /sys/fs/cgroup || inner_fail "cannot unmount /sys/fs/cgroup in the private mount namespace"
    fi
    mount -t cgroup2 cgroup2 /sys/fs/cgroup || inner_fail "cannot mount cgroup2 on /sys/fs/cgroup"
    mkdir -p /run/systemd || inner_fail "cannot create /run/systemd"
    mount -t tmpfs -o mode=0755 tmpfs /run/systemd || inner_fail "cannot mount a tmpfs on /run/systemd"
    mkdir /run/systemd/system || inner_fail "cannot create /run/systemd/system"
    # Without a journal, a user manager logs to /dev/console (opened by path,
    # not its stderr): that would be the machine's console. Catch it in a file.
    : >"$run_base/console.log"
    [[ -n $user ]] && chown "$user:" "$run_base/console.log"
    if [[ -e /dev/console ]]; then
        mount --bind "$run_base/console.log" /dev/console ||
            inner_fail "cannot bind $run_base/console.log over /dev/console"
    fi

    # 2. Runtime dir. The session bus is NOT a dbus-daemon of ours: the
    #    manager's dbus.socket unit binds $XDG_RUNTIME_DIR/bus itself (it
    #    unlinks whatever is there, so a dbus-daemon started beforehand ends up
    #    orphaned on a deleted socket) and systemd 252 only connects to the bus
    #    of its own dbus.service. So the bus is socket-activated inside the
    #    manager, exactly as in a real user session (dbus-user-session).
    mkdir -m 0700 "$rt" || inner_fail "cannot create $rt"
    # Persistent unit settings (SetUnitProperties with runtime=false, as `nervectl slice set` makes)
    # are drop-ins under $XDG_CONFIG_HOME/systemd/user.control: a folder of this manager's own, gone
    # with it, so that what one test sets never reaches the next manager (or one running beside it).
    mkdir -m 0700 "$rt/config" || inner_fail "cannot create $rt/config"
    if ! have_dbus_user_units; then
        write_dbus_user_units "$rt/systemd/user" || inner_fail "cannot write fallback dbus units in $rt"
    fi
    if [[ -n $user ]]; then
        chown -R "$user:" "$rt" || inner_fail "cannot chown $rt to '$user'"
    fi
    export XDG_RUNTIME_DIR=$rt
    export XDG_CONFIG_HOME=$rt/config
    export DBUS_SESSION_BUS_ADDRESS=unix:path=$rt/bus
    export NERVE_TEST_PRIVATE_MANAGER=1
    export NERVE_CGROUP_ROOT=/sys/fs/cgroup
    # Nothing of a surrounding service manager may leak into ours.
    unset NOTIFY_SOCKET LISTEN_PID LISTEN_FDS LISTEN_FDNAMES WATCHDOG_PID WATCHDOG_USEC \
          INVOCATION_ID JOURNAL_STREAM MANAGERPID SYSTEMD_EXEC_PID

    # No manager (--no-manager): a dbus-daemon of ours is the session bus, and nerved runs on its
    # cgroup backend over this namespace's tree (a privileged container's view; issue: no user manager).
    [[ ${NERVE_HARNESS_BACKEND:-systemd} == cgroup ]] && run_without_manager "$@"

    # 3. The manager, and a bounded wait until it is usable over the bus.
    local sd_bin deadline
    for sd_bin in /lib/systemd/systemd /usr/lib/systemd/systemd ''; do
        [[ -x $sd_bin ]] && break
    done
    [[ -n $sd_bin ]] || inner_fail "no systemd binary in /lib/systemd or /usr/lib/systemd"
    # shellcheck disable=SC2016 # the quotes around $user are literal
    log "starting private systemd --user${user:+ as '$user'} (XDG_RUNTIME_DIR=$rt)"
    "${as_user[@]}" "$sd_bin" --user >"$run_base/systemd.log" 2>&1 &
    sd_pid=$!
    deadline=$(( $(now_ms) + READY_TIMEOUT_S * 1000 ))
    local state='' owned=''
    while :; do
        alive "$sd_pid" || inner_fail "systemd --user exited during start-up"
        state=$("${as_user[@]}" systemctl --user is-system-running 2>/dev/null)
        if [[ $state == running || $state == degraded ]]; then
            owned=$("${as_user[@]}" busctl --user call org.freedesktop.DBus /org/freedesktop/DBus \
                        org.freedesktop.DBus NameHasOwner s org.freedesktop.systemd1 2>/dev/null)
            [[ $owned == 'b true' ]] && break
        fi
        (( $(now_ms) < deadline )) ||
            inner_fail "manager not ready within ${READY_TIMEOUT_S}s (state '${state:-no answer}', systemd1 owned: '${owned:-?}')"
        sleep 0.02
    done
    if [[ $state == degraded ]]; then
        log "manager is degraded; failed units: $("${as_user[@]}" systemctl --user --failed --plain --no-legend 2>/dev/null | awk '{printf "%s ", $1}')"
    fi

    # 4. CMD, with the terminal's stdin.
    log "manager ready ($state); running: $*"
    local status
    "${as_user[@]}" "$@"
    status=$?
    echo "$status" >"$status_file"
    log "command exited with status $status; stopping the manager"

    # 5. Orderly teardown (the outer part kills whatever is left).
    if ! timeout 5 "${as_user[@]}" systemctl --user exit >/dev/null 2>&1; then
        log "systemctl --user exit failed, sending SIGTERM to the manager"
        kill -TERM "$sd_pid" 2>/dev/null
    fi
    wait_dead "$sd_pid" "$STOP_TIMEOUT_S"
    rm -rf "$rt" 2>/dev/null
    exit 0
}

###############################################################################
# Outer part: host namespaces.
###############################################################################
if [[ ${1:-} == --__inner ]]; then
    shift
    inner_main "$@"
fi

t_start=$(now_ms)
user=${NERVE_HARNESS_USER:-}
while (( $# )); do
    case $1 in
        --user)    [[ $# -ge 2 && -n $2 ]] || { usage; refuse "--user needs a user name"; }
                   user=$2; shift 2 ;;
        --user=*)  user=${1#--user=}; shift ;;
        --no-manager) export NERVE_HARNESS_BACKEND=cgroup; shift ;;
        -h|--help) usage; exit 0 ;;
        --)        shift; break ;;
        *)         usage; refuse "unexpected argument '$1' (the command goes after '--')" ;;
    esac
done
(( $# )) || { usage; refuse "no command given"; }

cg2_mount=$(find_cgroup2_mount) || cg2_mount=''

# A real user session is already there: use it.
if [[ -z $user && ${NERVE_FORCE_PRIVATE_MANAGER:-0} != 1 && ${NERVE_HARNESS_BACKEND:-systemd} != cgroup &&
      -n ${DBUS_SESSION_BUS_ADDRESS:-} ]]; then
    state=$(timeout 5 systemctl --user is-system-running 2>/dev/null)
    if [[ $state == running || $state == degraded ]]; then
        log "using the existing user manager ($state); no private manager"
        export NERVE_TEST_PRIVATE_MANAGER=${NERVE_TEST_PRIVATE_MANAGER:-0}
        export NERVE_CGROUP_ROOT=${NERVE_CGROUP_ROOT:-${cg2_mount:-/sys/fs/cgroup}}
        exec "$@"
    fi
fi

(( EUID == 0 )) || refuse "must run as root (it makes namespaces and mounts; use --user USER for an unprivileged manager)"
[[ -n $cg2_mount ]] || refuse "no cgroup2 mount found in /proc/self/mountinfo"
for tool in unshare mount umount mountpoint dbus-daemon systemctl busctl timeout find setsid python3 ${user:+setpriv getent}; do
    command -v "$tool" >/dev/null || refuse "'$tool' not found in PATH"
done
if [[ -n $user ]]; then
    id -u "$user" >/dev/null 2>&1 || refuse "no such user '$user'"
fi

cg_dir=$cg2_mount/nerve-test-$$
run_base=''
child=''
cleaned=0

cleanup() {
    (( cleaned )) && return
    cleaned=1
    local f
    if [[ -d $cg_dir ]]; then
        local deadline=$(( $(now_ms) + CG_DRAIN_TIMEOUT_S * 1000 )) populated=1 line
        while :; do
            populated=0
            while read -r line; do
                [[ $line == 'populated 1' ]] && populated=1
            done <"$cg_dir/cgroup.events"
            (( populated )) || break
            (( $(now_ms) < deadline )) || break
            if [[ -e $cg_dir/cgroup.kill ]]; then
                # Written again each round: a process that joined after the
                # previous write survived it.
                echo 1 >"$cg_dir/cgroup.kill" 2>/dev/null
            else
                # Kernels before 5.14: kill member by member.
                find "$cg_dir" -name cgroup.procs -exec cat {} + 2>/dev/null |
                    while read -r f; do kill -KILL "$f" 2>/dev/null; done
            fi
            sleep 0.01
        done
        (( populated )) && log "error: $cg_dir still populated after ${CG_DRAIN_TIMEOUT_S}s"
        # Depth first: a cgroup folder can only go once its children are gone.
        find "$cg_dir" -depth -type d -exec rmdir {} + 2>/dev/null
        [[ -d $cg_dir ]] && log "error: could not remove $cg_dir"
    fi
    [[ -n $child ]] && wait "$child" 2>/dev/null
    [[ -n $run_base && -d $run_base ]] && rm -rf "$run_base"
}

# start_watchdog: a process outside this shell's tree (setsid, its parent gone at once, so a kill of
# the harness's whole tree, e.g. by a ctest timeout, does not reach it) that waits on this shell's
# pidfd and, once the shell is gone however it ended (SIGKILL included), does what cleanup() would:
# cgroup.kill on DIR until it is empty, rmdir of its folders depth first, rm -rf of the run folder.
# After a normal exit cleanup() has done it all and the watchdog finds nothing to do. Its stdio is
# /dev/null and it keeps no other fd, so no one reading the harness's output waits for it.
start_watchdog() {
    (
        trap - EXIT INT TERM HUP
        setsid python3 -c "$WATCHDOG_PY" "$$" "$cg_dir" "$run_base" "$CG_DRAIN_TIMEOUT_S" \
            </dev/null >/dev/null 2>&1 &
    )
}
# shellcheck disable=SC2016 # python, not shell
readonly WATCHDOG_PY='
import os, select, shutil, signal, sys, time
os.closerange(3, 65536)
pid, cg, base, drain = int(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4])
try:
    fd = os.pidfd_open(pid)
    select.select([fd], [], [])
except ProcessLookupError:
    pass
def populated():
    try:
        with open(cg + "/cgroup.events") as f:
            return "populated 1" in f.read().split("\n")
    except OSError:
        return False
def kill_members():
    for root, _, _ in os.walk(cg):
        try:
            with open(root + "/cgroup.procs") as f:
                for p in f.read().split():
                    os.kill(int(p), signal.SIGKILL)
        except (OSError, ValueError):
            pass
deadline = time.monotonic() + drain
while os.path.isdir(cg) and populated() and time.monotonic() < deadline:
    try:
        with open(cg + "/cgroup.kill", "w") as f:
            f.write("1")
    except OSError:
        kill_members()
    time.sleep(0.01)
for root, _, _ in os.walk(cg, topdown=False):
    try:
        os.rmdir(root)
    except OSError:
        pass
if base:
    shutil.rmtree(base, ignore_errors=True)
'

# shellcheck disable=SC2317 # called from the traps below
on_signal() {
    log "got SIG$1, tearing down"
    cleanup
    trap - "$1"
    kill -"$1" $$
    exit $(( 128 + $2 ))
}
trap cleanup EXIT
trap 'on_signal INT 2' INT
trap 'on_signal TERM 15' TERM
trap 'on_signal HUP 1' HUP

run_base=$(mktemp -d "${TMPDIR:-/tmp}/nerve-harness.XXXXXX") || { log "error: mktemp failed"; exit "$EXIT_HARNESS"; }
[[ -n $user ]] && chmod 0711 "$run_base"
mkdir "$cg_dir" || { log "error: cannot create $cg_dir"; exit "$EXIT_HARNESS"; }
if [[ -n $user ]]; then
    chown "$user:" "$cg_dir" "$cg_dir"/cgroup.procs "$cg_dir"/cgroup.subtree_control "$cg_dir"/cgroup.threads ||
        { log "error: cannot delegate $cg_dir to '$user'"; exit "$EXIT_HARNESS"; }
fi
log "cgroup $cg_dir, private cgroup + mount namespace"
# From here on the folder and the run folder go with the harness, even if it is SIGKILLed.
start_watchdog

self=$(readlink -f "${BASH_SOURCE[0]}")
# A grandchild moves itself (not this shell) into the folder and execs
# unshare: the cgroup namespace is rooted where it stands at that moment. The
# subshell in between stays outside the folder, so cgroup.kill never kills a
# job of this shell, and its own stderr goes to /dev/null: no "Killed" job
# notices when the teardown kills the grandchild. Run in the background so
# that signals reach our traps without delay; <&0 keeps the caller's stdin.
(
    trap - EXIT INT TERM HUP
    exec {stderr_fd}>&2 2>/dev/null
    # shellcheck disable=SC2016 # expanded by the inner bash
    "$BASH" -c 'echo "$$" >"$1/cgroup.procs" || exit 1; shift; exec "$@"' join "$cg_dir" \
        unshare --cgroup --mount --propagation private -- "$BASH" "$self" --__inner "$run_base" "$user" -- "$@" \
        2>&"$stderr_fd" {stderr_fd}>&-
) <&0 &
child=$!
wait "$child"
inner_rc=$?
child=''

if [[ -s $run_base/status ]]; then
    read -r rc <"$run_base/status"
else
    log "error: the harness failed before the command finished (inner part exited with $inner_rc)"
    rc=$EXIT_HARNESS
fi
cleanup
log "done in $(( $(now_ms) - t_start )) ms, exit status $rc"
exit "$rc"
