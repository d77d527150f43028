#!/usr/bin/env bash
# Fails when an object built for an ISA (avx2_*, avx512_*) holds a weak
# (inline or template) function with VEX/EVEX instructions that another
# object also defines: the linker keeps one copy, and if it keeps the ISA
# one, ref or AVX2 code would run AVX-512 instructions on a smaller CPU.
# Shared weak functions compiled for baseline x86-64 are harmless and pass.
# Usage: check-isa-symbols.sh OBJECT...   (run by CTest as isa_symbols_test)
set -euo pipefail
isa=() other=()
for o in "$@"; do
  case "$(basename "$o")" in
    avx2_* | avx512_*) isa+=("$o") ;;
    *) other+=("$o") ;;
  esac
done
((${#isa[@]} > 0)) || { echo "no ISA objects given" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for o in "${isa[@]}"; do
  # Functions whose bodies use VEX/EVEX (v...) or mask-register (k...) ops.
  objdump -d --no-show-raw-insn "$o" |
    awk '/^[0-9a-f]+ <.*>:$/ {f = $2; gsub(/[<>:]/, "", f); next}
         /\t(v[a-z0-9]+|k[a-z]+) / {print f}' | sort -u >"$tmp/vector"
  nm "$o" | awk '$2 == "W" {print $3}' | sort -u |
    comm -12 - "$tmp/vector" >"$tmp/weak_vector"
  for p in "$@"; do
    [[ "$p" == "$o" ]] && continue
    nm "$p" | awk '$2 ~ /^[TWtw]$/ {print $3}' | sort -u |
      comm -12 "$tmp/weak_vector" - >"$tmp/shared"
    while read -r sym; do
      echo "$(basename "$o") and $(basename "$p") both define" \
        "$(echo "$sym" | c++filt), with ISA code in the first"
      status=1
    done <"$tmp/shared"
  done
done
if [[ $status -eq 0 ]]; then
  echo "isa symbols: ${#isa[@]} ISA objects share no weak ISA code with" \
    "${#other[@]} others"
fi
exit $status
