#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-nerve-sh.sh: nerve-sh's command line, without a bus: what it execs, its errors, its docs.
#
# Usage: tests/check-nerve-sh.sh NERVE_SH REPO_ROOT
#
# A copy of NERVE_SH runs next to a fake nervectl that prints its arguments (one a line) and its pid,
# then exits 7. Checked:
#   - `nerve-sh -c CMD NAME ARG` execs `nervectl launch --wait RUN -- /bin/sh -c CMD NAME ARG`, its
#     arguments unchanged (blanks, quotes, globs), in the same process (the pid of RUN is nervectl's),
#     and exits with nervectl's status; RUN is PREFIX-YYYYmmddTHHMMSS.NNNNNNNNN-PID, new each call;
#   - PREFIX: the parent's name (comm), NERVE_SH_PREFIX, nerve-sh when the parent's name is not one;
#   - NERVE_SH_OPTIONS split at blanks, never globbed; NERVE_SH_SHELL used; bash as nerve-bash;
#   - bad settings exit 2 naming the variable and quoting the value, and nervectl is not run;
#   - without a nervectl next to it, the one in PATH;
#   - --help names every variable and option, man/nerve-sh.1.scd documents each, and the bash
#     completion offers the options.
# Exit 0 all good; 1 a failure (one line each); 2 bad usage.
set -u
(( $# == 2 )) || { echo "usage: check-nerve-sh.sh NERVE_SH REPO_ROOT" >&2; exit 2; }
nerve_sh=$1 root=$2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "nerve-sh: $*"; failures=$((failures + 1)); }

mkdir "$tmp/bin" "$tmp/alone" "$tmp/path"
cp "$nerve_sh" "$tmp/bin/nerve-sh"
cp "$nerve_sh" "$tmp/alone/nerve-sh"
ln -s nerve-sh "$tmp/bin/nerve-bash"
fake='#!/bin/sh
echo "pid=$$"
for a in "$@"; do printf "%s\n" "$a"; done
exit 7'
printf '%s\n' "$fake" >"$tmp/bin/nervectl"
printf '%s\n' "${fake/exit 7/exit 8}" >"$tmp/path/nervectl"
chmod +x "$tmp/bin/nervectl" "$tmp/path/nervectl"
# An engine of a known name: a copy of sh called myengine (its comm), which runs nerve-sh as a child.
cp /bin/sh "$tmp/myengine"

# call ENV... -- ARG...: nerve-sh ARG... run by myengine with ENV; sets out (stdout and stderr) and rc.
call() {
    local -a env=()
    while [[ $1 != -- ]]; do env+=("$1"); shift; done
    shift
    out=$(env "${env[@]}" "$tmp/myengine" -c '"$0" "$@"; exit $?' "$tmp/bin/nerve-sh" "$@" 2>&1)
    rc=$?
}
stamp='[0-9]{8}T[0-9]{6}\.[0-9]{9}'

# The exec: arguments unchanged, the run id, the same pid, nervectl's exit status.
call -- -c 'printf "%s\n" "$1" *' name 'a "b"  c*'
mapfile -t got <<<"$out"
want=(launch --wait RUN -- /bin/sh -c 'printf "%s\n" "$1" *' name 'a "b"  c*')
(( rc == 7 )) || fail "exit status $rc, not the 7 of nervectl: $out"
pid=${got[0]#pid=}
run=${got[3]:-}
[[ $run =~ ^myengine-${stamp}-${pid}$ ]] || fail "run id '$run' is not myengine-TIME-$pid (the pid of nervectl)"
got[3]=RUN
[[ ${got[*]:1} == "${want[*]}" && ${#got[@]} == $(( ${#want[@]} + 1 )) ]] ||
    fail "execs [${got[*]:1}], expected [${want[*]}]"
call -- -c true
mapfile -t again <<<"$out"
[[ ${again[3]:-} != "$run" ]] || fail "two calls got the same run id $run"

# The prefix.
call NERVE_SH_PREFIX=build.7:x -- -c true
mapfile -t got <<<"$out"
[[ ${got[3]:-} =~ ^build\.7:x-${stamp}-[0-9]+$ ]] || fail "NERVE_SH_PREFIX=build.7:x gave run id '${got[3]:-}'"
long=$(printf 'p%.0s' {1..94})
call NERVE_SH_PREFIX="$long" -- -c true
(( rc == 7 )) || fail "a prefix of 94 characters was refused: $out"
out=$(cd "$tmp" && ln -s myengine 'bad name' && "$tmp/bad name" -c '"$0" -c true; exit $?' "$tmp/bin/nerve-sh" 2>&1)
mapfile -t got <<<"$out"
[[ ${got[3]:-} =~ ^nerve-sh-${stamp}-[0-9]+$ ]] || fail "a parent named 'bad name' gave run id '${got[3]:-}'"

# Bad settings: exit 2, the variable and its value in the message, nothing run.
expect_refused() {  # VAR=VALUE TEXT
    call "$1" -- -c true
    (( rc == 2 )) || fail "$1: exit status $rc, expected 2: $out"
    [[ $out == *"$2"* ]] || fail "$1: the message does not say \"$2\": $out"
    [[ $out != *pid=* ]] || fail "$1: nervectl was run"
}
expect_refused 'NERVE_SH_PREFIX=a b' "NERVE_SH_PREFIX='a b' is not a run id prefix"
expect_refused 'NERVE_SH_PREFIX=.hidden' "NERVE_SH_PREFIX='.hidden' is not a run id prefix"
expect_refused 'NERVE_SH_PREFIX=' "NERVE_SH_PREFIX='' is not a run id prefix"
expect_refused "NERVE_SH_PREFIX=${long}p" "NERVE_SH_PREFIX='${long}p' is not a run id prefix"
expect_refused 'NERVE_SH_SHELL=bash' "NERVE_SH_SHELL='bash' is not an absolute path"
expect_refused "NERVE_SH_SHELL=$tmp/none" "NERVE_SH_SHELL='$tmp/none' is not an executable file"

# NERVE_SH_OPTIONS and NERVE_SH_SHELL.
touch "$tmp/bin/--glob-me"
cd "$tmp/bin" || exit 2  # where '--*' would match a file, if it were globbed
call 'NERVE_SH_OPTIONS= --grace 5  -p MemoryMax=2G --* ' NERVE_SH_SHELL=/bin/bash -- -c true
mapfile -t got <<<"$out"
want=(launch --wait --grace 5 -p MemoryMax=2G '--*' RUN -- /bin/bash -c true)
got[8]=RUN
[[ ${got[*]:1} == "${want[*]}" ]] || fail "NERVE_SH_OPTIONS/NERVE_SH_SHELL: execs [${got[*]:1}], expected [${want[*]}]"

# nerve-bash: bash by default; NERVE_SH_SHELL still wins.
out=$("$tmp/myengine" -c '"$0" -c true; exit $?' "$tmp/bin/nerve-bash" 2>&1)
mapfile -t got <<<"$out"
[[ ${got[5]:-} == /bin/bash ]] || fail "nerve-bash runs '${got[5]:-}', not /bin/bash"
out=$(NERVE_SH_SHELL=/bin/sh "$tmp/myengine" -c '"$0" -c true; exit $?' "$tmp/bin/nerve-bash" 2>&1)
mapfile -t got <<<"$out"
[[ ${got[5]:-} == /bin/sh ]] || fail "nerve-bash with NERVE_SH_SHELL=/bin/sh runs '${got[5]:-}'"

# nervectl from PATH when none is next to nerve-sh.
out=$(PATH="$tmp/path:$PATH" "$tmp/alone/nerve-sh" -c true 2>&1)
rc=$?
(( rc == 8 )) || fail "without a nervectl next to it, it did not run the one in PATH (exit $rc): $out"

# --version, --help, the man page, the completion.
out=$("$tmp/bin/nerve-sh" --version) && [[ $out =~ ^nerve-sh\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "--version printed '$out'"
help=$("$tmp/bin/nerve-sh" --help) || fail "--help exited $?"
[[ $help == Usage:* ]] || fail "--help does not start with Usage:"
man=$(<"$root/man/nerve-sh.1.scd")
mapfile -t vars < <(grep -o '^  NERVE_SH_[A-Z_]*' <<<"$help" | tr -d ' ')
(( ${#vars[@]} == 3 )) || fail "--help names ${#vars[@]} variables, expected 3: ${vars[*]}"
for v in "${vars[@]}"; do
    grep -q "^\*${v//_/\\\\_}\*\$" <<<"$man" || fail "man/nerve-sh.1.scd has no entry *${v//_/\\_}* for $v"
done
mapfile -t opts < <(grep -o '^  --[a-z-]*' <<<"$help" | tr -d ' ')
(( ${#opts[@]} == 2 )) || fail "--help names ${#opts[@]} options, expected 2: ${opts[*]}"
for o in "${opts[@]}"; do
    grep -q "^\*${o}\*\$" <<<"$man" || fail "man/nerve-sh.1.scd has no entry *$o* for $o"
done
for name in nerve-sh nerve-bash; do
offered=$(env -i PATH="$PATH" NAME="$name" bash --norc --noprofile -c '
source "$1" || exit 1
spec=$(complete -p "$NAME") || exit 1
[[ $spec =~ -F\ ([^ ]+) ]] || exit 1
COMP_WORDS=(nerve-sh --) COMP_CWORD=1
"${BASH_REMATCH[1]}" nerve-sh -- nerve-sh
printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ "$root/completion/nerve-sh.bash")
[[ $offered == "--help --version " ]] || fail "the completion of '$name --' offers [$offered], expected [--help --version]"
done

(( failures == 0 )) && echo "nerve-sh: all checks passed"
(( failures == 0 ))
