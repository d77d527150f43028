// Shared fixtures for the engine tests: synthetic models in temp dirs, a tap
// that records every row and hash, and engine construction on a backend.
#ifndef LAYERPROOF_TESTS_MODEL_ENGINE_FIXTURE_H_
#define LAYERPROOF_TESTS_MODEL_ENGINE_FIXTURE_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/model/engine.h"
#include "kernels/model/gguf_model.h"
#include "kernels/model/layer_hash.h"
#include "kernels/model/model.h"
#include "kernels/model/synth.h"

namespace layerproof::kernels::model::testing {

// A synthetic model on disk and loaded; removed with the object.
struct SynthModel {
  std::filesystem::path dir;
  std::unique_ptr<Model> model;
  ~SynthModel() {
    model.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

// The tiny preset as `tweak` changes it, synthesized and loaded.
inline std::unique_ptr<SynthModel> MakeSynthModelWith(
    const std::string& tag, const std::function<void(ModelConfig&)>& tweak,
    uint64_t seed = 7) {
  auto m = std::make_unique<SynthModel>();
  m->dir = std::filesystem::temp_directory_path() /
           ("lp_engine_" + tag + "_" + std::to_string(::getpid()));
  StatusOr<ModelConfig> c = SynthPreset("tiny");
  EXPECT_TRUE(c.ok());
  if (tweak) tweak(*c);
  SynthOptions o;
  o.seed = seed;
  Status s = SynthesizeModel(*c, o, m->dir.string());
  EXPECT_TRUE(s.ok()) << s.ToString();
  StatusOr<std::unique_ptr<Model>> loaded = Model::Load(m->dir.string());
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (loaded.ok()) m->model = std::move(*loaded);
  return m;
}

// A Qwen2-style variant of tiny: GQA 8/2, QKV bias and tied embeddings.
inline void Qwen2Variant(ModelConfig& c) {
  c.architecture = "Qwen2ForCausalLM";
  c.model_type = "qwen2";
  c.qkv_bias = true;
  c.tie_word_embeddings = true;
  c.num_heads = 8;
  c.num_kv_heads = 2;
  c.head_dim = c.hidden_size / 8;
}

// A Qwen3-shaped variant of tiny: per-head q/k norms, head_dim 64 with
// hidden 128 and 4 heads (so q_dim != hidden), tied embeddings, Qwen3's eps
// and RoPE base.
inline void Qwen3Variant(ModelConfig& c) {
  c.architecture = "Qwen3ForCausalLM";
  c.model_type = "qwen3";
  c.qk_norm = true;
  c.tie_word_embeddings = true;
  c.head_dim = 64;
  c.rms_norm_eps = 1e-6;
  c.rope_theta = 1000000.0;
}

// tiny, or its Qwen2-style variant.
inline std::unique_ptr<SynthModel> MakeSynthModel(const std::string& tag,
                                                  bool qwen2_variant,
                                                  uint64_t seed = 7) {
  return MakeSynthModelWith(
      tag, qwen2_variant ? Qwen2Variant : std::function<void(ModelConfig&)>(),
      seed);
}

// The shape of the quantized test models: tiny with every row length a
// multiple of 256, so Q4_K and Q6_K blocks fit every matrix (tiny's 128
// would make WriteGgufModel fall back to Q4_0 / Q8_0), and an untied
// lm_head so it is quantized too.
inline void QuantVariant(ModelConfig& c) {
  c.hidden_size = 256;
  c.intermediate_size = 768;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 64;
  c.tie_word_embeddings = false;
}

// QuantVariant synthesized, written as a GGUF with its matrices in `type`
// (llama's q/k row permutation included) and loaded from that file.
inline std::unique_ptr<SynthModel> MakeQuantModel(DType type,
                                                  uint64_t seed = 7) {
  const std::string tag(DTypeName(type));
  std::unique_ptr<SynthModel> hf = MakeSynthModelWith(tag, QuantVariant, seed);
  if (!hf->model) return hf;
  const std::string path = (hf->dir / "model.gguf").string();
  Status s = WriteGgufModel(*hf->model, type, path);
  EXPECT_TRUE(s.ok()) << s.ToString();
  StatusOr<std::unique_ptr<Model>> loaded = Model::Load(path);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  hf->model = loaded.ok() ? std::move(*loaded) : nullptr;
  if (hf->model) {
    for (const auto& [name, t] : hf->model->tensors()) {
      EXPECT_TRUE(t.shape.size() == 1 || t.dtype == type) << name;
    }
  }
  return hf;
}

// Records every tapped row per (sequence, layer) and checks the position
// order contract as it goes.
class RecordingTap : public LayerTap {
 public:
  void OnLayerRows(SequenceId seq, int64_t layer, int64_t pos0,
                   const float* rows, int64_t n, int64_t width) override {
    std::vector<float>& v = rows_[{seq, layer}];
    EXPECT_EQ(static_cast<int64_t>(v.size()), pos0 * width)
        << "seq " << seq << " layer " << layer << ": rows out of order";
    v.insert(v.end(), rows, rows + n * width);
  }
  // h^layer of `seq`, [positions][width].
  const std::vector<float>& rows(SequenceId seq, int64_t layer) {
    return rows_[{seq, layer}];
  }
  // H_layer of `seq` (unsalted).
  std::string Hash(SequenceId seq, int64_t layer, int64_t width) {
    const std::vector<float>& v = rows(seq, layer);
    return HexDigest(HashLayerRows(
        layer, v.data(), static_cast<int64_t>(v.size()) / width, width));
  }

 private:
  std::map<std::pair<SequenceId, int64_t>, std::vector<float>> rows_;
};

}  // namespace layerproof::kernels::model::testing

#endif  // LAYERPROOF_TESTS_MODEL_ENGINE_FIXTURE_H_
