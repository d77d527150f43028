#!/usr/bin/env bash
# The soak (issue 17): a loopback cluster of real `layerproof serve`
# processes (one verifier, two provers, two auditor workers, over mTLS)
# under steady HTTPS and gRPC client load, while a chaos loop restarts
# provers, auditors and the verifier with SIGTERM or SIGKILL. Fails unless
# every receipt a client got verifies, every audit is PASS and every drawn
# audit concludes, and each node's RSS, open files and threads stay flat
# (scripts/soak/soak.py and analysis.py state the rules). Not part of
# scripts/test.sh or .ci/run: it runs for MINUTES (default 30).
# Writes samples.csv, verifier.csv, events.csv, summary.json and soak.svg to
# --out (default soak-out/, git-ignored); BENCHMARKS.md "Reliability: soak"
# records a run.
# Usage: scripts/soak.sh [MINUTES] [--out DIR] [soak.py options...]
#   (scripts/soak/soak.py --help lists them). Uses build/cli/layerproof,
#   building it first (scripts/build.sh) when it is missing; LAYERPROOF_BIN
#   names another binary.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${LAYERPROOF_BIN:-build/cli/layerproof}
if [[ ! -x $bin ]]; then
  [[ -z ${LAYERPROOF_BIN:-} ]] || { echo "soak: $bin not found" >&2; exit 2; }
  bash scripts/build.sh
fi
# No __pycache__ in the tree.
export PYTHONDONTWRITEBYTECODE=1
exec python3 scripts/soak/soak.py --layerproof "$bin" "$@"
