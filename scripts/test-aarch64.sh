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
#
# Debian 12's qemu-user (7.2) has races in its emulation of guest threads:
# about once in several thousand test processes a multithreaded test dies
# with "qemu: uncaught target signal 11" at a point that is clean under
# valgrind (memcheck and helgrind) on the host and passes hundreds of reruns
# (seen on MalformedModelTest.ShardedModelLoads, whose digest starts threads).
# So when every failure of a run is a segfault, those tests run once more,
# and say so; a failed assertion, an abort or a crash that repeats still
# fails the stage.
run_ctest_once() {
  ctest --test-dir "$build" --output-on-failure --no-tests=error \
    --parallel "$jobs" --label-exclude '^(qemu_skip|slow)$' "$@"
}
run_ctest() {
  local log rc=0
  log=$(mktemp)
  run_ctest_once "$@" 2>&1 | tee "$log" || rc=$?
  if ((rc == 0)); then
    rm -f "$log"
    return 0
  fi
  local failed="$build/Testing/Temporary/LastTestsFailed.log"
  local n_failed n_segv
  n_failed=$(grep -c . "$failed" 2>/dev/null || true)
  n_segv=$(grep -c -E '^[[:space:]]*[0-9]+ - .* \(SEGFAULT\)$' "$log" || true)
  rm -f "$log"
  if ((n_failed == 0 || n_segv != n_failed)); then return "$rc"; fi
  echo "test-aarch64: $n_failed test(s) died of SIGSEGV under qemu-user;" \
    "rerunning them once (qemu 7.2 thread-emulation races, see above)"
  ctest --test-dir "$build" --output-on-failure --rerun-failed
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
