#!/usr/bin/env bash
# The main job on a fresh Debian machine: install dependencies, build, then
#   1. `layerproof selftest`: every kernel backend this machine has against
#      the golden vectors;
#   2. the embedded default model: `model synth --preset small --seed 1`
#      (reused when present), its digest, and a generation;
#   3. `layerproof forward` of the generated tokens on the ref backend and on
#      the fastest one: their per-layer hashes must be identical.
# (The prover/verifier demo extends this once the services exist.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
lp=./build/cli/layerproof
model=.layerproof/models/small-seed1

"$lp" selftest
echo
if [[ ! -f "$model/model.safetensors" ]]; then
  "$lp" model synth --preset small --seed 1 --out "$model"
fi
echo "model digest: $("$lp" model digest "$model")"
echo
"$lp" generate --model "$model" --prompt "The transparency log says" \
  --max-tokens 24 --temperature 0.7 --seed 42
echo
tokens="1,300,17,940,2,77,513,64,1000,8000,4,4,19"
ref_hashes=$("$lp" forward --model "$model" --tokens "$tokens" --backend ref |
  grep '"layer"')
fast_hashes=$("$lp" forward --model "$model" --tokens "$tokens" | grep '"layer"')
echo "per-layer hashes of $tokens (ref backend):"
echo "$ref_hashes"
if [[ "$ref_hashes" != "$fast_hashes" ]]; then
  echo "MISMATCH: the fastest backend's layer hashes differ from ref" >&2
  echo "$fast_hashes" >&2
  exit 1
fi
echo "the fastest backend on this machine gives the same hashes, bit for bit"
