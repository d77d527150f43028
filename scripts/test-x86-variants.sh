#!/usr/bin/env bash
# Runs `layerproof selftest` under qemu-x86_64 as CPUs this machine is not:
# an AVX2-only Haswell (backends ref and avx2) and the baseline x86-64
# (ref only). It checks that the golden hashes hold on those ISA mixes and
# that no AVX-512 instruction leaks into code a smaller CPU runs (e.g. an
# inline std:: function instantiated in an AVX-512 translation unit).
# Usage: scripts/test-x86-variants.sh [build dir, default build]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-build}/cli/layerproof"
for cpu in Haswell qemu64; do
  echo "== selftest under qemu-x86_64 -cpu $cpu"
  qemu-x86_64 -cpu "$cpu" "$bin" selftest
done
