#!/usr/bin/env bash
# The main job on a fresh Debian machine: install dependencies, build, then
#   1. `layerproof selftest`: every kernel backend this machine has against
#      the golden vectors (exit non-zero on any difference);
#   2. `layerproof demo`: a verifier and two provers in one process on
#      loopback over mutual TLS, one prover tampering with a layer; a client
#      load, random audits, fault localisation, a signed report and an
#      evidence bundle verified offline (README "Demo"). The small model is
#      synthesised into .layerproof/models/small-seed1 when absent, and the
#      output goes to layerproof-demo/.
# Extra arguments go to `layerproof demo` (e.g. --keep-running).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
lp=./build/cli/layerproof

"$lp" selftest
echo
# --verifier-backend ref: the verifier re-executes on the scalar reference
# kernels while the provers serve on the fastest backend, so every PASS is
# a cross-backend bit-identity check (DESIGN §2).
"$lp" demo --model .layerproof/models/small-seed1 --out layerproof-demo \
  --verifier-backend ref "$@"
