# SPDX-License-Identifier: LGPL-2.1-or-later
# bash completion for nervectl(1): verbs, the options of each verb, and run ids.
#
# Run ids are the folder names of nerved's default runs folder, ${XDG_STATE_HOME:-~/.local/state}/nerve/runs,
# read directly: completing never calls nerved (a bus call would start it through D-Bus activation).
# tests/check-completion.sh (ctest completion) fails when a verb or an option of `nervectl --help` is
# missing here.

_nervectl_verbs='launch reap cancel freeze thaw status list reconcile forget slice events doctor sealing metrics'
declare -A _nervectl_options=(
    [launch]='--wait --grace --keep --sealed --property --timeout --slice --help'
    [slice]='--property --help'
    [reap]='--grace --json --help'
    [cancel]='--signal --grace --json --help'
    [freeze]='--help'
    [thaw]='--help'
    [status]='--json --help'
    [list]='--json --no-legend --help'
    [reconcile]='--json --help'
    [forget]='--help'
    [sealing]='--json --help'
    [events]='--json --help'
    [doctor]='--json --help'
    [metrics]='--format --help'
)
# Options that take a value (nothing to complete for it).
_nervectl_valued='--grace --property -p --timeout --slice --signal --format'
# Verbs that take a run id, and which runs fit: all, or only reaped ones (forget).
declare -A _nervectl_run_arg=([launch]=all [reap]=all [cancel]=all [freeze]=all [thaw]=all [status]=all [forget]=reaped)

# _nervectl_runs all|reaped: the run ids of the runs folder.
_nervectl_runs() {
    local dir=${XDG_STATE_HOME:-$HOME/.local/state}/nerve/runs d
    [[ -d $dir ]] || return 0
    for d in "$dir"/*/; do
        d=${d%/}
        [[ -e $d/lifecycle.json ]] || continue
        if [[ $1 == reaped ]]; then
            grep -q '"state": *"reaped"' "$d/lifecycle.json" 2>/dev/null || continue
        fi
        printf '%s\n' "${d##*/}"
    done
}

_nervectl() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local verb='' i positional=0
    COMPREPLY=()
    for (( i = 1; i < COMP_CWORD; i++ )); do
        local w=${COMP_WORDS[i]}
        if [[ -z $verb ]]; then
            [[ $w == -* ]] || verb=$w
            continue
        fi
        if [[ $w == -- ]]; then
            # launch RUN -- CMD [ARG...]: the command, then its own arguments (files).
            if (( i == COMP_CWORD - 1 )); then
                mapfile -t COMPREPLY < <(compgen -c -- "$cur")
            else
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            fi
            return 0
        fi
        [[ $w == -* || $w == = ]] && continue
        [[ ${COMP_WORDS[i-1]} == = ]] && continue  # the value of --json=MODE (bash splits at '=')
        [[ " $_nervectl_valued " == *" ${COMP_WORDS[i-1]} "* ]] && continue
        positional=$(( positional + 1 ))
    done

    if [[ -z $verb ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$_nervectl_verbs --help --version" -- "$cur")
        return 0
    fi
    [[ -n ${_nervectl_options[$verb]+set} ]] || return 0
    if [[ $prev == --format ]]; then
        mapfile -t COMPREPLY < <(compgen -W "openmetrics prometheus" -- "$cur")
        return 0
    fi
    if [[ " $_nervectl_valued " == *" $prev "* ]]; then
        return 0
    fi
    # --json=MODE, as systemctl. bash splits the word at '=' (COMP_WORDBREAKS): "--json" "=" "MODE".
    if [[ $prev == = && ${COMP_WORDS[COMP_CWORD-2]} == --json ]] || [[ $cur == = && $prev == --json ]]; then
        [[ $cur == = ]] && cur=''
        mapfile -t COMPREPLY < <(compgen -W "short pretty off" -- "$cur")
        return 0
    fi
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "${_nervectl_options[$verb]}" -- "$cur")
        return 0
    fi
    if (( positional == 0 )) && [[ -n ${_nervectl_run_arg[$verb]+set} ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_nervectl_runs "${_nervectl_run_arg[$verb]}")" -- "$cur")
    elif (( positional == 1 )) && [[ $verb == launch ]]; then
        COMPREPLY=(--)
    fi
    return 0
}
complete -F _nervectl nervectl
