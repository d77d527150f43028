#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: install dependencies, build,
# run every host test (all labels except `slow`), run `layerproof selftest`
# under qemu-x86_64 as an AVX2-only and a baseline x86-64 CPU, then
# cross-build the kernels for aarch64 and run their tests under qemu.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure --parallel "$(nproc)" -LE slow
bash scripts/test-x86-variants.sh
bash scripts/test-aarch64.sh
