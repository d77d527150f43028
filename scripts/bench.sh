#!/usr/bin/env bash
# Builds the benchmark programs in Release (build-bench/) and runs each one.
# Arguments go to every Google Benchmark binary, e.g.
#   scripts/bench.sh --benchmark_repetitions=3
# Extra CMake options come from LAYERPROOF_BENCH_CMAKE_ARGS, e.g.
#   LAYERPROOF_BENCH_CMAKE_ARGS=-DLAYERPROOF_CUDA=OFF scripts/bench.sh
#
# model_bench (decode and prefill of a whole model, not a Google Benchmark
# program) runs last with its own arguments from LAYERPROOF_MODEL_BENCH_ARGS,
# e.g. LAYERPROOF_MODEL_BENCH_ARGS="--preset small --quick". Its first run
# synthesizes the medium model (~1.7 GB) into build-bench/models/, or into
# $LP_BENCH_MODEL_DIR when set, and later runs reuse it.
#
# log_bench (the transparency log's durable appends and proofs, not a Google
# Benchmark program) runs after it with LAYERPROOF_LOG_BENCH_ARGS, e.g.
# LAYERPROOF_LOG_BENCH_ARGS=--quick. Its first run builds a 1,000,000-leaf
# log (~1.1 GB) into build-bench/bench-data/ and later runs reuse it; its
# temporary databases go to build-bench/bench-tmp/, on the build's
# filesystem, since /tmp may be tmpfs.
#
# service_bench (the attestation service: commitment overhead, audit cost,
# end-to-end Generate; not a Google Benchmark program) runs after log_bench with
# LAYERPROOF_SERVICE_BENCH_ARGS, e.g. LAYERPROOF_SERVICE_BENCH_ARGS=--quick.
# It reuses (or synthesizes) the models in build-bench/models/ and keeps its
# databases under build-bench/bench-tmp/.
#
# report_bench (compliance report generation against a bare scan of the
# same log, and offline evidence-bundle verification against the
# verifier's own audit and a full forward; not a Google Benchmark program)
# runs after it with LAYERPROOF_REPORT_BENCH_ARGS, e.g.
# LAYERPROOF_REPORT_BENCH_ARGS=--quick. It reuses (or synthesizes) the
# small model in build-bench/models/ and builds its logs (1,000, 10,000 and
# 100,000 commitments by default, --sizes) under build-bench/bench-tmp/.
#
# client_bench (the client's receipt check, check::CheckReceipt, against the
# Generate latency it checks) runs last with LAYERPROOF_CLIENT_BENCH_ARGS.
#
# OpenBLAS (the peer in gemm_bench and model_bench) honours OPENBLAS_CORETYPE
# and OPENBLAS_L2_SIZE; some machines set them to pin old, slow kernels, so
# the benchmarks run with both unset and OpenBLAS picks its own kernels.
# Numbers are only meaningful on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck disable=SC2086  # word splitting of the extra options is wanted
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DLAYERPROOF_BUILD_TESTS=OFF ${LAYERPROOF_BENCH_CMAKE_ARGS:-} >/dev/null
cmake --build build-bench --target gemm_bench ops_bench model_bench log_bench \
  service_bench report_bench client_bench

run() { env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$@"; }

run build-bench/bench/gemm_bench "$@"
run build-bench/bench/ops_bench "$@"
# shellcheck disable=SC2086  # word splitting of the options is wanted
run build-bench/bench/model_bench ${LAYERPROOF_MODEL_BENCH_ARGS:-}
# shellcheck disable=SC2086  # word splitting of the options is wanted
build-bench/bench/log_bench ${LAYERPROOF_LOG_BENCH_ARGS:-}
# shellcheck disable=SC2086  # word splitting of the options is wanted
run build-bench/bench/service_bench ${LAYERPROOF_SERVICE_BENCH_ARGS:-}
# shellcheck disable=SC2086  # word splitting of the options is wanted
run build-bench/bench/report_bench ${LAYERPROOF_REPORT_BENCH_ARGS:-}
# shellcheck disable=SC2086  # word splitting of the options is wanted
run build-bench/bench/client_bench ${LAYERPROOF_CLIENT_BENCH_ARGS:-}
