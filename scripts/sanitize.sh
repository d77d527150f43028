#!/usr/bin/env bash
# The sanitizer runs of issue 17 (docs/hardening.md, "Sanitizers"):
#   scripts/sanitize.sh asan   builds everything but CUDA and the benchmarks
#                              with clang-14 -fsanitize=address,undefined into
#                              build-asan and runs the whole host suite (every
#                              label but `slow`): ASan, LeakSanitizer, UBSan.
#   scripts/sanitize.sh tsan   builds the concurrent suites with
#                              -fsanitize=thread into build-tsan and runs them:
#                              the sequenced log, the task pool, the prover
#                              and verifier nodes, audit leases, and the
#                              integration suites that run whole clusters
#                              (honest, restarts, auditor workers, flood).
# Any report fails the test that made it (halt_on_error, no recovery), so the
# script exits non-zero on the first finding of each test. Suppressions
# (tests/sanitizers/*.supp) are for third-party code only, each with its
# reason. Not in .ci/run: the build alone takes longer than CI has left
# (BENCHMARKS.md, "Sanitizers", has the times and results).
# Usage: scripts/sanitize.sh asan|tsan [extra ctest arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:-}"
shift || true
root="$PWD"
case "$kind" in
  asan)
    dir=build-asan
    flags=(-DLAYERPROOF_SANITIZE=address,undefined)
    targets=(all)
    tests=(-LE slow)
    export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    export LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0"
    ;;
  tsan)
    dir=build-tsan
    flags=(-DLAYERPROOF_SANITIZE=thread)
    # The suites that run threads against each other.
    suites=(store_log_test task_pool_test prover_node_test
      verifier_audit_leases_test verifier_node_submission_test
      verifier_node_audit_test integration_honest_test
      integration_restart_test integration_auditor_test integration_flood_test)
    targets=("${suites[@]}" layerproof layerproof_tsan_absl_sync)
    # Only these executables are built: CTest stands each other one in as
    # <target>_NOT_BUILT, which -E leaves out.
    tests=(-LE slow -E _NOT_BUILT)
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/sanitizers/tsan.supp"
    ;;
  *)
    echo "usage: scripts/sanitize.sh asan|tsan [ctest arguments...]" >&2
    exit 2
    ;;
esac
command -v clang++-14 >/dev/null || {
  echo "sanitize: clang++-14 missing (scripts/setup.sh)" >&2; exit 2; }
start=$(date +%s)
CC=clang-14 CXX=clang++-14 cmake -S . -B "$dir" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLAYERPROOF_CUDA=OFF \
  -DLAYERPROOF_BUILD_BENCH=OFF "${flags[@]}" >/dev/null
cmake --build "$dir" --parallel "$(nproc)" --target "${targets[@]}"
built=$(date +%s)
if [[ "$kind" == tsan ]]; then
  # Debian's Abseil is not instrumented: tests/sanitizers/tsan_absl_sync.cc.
  export LD_PRELOAD="$root/$dir/tests/sanitizers/liblayerproof_tsan_absl_sync.so"
fi
ctest --test-dir "$dir" --output-on-failure --parallel "$(nproc)" \
  "${tests[@]}" "$@"
done_at=$(date +%s)
echo "sanitize $kind: build $((built - start)) s, tests $((done_at - built)) s"
