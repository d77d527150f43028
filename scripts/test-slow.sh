#!/usr/bin/env bash
# The tests labelled `slow`, which the default suite (scripts/test.sh,
# .ci/run) leaves out: the exhaustive sweeps over all 2^32 float inputs
# (ExpF's error against long double, and every SIMD port of ExpF against
# the scalar bits). Minutes on 2 cores; BENCHMARKS.md "Exhaustive float
# sweeps" records the last run. Builds first (scripts/build.sh).
# Usage: scripts/test-slow.sh [extra ctest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
start=$(date +%s)
ctest --test-dir build --output-on-failure --no-tests=error -L '^slow$' \
  --verbose "$@" | grep -E '\[ (measured|checked|skipped) *\]|Test #|tests passed|tests failed' 
echo "test-slow: $(( $(date +%s) - start )) s"
