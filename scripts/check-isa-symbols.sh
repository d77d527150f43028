#!/usr/bin/env bash
# Fails when an object compiled with ISA flags (avx2_*, avx512_*, neon_*)
# emits a weak (inline or template) code symbol that another object also
# defines: the linker keeps one copy, and if it keeps the ISA one, ref or
# AVX2 code would run AVX-512 instructions on a smaller CPU.
# Usage: check-isa-symbols.sh OBJECT...   (run by CTest as isa_symbols_test)
set -euo pipefail
isa=() other=()
for o in "$@"; do
  case "$(basename "$o")" in
    avx2_* | avx512_* | neon_*) isa+=("$o") ;;
    *) other+=("$o") ;;
  esac
done
((${#isa[@]} > 0)) || { echo "no ISA objects given" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
defined() { nm "$1" | awk '$2 ~ /^[TWtw]$/ {print $3}' | sort -u; }
status=0
for o in "${isa[@]}"; do
  nm "$o" | awk '$2 == "W" {print $3}' | sort -u >"$tmp/weak"
  for p in "$@"; do
    [[ "$p" == "$o" ]] && continue
    defined "$p" | comm -12 "$tmp/weak" - | while read -r sym; do
      echo "$(basename "$o") and $(basename "$p") both define $(echo "$sym" | c++filt)"
    done >"$tmp/shared"
    if [[ -s "$tmp/shared" ]]; then cat "$tmp/shared"; status=1; fi
  done
done
[[ $status -eq 0 ]] && echo "isa symbols: ${#isa[@]} ISA objects share no weak code with ${#other[@]} others"
exit $status
