# SPDX-License-Identifier: LGPL-2.1-or-later
# bash completion for nerve-sh(1) and nerve-bash: their own options as the first word; otherwise what
# bash completes by default (files), as for sh. Installed under both names. tests/check-nerve-sh.sh
# (ctest nerve-sh) fails when an option of `nerve-sh --help` is missing here.

_nerve_sh() {
    local cur=${COMP_WORDS[COMP_CWORD]}
    COMPREPLY=()
    if (( COMP_CWORD == 1 )) && [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W '--help --version -c' -- "$cur")
    fi
}
complete -o bashdefault -o default -F _nerve_sh nerve-sh nerve-bash
