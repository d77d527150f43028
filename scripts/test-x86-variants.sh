#!/usr/bin/env bash
# Runs `layerproof selftest` and the model golden test (the tiny synthetic
# model's digest, layer hashes and greedy tokens) under qemu-x86_64 as CPUs
# this machine is not:
# an AVX2-only Haswell (backends ref and avx2) and the baseline x86-64
# (ref only). It checks that the golden hashes hold on those ISA mixes and
# that no AVX-512 instruction leaks into code a smaller CPU runs (e.g. an
# inline std:: function instantiated in an AVX-512 translation unit).
# Usage: scripts/test-x86-variants.sh [build dir, default build]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
for cpu in Haswell qemu64; do
  echo "== selftest under qemu-x86_64 -cpu $cpu"
  qemu-x86_64 -cpu "$cpu" "$build/cli/layerproof" selftest
  echo "== model golden under qemu-x86_64 -cpu $cpu"
  qemu-x86_64 -cpu "$cpu" "$build/tests/model/model_engine_test" \
    --gtest_filter='EngineGolden.*:*EveryBackendAndThreadCount*' --gtest_brief=1
done
