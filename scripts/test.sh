#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: install dependencies, build,
# run every host test (all labels except `slow`), check the lock annotations
# with clang (scripts/check-thread-safety.sh), fuzz every libFuzzer target
# for 5 s (scripts/fuzz.sh), run `layerproof selftest`
# under qemu-x86_64 as an AVX2-only and a baseline x86-64 CPU, then
# cross-build the kernels for aarch64 and run their tests under qemu; run the
# peer tests against Hugging Face's implementations (scripts/test-peers.sh);
# then,
# when chromium is installed (scripts/setup.sh --with-browser), render the
# HTML compliance report in it (scripts/test-browser.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure --parallel "$(nproc)" -LE slow
bash scripts/check-thread-safety.sh build
FUZZ_JOBS="$(nproc)" bash scripts/fuzz.sh 5
bash scripts/test-x86-variants.sh
bash scripts/test-aarch64.sh
bash scripts/test-peers.sh
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
  bash scripts/test-browser.sh
else
  echo "test: skipped scripts/test-browser.sh: chromium not installed" \
    "(scripts/setup.sh --with-browser installs it)"
fi
