#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-completion.sh: the bash completion of nervectl, driven as bash drives it.
#
# Usage: tests/check-completion.sh NERVECTL COMPLETION_FILE
#
# Sources COMPLETION_FILE in a clean bash, checks that `complete -p nervectl` names its function, then
# calls that function with COMP_WORDS/COMP_CWORD set as bash sets them and compares COMPREPLY with
# what nervectl itself says (tests/verb_table.py: the verbs of `nervectl --help`, each verb's options):
#   - "nervectl <TAB>" offers every verb; "nervectl re<TAB>" only the verbs starting with "re";
#   - "nervectl VERB -<TAB>" offers every option of VERB (--help may be offered too, nothing else);
#   - "nervectl VERB --grace <TAB>" offers nothing (a value);
#   - run ids come from a runs folder made here ($XDG_STATE_HOME/nerve/runs): reap/status offer every
#     run, forget only the reaped one; .quarantine and folders without a record are not offered;
#   - after "launch RUN --" the command is completed from PATH;
#   - "--json=<TAB>" (which bash splits into "--json" "=" "") offers the modes short, pretty and off,
#     and a run id is still completed after it.
# Exit 0 all good; 1 a mismatch (one line each); 2 bad usage.
set -u
(( $# == 2 )) || { echo "usage: check-completion.sh NERVECTL COMPLETION_FILE" >&2; exit 2; }
nervectl=$1 completion=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

table=$(/usr/bin/python3 "$here/verb_table.py" "$nervectl") || { echo "completion: cannot read the verb table" >&2; exit 2; }
state=$(mktemp -d) || exit 2
trap 'rm -rf "$state"' EXIT
runs=$state/nerve/runs
mkdir -p "$runs/build-1" "$runs/old.2" "$runs/.quarantine/x" "$runs/no-record"
printf '{\n  "run": "build-1",\n  "state": "running"\n}\n' >"$runs/build-1/lifecycle.json"
printf '{\n  "run": "old.2",\n  "state": "reaped"\n}\n' >"$runs/old.2/lifecycle.json"

# The checks run in a bash that knows nothing but the completion file.
env -i PATH="$PATH" HOME="$state" XDG_STATE_HOME="$state" TABLE="$table" \
    bash --norc --noprofile -c '
failures=0
fail() { echo "completion: $*"; failures=$((failures + 1)); }
source "$1" || { echo "completion: cannot source $1"; exit 1; }
spec=$(complete -p nervectl 2>/dev/null) || { fail "complete -p nervectl: no completion registered"; exit 1; }
[[ $spec =~ -F\ ([^ ]+) ]] || { fail "complete -p nervectl does not name a function: $spec"; exit 1; }
func=${BASH_REMATCH[1]}

# offers WORD... :: EXPECTED...: the completion of the command line WORD... (the last one being
# completed) must be exactly EXPECTED (order ignored).
offers() {
    local -a words=() expected=()
    while [[ $1 != "::" ]]; do words+=("$1"); shift; done
    shift
    expected=("$@")
    COMP_WORDS=("${words[@]}") COMP_CWORD=$(( ${#words[@]} - 1 )) COMPREPLY=()
    COMP_LINE="${words[*]}" COMP_POINT=${#COMP_LINE}
    "$func" nervectl "${words[-1]}" "${words[-2]}"
    local got want
    got=$(printf "%s\n" "${COMPREPLY[@]}" | sort -u | tr "\n" " ")
    want=$(printf "%s\n" "${expected[@]}" | sort -u | tr "\n" " ")
    [[ $got == "$want" ]] || fail "\"${words[*]}<TAB>\": offered [${got% }], expected [${want% }]"
}

verbs=()
while read -r verb opts; do
    [[ $verb == "*" ]] && continue
    verbs+=("$verb")
    read -r -a want <<<"$opts"
    COMP_WORDS=(nervectl "$verb" -) COMP_CWORD=2 COMPREPLY=()
    "$func" nervectl - "$verb"
    for o in "${want[@]}"; do
        [[ " ${COMPREPLY[*]} " == *" $o "* ]] || fail "\"nervectl $verb -<TAB>\" does not offer $o"
    done
    for o in "${COMPREPLY[@]}"; do
        [[ $o == --help || " ${want[*]} " == *" $o "* ]] || fail "\"nervectl $verb -<TAB>\" offers $o, which $verb does not have"
    done
done <<<"$TABLE"
(( ${#verbs[@]} > 0 )) || fail "no verbs in the verb table"

COMP_WORDS=(nervectl "") COMP_CWORD=1 COMPREPLY=()
"$func" nervectl "" nervectl
for v in "${verbs[@]}"; do
    [[ " ${COMPREPLY[*]} " == *" $v "* ]] || fail "\"nervectl <TAB>\" does not offer verb $v"
done
for v in "${COMPREPLY[@]}"; do
    [[ $v == -* || " ${verbs[*]} " == *" $v "* ]] || fail "\"nervectl <TAB>\" offers $v, which is not a verb"
done
offers nervectl re :: $(printf "%s\n" "${verbs[@]}" | grep "^re")
offers nervectl reap --grace "" ::
offers nervectl status "" :: build-1 old.2
offers nervectl reap --grace 5 b :: build-1
offers nervectl forget "" :: old.2
offers nervectl status build-1 "" ::
offers nervectl launch --wait build-1 "" :: --
offers nervectl launch build-1 -- bas :: $(compgen -c -- bas)
offers nervectl list "" ::
offers nervectl list --json = "" :: short pretty off
offers nervectl list --json = p :: pretty
offers nervectl status --json = short "" :: build-1 old.2
(( failures == 0 )) || { echo "completion: FAILED: $failures problem(s)"; exit 1; }
echo "completion: ${#verbs[@]} verbs, their options and run ids complete as nervectl says"
' check-completion "$completion"
