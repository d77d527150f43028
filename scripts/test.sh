#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: install dependencies, build,
# run every host test (all labels except `slow`), then cross-build the kernels
# for aarch64 and run their tests under qemu-aarch64.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure --parallel "$(nproc)" -LE slow
bash scripts/test-aarch64.sh
