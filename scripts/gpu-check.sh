#!/usr/bin/env bash
# The CUDA backend on a GPU machine: build the kernels alone, check them bit
# for bit against the scalar reference, and time them. Needs only nvcc, cmake
# and a C++ compiler: no gRPC, RocksDB, Abseil or OpenBLAS. GoogleTest is
# used when its sources are in /usr/src/googletest; without them the checks
# run through layerproof_gpu_check, which needs no test framework.
#
# Usage: scripts/gpu-check.sh [--quick]
#   BUILD_DIR (default build-gpu), BUILD_TYPE (Release), CUDA_ARCH (the
#   GPU's compute capability, e.g. 90), JOBS (nproc) and BUDGET_S (470, the
#   limit for all steps together) override the defaults.
# Exit status: 0 when every check passes; the summary table ends the output.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

QUICK=""
[[ "${1:-}" == "--quick" ]] && QUICK="--quick"
BUILD_DIR="${BUILD_DIR:-build-gpu}"
BUILD_TYPE="${BUILD_TYPE:-Release}"
JOBS="${JOBS:-$(nproc)}"
START=$(date +%s)
# Every step's time limit is cut to what is left of this overall budget.
BUDGET_S="${BUDGET_S:-470}"
declare -a SUMMARY=()
FAILED=0

# step NAME TIMEOUT_S COMMAND...: runs one step, records its result and time.
step() {
  local name="$1" limit="$2"
  shift 2
  local t0 rc left
  t0=$(date +%s)
  left=$(( BUDGET_S - (t0 - START) ))
  (( left < limit )) && limit=${left}
  if (( limit < 5 )); then
    SUMMARY+=("$(printf '%-28s %-14s %5ss' "${name}" "NO-TIME" 0)")
    FAILED=1
    return 1
  fi
  echo "==== ${name}: $*"
  timeout --kill-after=10 "${limit}" "$@"
  rc=$?
  local result=PASS
  if [[ ${rc} -eq 124 || ${rc} -eq 137 ]]; then
    result="TIMEOUT(${limit}s)"
  elif [[ ${rc} -ne 0 ]]; then
    result="FAIL(rc=${rc})"
  fi
  [[ "${result}" != PASS ]] && FAILED=1
  SUMMARY+=("$(printf '%-28s %-14s %5ss' "${name}" "${result}" $(( $(date +%s) - t0 )))")
  return ${rc}
}

# shellcheck disable=SC2317  # called by the EXIT trap
summary() {
  echo
  echo "==== gpu-check summary ($(( $(date +%s) - START ))s total)"
  printf '%-28s %-14s %6s\n' step result time
  printf '%s\n' "${SUMMARY[@]}"
  [[ ${FAILED} -eq 0 ]] && echo "gpu-check: PASS" || echo "gpu-check: FAIL"
}
trap summary EXIT

command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:${PATH}"
command -v nvcc >/dev/null || { echo "gpu-check: nvcc not found"; FAILED=1; exit 1; }
command -v cmake >/dev/null || { echo "gpu-check: cmake not found"; FAILED=1; exit 1; }
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version \
    --format=csv,noheader
fi

if [[ -z "${CUDA_ARCH:-}" ]]; then
  CUDA_ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
              head -n1 | tr -d ' .')
  [[ "${CUDA_ARCH}" =~ ^[0-9]+$ ]] || CUDA_ARCH=90
fi

TESTS=OFF
TARGETS=(layerproof_gpu_check)
if [[ -f /usr/src/googletest/CMakeLists.txt ]]; then
  TESTS=ON
  TARGETS+=(cuda_test cross_backend_test golden_test)
else
  echo "gpu-check: /usr/src/googletest absent: GoogleTest suites skipped," \
       "layerproof_gpu_check runs the checks"
fi
GENERATOR=()
command -v ninja >/dev/null && GENERATOR=(-G Ninja)

step configure 90 cmake -S . -B "${BUILD_DIR}" "${GENERATOR[@]}" \
  -DCMAKE_BUILD_TYPE="${BUILD_TYPE}" \
  -DLAYERPROOF_KERNELS_ONLY=ON -DLAYERPROOF_BUILD_BENCH=OFF \
  -DLAYERPROOF_BUILD_TESTS="${TESTS}" -DLAYERPROOF_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH}" || exit 1
step build 270 cmake --build "${BUILD_DIR}" --parallel "${JOBS}" \
  --target "${TARGETS[@]}" || exit 1

# bin NAME: the path of executable NAME in the build tree.
bin() { find "${BUILD_DIR}" -name "$1" -type f -perm -u+x -print -quit; }

# Golden vectors, random-shape cross-checks and the timing table.
step layerproof_gpu_check 120 "$(bin layerproof_gpu_check)" ${QUICK}

if [[ "${TESTS}" == ON ]]; then
  step cuda_test 90 "$(bin cuda_test)" --gtest_brief=1
  step cross_backend_test:cuda 90 "$(bin cross_backend_test)" \
    --gtest_brief=1 --gtest_filter='*cuda*'
  step golden_test:cuda 60 "$(bin golden_test)" \
    --gtest_brief=1 --gtest_filter='*cuda*:GoldenFileTest.*'
fi
exit ${FAILED}
