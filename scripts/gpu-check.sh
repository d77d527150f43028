#!/usr/bin/env bash
# The CUDA backend on a GPU machine: build the kernels alone, check them bit
# for bit against the scalar reference (float and block-quantized weights),
# and time them; then the model runtime on the GPU: the engine tests (their
# every-backend suites include cuda when a device is present), a forward pass
# whose layer hashes must equal the ref backend's (and the same for the
# model quantized to each GGUF block format when the CLI has `model
# quantize`), a generate timing line, and bench/model_bench (bf16, and
# against its Q4_0 GGUF) when Google Benchmark and a CBLAS are there. Needs
# only nvcc, cmake, a C++ compiler and the header-only nlohmann-json: no
# gRPC, RocksDB, Abseil or OpenBLAS. Without nlohmann-json installed, run
# scripts/gpu-deps.sh where it is and bring .gpu-deps/ along.
# GoogleTest is used when its sources are in /usr/src/googletest (a bare
# machine: copy them there first); without them the kernel checks run
# through layerproof_gpu_check, which needs no
# test framework, and the model tests are skipped.
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
TARGETS=(layerproof_gpu_check layerproof)
if [[ -f /usr/src/googletest/CMakeLists.txt ]]; then
  TESTS=ON
  TARGETS+=(cuda_test cross_backend_test quant_test golden_test
            model_engine_test model_reference_test)
else
  echo "gpu-check: /usr/src/googletest absent: GoogleTest suites skipped," \
       "layerproof_gpu_check runs the checks"
fi
GENERATOR=()
command -v ninja >/dev/null && GENERATOR=(-G Ninja)

# nlohmann-json for kernels/model: installed, or copied by scripts/gpu-deps.sh.
DEPS_ARGS=()
if [[ -f .gpu-deps/include/nlohmann/json.hpp ]]; then
  DEPS_ARGS+=(-DLP_NLOHMANN_INCLUDE="${PWD}/.gpu-deps/include")
fi

# bench/model_bench (model-level speed) when it exists and its build needs
# (bench/CMakeLists.txt: Google Benchmark, a CBLAS) are here.
have_header() { echo "#include <$1>" | "${CXX:-c++}" -E -x c++ - >/dev/null 2>&1; }
BENCH=OFF
if [[ -f bench/model_bench.cc ]] && have_header benchmark/benchmark.h &&
   have_header cblas.h; then
  BENCH=ON
else
  echo "gpu-check: bench/model_bench.cc, Google Benchmark or CBLAS absent:" \
       "model_bench skipped"
fi

# configure BENCH: the CMake configure step.
configure() {
  step configure 90 cmake -S . -B "${BUILD_DIR}" "${GENERATOR[@]}" \
    -DCMAKE_BUILD_TYPE="${BUILD_TYPE}" \
    -DLAYERPROOF_KERNELS_ONLY=ON -DLAYERPROOF_BUILD_BENCH="$1" \
    -DLAYERPROOF_BUILD_TESTS="${TESTS}" -DLAYERPROOF_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH}" "${DEPS_ARGS[@]}"
}
if ! configure "${BENCH}"; then
  [[ "${BENCH}" == ON ]] || exit 1
  # The benchmark's packages were incomplete: the first step, so nothing
  # else has failed yet; configure again without bench/.
  echo "gpu-check: configure with bench/ failed; again without model_bench"
  unset 'SUMMARY[-1]'
  FAILED=0
  BENCH=OFF
  configure OFF || exit 1
fi
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
  # The block-quantized GEMM and embedding (docs/determinism.md §3.12).
  step quant_test:cuda 90 "$(bin quant_test)" \
    --gtest_brief=1 --gtest_filter='*cuda*:QuantArgsTest.*'
  step golden_test:cuda 60 "$(bin golden_test)" \
    --gtest_brief=1 --gtest_filter='*cuda*:GoldenFileTest.*'
  # The engine on every backend this machine has (cuda included) and against
  # the float64 reference forward.
  step model_engine_test 120 "$(bin model_engine_test)" --gtest_brief=1
  step model_reference_test 120 "$(bin model_reference_test)" --gtest_brief=1
fi

