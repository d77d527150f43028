#!/usr/bin/env bash
# The peer tests: LayerProof against independent implementations from npm
# (installed by scripts/setup.sh into ${LAYERPROOF_PEER_MODULES}).
#   tokenizers: every tokenizer.json of nine model families against Hugging
#   Face tokenizers (tests/peer/tokenizers_peer.mjs): the corpus of
#   tests/peer/corpus.mjs and every code point in "X's X".
#   chat templates: eight families' templates against Jinja2 as transformers
#   runs it (Debian's python3-jinja2) and @huggingface/jinja
#   (tests/peer/chat_peer.mjs), on tests/peer/conversations.mjs.
#   GGUF: the files our writer makes (every tensor type, llama / qwen2 /
#   qwen3, every metadata value type) read by @huggingface/gguf and by our
#   reader (tests/peer/gguf_peer.mjs): names, types, dimensions, absolute
#   data offsets and every key's value must agree.
#   llama.cpp: llama.cpp itself (node-llama-cpp's prebuilt CPU build)
#   loads the GGUF files our writer makes, tokenizer keys included: its
#   tokenization equals ours, and its logits equal our engine's on the
#   Hugging Face model to fp32 rounding (F32) or to the quantizers'
#   activation rounding (Q8_0, Q4_0, Q4_K, Q6_K); an unpermuted control
#   must differ (tests/peer/llama_cpp_peer.mjs).
#   OpenAI API: the official `openai` npm client calls the prover's HTTP
#   API (completions, chat, streams, stop sequences, a nonce, 401/404/400/
#   413/429), and every response it gets passes `layerproof verify-receipt
#   --openai-request` (tests/peer/openai_peer.mjs).
# Usage: scripts/test-peers.sh [BUILD_DIR] (default build); writes
# BUILD_DIR/peer-tokenizers.json, BUILD_DIR/peer-llama-cpp.json, the
# GGUF files in BUILD_DIR/peer-gguf/ and BUILD_DIR/peer-llama-cpp/ and the
# saved API responses in BUILD_DIR/peer-openai/.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
peers="${LAYERPROOF_PEER_MODULES:-${HOME}/.cache/layerproof/peers}"
if [[ ! -f "${peers}/.installed" || ! -f "${peers}/llama_cpp/.installed" ]]; then
  echo "test-peers: no peer packages in ${peers}; run scripts/setup.sh" >&2
  exit 1
fi
node tests/peer/tokenizers_peer.mjs --modules "${peers}" \
  --peer "${build}/tests/peer/peer_text" \
  --report "${build}/peer-tokenizers.json"
TZ=UTC node tests/peer/chat_peer.mjs --modules "${peers}" \
  --peer "${build}/tests/peer/peer_text"
rm -rf "${build}/peer-gguf"
node tests/peer/gguf_peer.mjs --modules "${peers}" \
  --peer "${build}/tests/peer/peer_gguf" --out "${build}/peer-gguf"
rm -rf "${build}/peer-llama-cpp"
node tests/peer/llama_cpp_peer.mjs --modules "${peers}/llama_cpp" \
  --peer "${build}/tests/peer/peer_llama_cpp" --layerproof "${build}/cli/layerproof" \
  --out "${build}/peer-llama-cpp" \
  --report "${build}/peer-llama-cpp.json"
rm -rf "${build}/peer-openai"
node tests/peer/openai_peer.mjs --modules "${peers}" \
  --server "${build}/tests/peer/peer_openai_server" \
  --layerproof "${build}/cli/layerproof" --out "${build}/peer-openai"
