#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# libnerve.so's ABI (lib/libnerve/exports.map): the soname is libnerve.so.0; every symbol it defines
# for others is a nerve_* function with the version NERVE_1 (nothing of libstdc++, base or process
# leaks); it needs no libstdc++ or libsdbus-c++ (linked in statically, or not at all).
# Usage: check-abi.sh LIBNERVE_SO
set -euo pipefail
so=$1
fail() { echo "check-abi: $*" >&2; exit 1; }

soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $soname == libnerve.so.0 ]] || fail "soname '$soname', not libnerve.so.0"
needed=$(readelf -d "$so" | awk '/NEEDED/ {print $NF}')
for lib in libstdc++ libsdbus-c++ libgcc_s; do
  ! grep -q "$lib" <<<"$needed" || fail "needs $lib: $(tr '\n' ' ' <<<"$needed")"
done
# Defined dynamic symbols: NAME@@VERSION (and the version's own symbol).
exported=$(nm -D --defined-only "$so" | awk '{print $3}')
n=0
while read -r sym; do
  [[ $sym == NERVE_1 || $sym == NERVE_1@@NERVE_1 ]] && continue
  [[ $sym == nerve_*@@NERVE_1 ]] || fail "exports $sym"
  n=$((n + 1))
done <<<"$exported"
(( n >= 30 )) || fail "only $n nerve_* functions exported"
for f in nerve_contain_exec nerve_launch nerve_run_wait nerve_run_get_fd nerve_run_process nerve_reap \
         nerve_cancel nerve_freeze nerve_thaw nerve_status_get nerve_receipt_parse nerve_error_free; do
  grep -qx "$f@@NERVE_1" <<<"$exported" || fail "does not export $f@@NERVE_1"
done
echo "check-abi: ok ($n functions, needs: $(tr '\n' ' ' <<<"$needed"))"
