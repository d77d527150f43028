#!/usr/bin/env bash
# Cross-builds kernels/ and its tests for aarch64 (the NEON backend) and runs
# them under qemu-user through CTest, from any working directory:
#
#   scripts/setup.sh            # once: installs g++-aarch64-linux-gnu, qemu-user
#   scripts/test-aarch64.sh [extra ctest args...]
#
# Builds into build-aarch64/ at the repo root with
# cmake/aarch64-linux-gnu.cmake, LAYERPROOF_KERNELS_ONLY=ON and no benchmarks.
# Tests labelled `qemu_skip` (too slow under emulation, still run natively)
# are excluded. The NEON block-quantized GEMM (kernels/cpu/neon_quant.cc)
# has an sdot and an Armv8.0 version, chosen once per process; the full run
# takes the sdot one (qemu's default CPU has dotprod), then its tests
# (quant_test, golden_test, neon_test's Quant*) run twice more on the
# baseline: as a Cortex-A57 (QEMU_CPU=cortex-a57, no dotprod) and with
# LAYERPROOF_NEON_DOTPROD=0. NeonQuantPathTest fails a run that did not get
# the path it is meant to test. Exits non-zero when the build or any test
# fails, or when no test was found. Environment: LP_JOBS (default: nproc)
# sets build and test parallelism. Extra arguments go to the full run only.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build-aarch64"
jobs="${LP_JOBS:-$(nproc)}"

for tool in aarch64-linux-gnu-g++ qemu-aarch64 cmake; do
  if ! command -v "$tool" >/dev/null; then
    echo "test-aarch64: $tool not found; run scripts/setup.sh" >&2
    exit 2
  fi
done

generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
# The generator of an existing build tree cannot change; keep what is there.
if [[ -f "$build/CMakeCache.txt" ]]; then generator=(); fi

start=$SECONDS
cmake -S "$root" -B "$build" "${generator[@]}" \
  -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLAYERPROOF_KERNELS_ONLY=ON \
  -DLAYERPROOF_BUILD_TESTS=ON \
  -DLAYERPROOF_BUILD_BENCH=OFF \
  -DLAYERPROOF_CUDA=OFF
cmake --build "$build" --parallel "$jobs"

# Every test binary runs as qemu-aarch64 -L /usr/aarch64-linux-gnu <binary>
# (CMAKE_CROSSCOMPILING_EMULATOR); the test list is discovered under qemu too.
run_ctest() {
  ctest --test-dir "$build" --output-on-failure --no-tests=error \
    --parallel "$jobs" --label-exclude '^qemu_skip$' "$@"
}
LP_EXPECT_NEON_QUANT_PATH=sdot run_ctest "$@"
echo "test-aarch64: all tests passed (NEON quant path: sdot)"

quant_tests='QuantBackendTest\..*/neon|GoldenTest\..*/neon|NeonTest\.Quant|NeonQuantPathTest'
LP_EXPECT_NEON_QUANT_PATH=baseline QEMU_CPU=cortex-a57 \
  run_ctest -R "$quant_tests"
echo "test-aarch64: NEON quant tests passed on a Cortex-A57 (no dotprod)"
LP_EXPECT_NEON_QUANT_PATH=baseline LAYERPROOF_NEON_DOTPROD=0 \
  run_ctest -R "$quant_tests"
echo "test-aarch64: NEON quant tests passed with LAYERPROOF_NEON_DOTPROD=0"
echo "test-aarch64: all tests passed in $((SECONDS - start)) s"
