// peer_llama_cpp: LayerProof's side of the llama.cpp peer test
// (tests/peer/llama_cpp_peer.mjs, against llama.cpp through node-llama-cpp).
//   peer_llama_cpp write OUT_DIR
//     synthesizes a small Llama (text::SynthesizeTextModel: hidden 256, FFN
//     512, so every matrix holds whole 256-element super-blocks, 4 heads of
//     64, 2 KV heads, 2 layers, its byte-level BPE tokenizer) and writes it
//     with WriteGgufModel as F32, Q8_0, Q4_0, Q4_K and Q6_K files carrying
//     its tokenizer.ggml.* keys (text::GgufTokenizerKeysFor), into OUT_DIR
//     without a tokenizer.json. Also a control: control-unpermuted-f32.gguf,
//     the F32 file with attn_q / attn_k rows left in Hugging Face order (the
//     permutation undone before writing), which llama.cpp must NOT match.
//     Prints one JSON line per file: {"file", "type", "control"}.
//   peer_llama_cpp tokenize FILE TEXT
//     our ids for TEXT (as a prompt: BOS added as the file says) from the
//     file's own tokenizer keys: {"ids": [...]}.
// (Our logits come from `layerproof forward --logits-out`.)
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/model/gguf_model.h"
#include "kernels/model/model.h"
#include "kernels/model/synth.h"
#include "text/gguf_tokenizer.h"
#include "text/gguf_tokenizer_export.h"
#include "text/synthetic_tokenizer.h"

namespace {

using Json = nlohmann::json;
using namespace layerproof::kernels;
using namespace layerproof::kernels::model;

int Fail(const Status& s) {
  std::fprintf(stderr, "peer_llama_cpp: %s\n", s.ToString().c_str());
  return 1;
}

// The model's q_proj / k_proj with the rows pre-permuted by the inverse of
// llama.cpp's permute, so that WriteGgufModel's permute restores Hugging
// Face order in the file.
struct Unpermuted {
  std::map<std::string, TensorView> tensors;
  std::vector<std::vector<unsigned char>> owned;
};

Unpermuted UnpermuteQk(const Model& m) {
  Unpermuted u;
  u.tensors = m.tensors();
  const ModelConfig& c = m.config();
  for (auto& [name, view] : u.tensors) {
    const bool q = name.find("self_attn.q_proj.weight") != std::string::npos;
    const bool k = name.find("self_attn.k_proj.weight") != std::string::npos;
    if (!q && !k) continue;
    const int64_t rows = view.shape[0];
    u.owned.emplace_back(view.bytes);
    PermuteQkRows(view.data, rows, view.bytes / uint64_t(rows),
                  q ? c.num_heads : c.num_kv_heads, /*inverse=*/true,
                  u.owned.back().data());
    view.data = u.owned.back().data();
  }
  return u;
}

int Write(const std::string& dir) {
  namespace fs = std::filesystem;
  StatusOr<ModelConfig> preset = SynthPreset("tiny");
  if (!preset.ok()) return Fail(preset.status());
  ModelConfig c = *preset;
  c.hidden_size = 256;
  c.intermediate_size = 512;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 64;
  const std::string hf = dir + "/hf";
  fs::create_directories(dir);
  SynthOptions so;
  so.seed = 7;
  Status s = layerproof::text::SynthesizeTextModel(c, so, hf);
  if (!s.ok()) return Fail(s);
  StatusOr<GgufTokenizerKeys> keys = layerproof::text::GgufTokenizerKeysFor(hf);
  if (!keys.ok()) return Fail(keys.status());
  LoadOptions lo;
  lo.write_digest_cache = false;
  StatusOr<std::unique_ptr<Model>> m = Model::Load(hf, lo);
  if (!m.ok()) return Fail(m.status());
  GgufExportOptions eo;
  eo.name = "layerproof llama.cpp peer";
  eo.tokenizer = *keys;
  for (DType t :
       {DType::kF32, DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ6_K}) {
    std::string name(DTypeName(t));
    for (char& ch : name) ch = char(std::tolower(ch));
    const std::string path = dir + "/model-" + name + ".gguf";
    s = WriteGgufModel(**m, t, path, eo);
    if (!s.ok()) return Fail(s);
    std::cout << Json{{"file", path}, {"type", name}, {"control", false}}
              << '\n';
  }
  const Unpermuted u = UnpermuteQk(**m);
  const std::string control = dir + "/control-unpermuted-f32.gguf";
  s = WriteGgufModel((*m)->config(), u.tensors, DType::kF32, control, eo);
  if (!s.ok()) return Fail(s);
  std::cout << Json{{"file", control}, {"type", "f32"}, {"control", true}}
            << '\n';
  return 0;
}

int Tokenize(const std::string& file, const std::string& text) {
  namespace fs = std::filesystem;
  auto mt = layerproof::text::LoadModelTextFor(
      fs::path(file).parent_path().string(), file);
  if (!mt.ok()) return Fail(mt.status());
  if (*mt == nullptr)
    return Fail(Status(StatusCode::kNotFound, "no tokenizer"));
  auto ids = (*mt)->EncodePrompt(text);
  if (!ids.ok()) return Fail(ids.status());
  std::cout << Json{{"ids", *ids}} << '\n';
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> a(argv + 1, argv + argc);
  if (a.size() == 2 && a[0] == "write") return Write(a[1]);
  if (a.size() == 3 && a[0] == "tokenize") return Tokenize(a[1], a[2]);
  std::fprintf(stderr,
               "usage: peer_llama_cpp write OUT_DIR | tokenize FILE TEXT\n");
  return 2;
}
