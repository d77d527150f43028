#!/usr/bin/env bash
# The main job on a fresh Debian machine: install dependencies, build, and run
# `layerproof selftest`, which checks every kernel backend this machine has
# against the golden vectors. (The end-to-end demo replaces it once the
# prover and verifier exist.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
./build/cli/layerproof selftest