# The CLI on the GPU: a synthetic model, one forward pass whose layer hashes
# must equal the ref backend's, and a generate timing line.
LP="$(bin layerproof)"
ABS_BUILD_DIR="${BUILD_DIR}"
[[ "${ABS_BUILD_DIR}" == /* ]] || ABS_BUILD_DIR="${PWD}/${BUILD_DIR}"
MODEL_DIR="${ABS_BUILD_DIR}/model-small-seed1"
OUT_DIR="${ABS_BUILD_DIR}/model-check"
rm -rf "${MODEL_DIR}" "${OUT_DIR}"
mkdir -p "${OUT_DIR}"
# 32 token ids below the small preset's vocabulary of 8192.
TOKENS=1,17,256,4095,8191,2,3,1000,77,513,64,900,901,902,5,300,17,940,2,77
TOKENS+=,8000,123,4567,31,32,33,7777,6000,42,4242,100,1
# forward_compare LP MODEL OUT TOKENS: a forward pass on cuda and on ref;
# fails unless every layer hash agrees.
# shellcheck disable=SC2317  # run through bash -c by a step
forward_compare() {
  local lp="$1" model="$2" out="$3" tokens="$4" b n
  for b in cuda ref; do
    "${lp}" forward --model "${model}" --tokens "${tokens}" --backend "${b}" \
      >"${out}/forward-${b}.json" || return 1
    grep '"sha256"' "${out}/forward-${b}.json" >"${out}/hashes-${b}.txt"
  done
  grep '"backend"' "${out}/forward-cuda.json"
  n=$(wc -l <"${out}/hashes-ref.txt")
  if (( n < 2 )); then
    echo "gpu-check: no layer hashes in ${out}/forward-ref.json"
    return 1
  fi
  if ! diff "${out}/hashes-ref.txt" "${out}/hashes-cuda.txt"; then
    echo "gpu-check: layer hashes differ between ref and cuda"
    return 1
  fi
  echo "cuda and ref agree on all ${n} layer hashes"
}
export -f forward_compare
if step model_synth:small 60 "${LP}" model synth --preset small --seed 1 \
     --out "${MODEL_DIR}"; then
  # shellcheck disable=SC2016  # $@ expands in the inner shell
  step forward:cuda=ref 120 bash -c 'forward_compare "$@"' _ "${LP}" \
    "${MODEL_DIR}" "${OUT_DIR}" "${TOKENS}"
  step generate:cuda 60 "${LP}" generate --model "${MODEL_DIR}" \
    --prompt-ids 1,2,3,4,5 --max-tokens 64 --backend cuda
  # The same model in each GGUF block format: the quantized GEMMs (and
  # embedding, when the table is quantized) through the model runtime on
  # the GPU, hash for hash against ref.
  if "${LP}" model --help 2>&1 | grep -q quantize; then
    for QTYPE in q8_0 q4_0 q4_k q6_k; do
      QMODEL="${ABS_BUILD_DIR}/model-small-seed1-${QTYPE}.gguf"
      mkdir -p "${OUT_DIR}/${QTYPE}"
      if step "model_quantize:${QTYPE}" 60 "${LP}" model quantize \
           --type "${QTYPE}" --out "${QMODEL}" "${MODEL_DIR}"; then
        # shellcheck disable=SC2016  # $@ expands in the inner shell
        step "forward:cuda=ref:${QTYPE}" 120 bash -c 'forward_compare "$@"' \
          _ "${LP}" "${QMODEL}" "${OUT_DIR}/${QTYPE}" "${TOKENS}"
      fi
    done
  else
    echo "gpu-check: this CLI has no 'model quantize': quantized forward skipped"
  fi
fi

if [[ "${BENCH}" == ON ]] &&
   step build:model_bench 120 cmake --build "${BUILD_DIR}" \
     --parallel "${JOBS}" --target model_bench; then
  step model_bench:cuda 120 env LAYERPROOF_BACKEND=cuda "$(bin model_bench)" \
    --quick --threads "${JOBS}" --model-dir "${ABS_BUILD_DIR}/model-bench"
  # bf16 against its Q4_0 GGUF, same run (issue 15's whole-model figure).
  step model_bench:cuda:q4_0 120 env LAYERPROOF_BACKEND=cuda \
    "$(bin model_bench)" --quick --threads "${JOBS}" --quant q4_0 \
    --model-dir "${ABS_BUILD_DIR}/model-bench"
fi
exit ${FAILED}
