#!/usr/bin/env bash
# The sanitizer runs of issue 17 (docs/hardening.md, "Sanitizers"):
#   scripts/sanitize.sh asan   builds everything but CUDA and the benchmarks
#                              with clang-14 -fsanitize=address,undefined into
#                              build-asan and runs the whole host suite (every
#                              label but `slow`): ASan, LeakSanitizer, UBSan.
#   scripts/sanitize.sh tsan   builds the concurrent suites with
#                              -fsanitize=thread into build-tsan and runs them:
#                              the sequenced log (with its crash and disk
#                              fault tests), the task pool, the prover and
#                              verifier nodes, audit leases, the opening
#                              client, and the integration suites that run
#                              whole clusters (honest, cheating, restarts,
#                              auditor workers, flood, client, HTTP API,
#                              metrics, power loss), against Abseil,
#                              protobuf, gRPC and RocksDB built with TSan
#                              (scripts/tsan-deps.sh: about 30 minutes the
#                              first time, cached after).
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
    suites=(store_log_test store_log_crash_test store_disk_fault_test
      task_pool_test prover_node_test verifier_audit_leases_test
      verifier_node_submission_test verifier_node_audit_test
      verifier_opening_client_test integration_honest_test
      integration_cheating_test integration_restart_test
      integration_auditor_test integration_flood_test integration_client_test
      integration_http_api_test integration_metrics_test
      integration_power_loss_test)
    targets=("${suites[@]}" layerproof)
    # Every report is printed (no halt), and a process that made one exits
    # 66 at its end, so the suite fails.
    export TSAN_OPTIONS="halt_on_error=0:exitcode=66:second_deadlock_stack=1:suppressions=$root/tests/sanitizers/tsan.supp"
    ;;
  *)
    echo "usage: scripts/sanitize.sh asan|tsan [ctest arguments...]" >&2
    exit 2
    ;;
esac
command -v clang++-14 >/dev/null || {
  echo "sanitize: clang++-14 missing (scripts/setup.sh)" >&2; exit 2; }
# ASan: -O1 with line tables, as scripts/fuzz.sh builds (traces name the
# line, the whole-suite build stays within half an hour on 2 cores), and
# assertions on (no NDEBUG). TSan keeps RelWithDebInfo's -O2 -g.
if [[ "$kind" == asan ]]; then
  opt="-O1 -gline-tables-only"
  flags+=(-DCMAKE_C_FLAGS_RELWITHDEBINFO="$opt"
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$opt")
fi
start=$(date +%s)
if [[ "$kind" == tsan ]]; then
  # Built first, so that a failure to fetch or build them stops the run
  # before the long build of ours.
  tsan_libs=$(bash scripts/tsan-deps.sh)
fi
CC=clang-14 CXX=clang++-14 cmake -S . -B "$dir" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLAYERPROOF_CUDA=OFF \
  -DLAYERPROOF_BUILD_BENCH=OFF "${flags[@]}" >/dev/null
cmake --build "$dir" --parallel "$(nproc)" --target "${targets[@]}"
built=$(date +%s)
if [[ "$kind" == asan ]]; then
  ctest --test-dir "$dir" --output-on-failure --parallel "$(nproc)" \
    "${tests[@]}" "$@"
else
  # Each suite's executable whole (its tests share a process, as they do
  # in production), two at a time; logs in $dir/tsan-logs/<suite>.log.
  # The instrumented Abseil, protobuf, gRPC and RocksDB take the packaged
  # libraries' place (same sonames) in every process, the nodes the
  # integration suites start included.
  export LD_LIBRARY_PATH="$tsan_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  logs="$dir/tsan-logs"
  rm -rf "$logs" && mkdir -p "$logs"
  run_suite() {
    local exe
    exe=$(find "$dir/tests" -name "$1" -type f -perm -u+x -print -quit)
    timeout 1800 "$exe" --gtest_brief=1 >"$logs/$1.log" 2>&1
    echo "$?" >"$logs/$1.rc"
  }
  export -f run_suite
  export dir logs
  printf '%s\n' "${suites[@]}" | xargs -P "$(nproc)" -I{} bash -c 'run_suite {}'
  failed=0
  printf '%-34s %6s %8s\n' suite exit reports
  for s in "${suites[@]}"; do
    rc=$(cat "$logs/$s.rc")
    n=$(grep -c '^WARNING: ThreadSanitizer' "$logs/$s.log" || true)
    printf '%-34s %6s %8s\n' "$s" "$rc" "$n"
    [[ "$rc" == 0 && "$n" == 0 ]] || failed=1
  done
  echo "distinct reports (SUMMARY lines):"
  cat "$logs"/*.log | grep '^SUMMARY: ThreadSanitizer' |
    sed 's/ (BuildId: [0-9a-f]*)//; s/ ([^ ]*+0x[0-9a-f]*)//' | sort | uniq -c |
    sort -rn || true
fi
done_at=$(date +%s)
echo "sanitize $kind: build $((built - start)) s, tests $((done_at - built)) s"
if [[ "$kind" == tsan && "$failed" != 0 ]]; then
  echo "sanitize tsan: FAILED (reports or failing suites above)" >&2
  exit 1
fi
