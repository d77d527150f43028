#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang-14, ASan + UBSan, into
# build-fuzz; only the targets and the libraries they link) and fuzzes each
# one over a copy of its corpus, tests/fuzz/corpus/<target>/ (nothing new is
# written into the repository; the slow regression inputs of
# tests/fuzz/regressions/ are replayed by CTest, not fuzzed). Fails on any
# crash, leak, timeout or out-of-memory; the input that caused it is kept in
# build-fuzz/fuzz-artifacts/<target>/ (docs/hardening.md, "Fuzzing", says
# how it becomes a regression test). Prints, per target, the executions,
# executions per second, coverage (edges) and features, then a Markdown
# table and the total, as BENCHMARKS.md records them.
#
# Usage: scripts/fuzz.sh SECONDS [-runs=N] [TARGET...]
#   SECONDS   how long each target runs (0: no time limit, with -runs)
#   -runs=N   stop each target after N executions (the campaign's minimum)
#   TARGET    e.g. safetensors log_diff; default: every target
# Environment: FUZZ_JOBS=2 fuzzes two targets at a time (default 1);
# FUZZ_BUILD_DIR overrides build-fuzz.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

if [[ $# -lt 1 || ! "$1" =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/fuzz.sh SECONDS [-runs=N] [TARGET...]" >&2
  exit 2
fi
seconds="$1"
shift
runs=""
targets=()
for arg in "$@"; do
  case "$arg" in
    -runs=*) runs="${arg#-runs=}" ;;
    -*) echo "fuzz: unknown option $arg" >&2; exit 2 ;;
    *) targets+=("$arg") ;;
  esac
done
if [[ "$seconds" == 0 && -z "$runs" ]]; then
  echo "fuzz: SECONDS 0 needs -runs=N" >&2
  exit 2
fi
if ((${#targets[@]} == 0)); then
  for d in tests/fuzz/corpus/*/; do targets+=("$(basename "$d")"); done
fi
for t in "${targets[@]}"; do
  if [[ ! -d "tests/fuzz/corpus/$t" ]]; then
    echo "fuzz: no target $t (no tests/fuzz/corpus/$t)" >&2
    exit 2
  fi
done
command -v clang++-14 >/dev/null || {
  echo "fuzz: clang++-14 missing (scripts/setup.sh)" >&2; exit 2; }

dir="${FUZZ_BUILD_DIR:-build-fuzz}"
jobs="${FUZZ_JOBS:-1}"
# -O1 with line tables: stack traces name the line, and the build stays
# small; assertions stay on (no NDEBUG), so an input that reaches an
# assert is a finding.
flags="-O1 -gline-tables-only"
build_start=$(date +%s)
CC=clang-14 CXX=clang++-14 cmake -S . -B "$dir" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" \
  -DLAYERPROOF_FUZZ=ON -DLAYERPROOF_SANITIZE=address,undefined \
  -DLAYERPROOF_CUDA=OFF -DLAYERPROOF_BUILD_BENCH=OFF \
  -DLAYERPROOF_BUILD_TESTS=OFF >/dev/null
cmake --build "$dir" --parallel "$(nproc)" --target fuzz_targets
build_seconds=$(($(date +%s) - build_start))
echo "fuzz: built the fuzz targets in ${build_seconds} s"

export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:strict_string_checks=1:check_initialization_order=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
work="$(mktemp -d "${TMPDIR:-/tmp}/lp_fuzz.XXXXXX")"
trap 'rm -rf "$work"' EXIT
artifacts="$root/$dir/fuzz-artifacts"
# The peer packages' tokenizer.json files (trimmed) and chat templates seed
# the tokenizer and chat_template targets; they are not ours to commit
# (tests/fuzz/peer_seeds.py). Without the peer cache the committed seeds run
# alone.
peers="${LAYERPROOF_PEER_MODULES:-${HOME}/.cache/layerproof/peers}"
python3 tests/fuzz/peer_seeds.py "$peers" "$work/peer-seeds/tokenizer" \
  "$work/peer-seeds/chat_template"

# Runs one target; its log is $work/<target>.log, its status
# $work/<target>.rc.
fuzz_one() {
  local t="$1"
  local corpus="$work/$t.corpus"
  mkdir -p "$corpus" "$artifacts/$t"
  cp -R "tests/fuzz/corpus/$t/." "$corpus/"
  if [[ -d "$work/peer-seeds/$t" ]]; then
    cp -R "$work/peer-seeds/$t/." "$corpus/"
  fi
  local args=(-max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096
    -print_final_stats=1 -artifact_prefix="$artifacts/$t/")
  if [[ -n "$runs" ]]; then args+=(-runs="$runs"); fi
  local asan="$ASAN_OPTIONS"
  if [[ "$t" == log_diff ]]; then
    # Without LeakSanitizer: its logs start over every kMaxLeaves leaves,
    # and each start joins the old logs' threads and starts new ones.
    # clang-14's LSan skips a live thread whose kernel thread id an earlier,
    # finished thread of the process had (ASan keeps finished threads in
    # its registry), so once the id counter wraps (pid_max) the new
    # threads' OpenSSL error state and thread_local records are reported as
    # leaks. docs/hardening.md, "Fuzzing", has the reproduction. The ASan
    # suite's store tests check the log's code for leaks.
    args+=(-detect_leaks=0)
    asan="${asan/detect_leaks=1/detect_leaks=0}"
  fi
  local rc=0
  ASAN_OPTIONS="$asan" "$dir/tests/fuzz/fuzz_$t" "${args[@]}" "$corpus" \
    >"$work/$t.log" 2>&1 || rc=$?
  echo "$rc" >"$work/$t.rc"
}

running=0
for t in "${targets[@]}"; do
  fuzz_one "$t" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

failed=()
total_runs=0
rows=()
printf '%-18s %12s %9s %8s %9s %7s %6s\n' target executions exec/s cov ft corpus s
for t in "${targets[@]}"; do
  log="$work/$t.log"
  rc=$(cat "$work/$t.rc")
  n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o ' cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || true)
  ft=$(grep -o ' ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || true)
  corp=$(grep -o ' corp: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || true)
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  n=${n:-0}
  total_runs=$((total_runs + n))
  printf '%-18s %12s %9s %8s %9s %7s %6s\n' "$t" "$n" "${eps:--}" \
    "${cov:--}" "${ft:--}" "${corp:--}" "${secs:--}"
  rows+=("| $t | $n | ${eps:--} | ${cov:--} | ${ft:--} | ${corp:--} |")
  if [[ "$rc" != 0 ]]; then
    failed+=("$t")
    echo "---- fuzz_$t failed (exit $rc); the end of its log:" >&2
    tail -n 40 "$log" >&2
    echo "---- inputs kept in $artifacts/$t/" >&2
  fi
done
echo "total executions: $total_runs"
echo
echo "| Target | Executions | Exec/s | Coverage (edges) | Features | Corpus |"
echo "|---|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
echo "| **total** | **$total_runs** | | | | |"
if ((${#failed[@]} > 0)); then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, no crash, leak or timeout"
