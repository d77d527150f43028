// The deterministic engine against the independent float64 reference
// forward (DESIGN §4: relative error <= 1e-4 on logits), on the synthetic
// tiny model and on variants that exercise GQA, QKV bias, tied embeddings
// and Llama-3 RoPE scaling.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/dispatch.h"
#include "tests/model/engine_fixture.h"
#include "tests/model/reference_forward.h"

namespace layerproof::kernels::model {
namespace {

using testing::MakeSynthModelWith;
using testing::Qwen2Variant;

void Llama3Rope(ModelConfig& c) {
  c.rope_theta = 500000.0;
  c.rope_scaling.type = RopeScaling::Type::kLlama3;
  c.rope_scaling.factor = 8.0;
  c.rope_scaling.low_freq_factor = 1.0;
  c.rope_scaling.high_freq_factor = 4.0;
  c.rope_scaling.original_max_positions = 64;  // scales tiny's head_dim 32
}

struct Variant {
  const char* name;
  void (*tweak)(ModelConfig&);
};

class EngineVsReference : public ::testing::TestWithParam<Variant> {};

// Row-wise relative error: max |engine - ref| / max |ref| over each row.
double MaxRowRelativeError(const std::vector<float>& got,
                           const std::vector<double>& want, int64_t width) {
  double worst = 0;
  for (size_t r = 0; r * width < want.size(); ++r) {
    double diff = 0, scale = 0;
    for (int64_t i = 0; i < width; ++i) {
      diff =
          std::max(diff, std::fabs(got[r * width + i] - want[r * width + i]));
      scale = std::max(scale, std::fabs(want[r * width + i]));
    }
    worst = std::max(worst, diff / scale);
  }
  return worst;
}

TEST_P(EngineVsReference, LogitsAgreeWithinOneInTenThousand) {
  auto synth = MakeSynthModelWith(std::string("ref_") + GetParam().name,
                                  GetParam().tweak);
  const Model& m = *synth->model;
  std::string error;
  std::unique_ptr<layerproof::testing::RefModel> ref =
      layerproof::testing::LoadRefModel(synth->dir.string(), &error);
  ASSERT_NE(ref, nullptr) << error;

  std::vector<int32_t> tokens;
  for (int i = 0; i < 24; ++i) tokens.push_back((i * 389 + 11) % 1000);
  const std::vector<double> want =
      layerproof::testing::RefForwardLogits(*ref, tokens);
  const int64_t vocab = m.config().vocab_size;

  for (BackendKind kind : {BackendKind::kRef, (*DefaultBackend())->kind()}) {
    auto ex = MakeExecutor(*GetBackend(kind));
    ASSERT_TRUE(ex.ok());
    auto engine = Engine::Create(m, ex->get());
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    std::vector<float> got(tokens.size() * vocab);
    ASSERT_TRUE((*engine)->Forward(tokens, nullptr, 1, got.data()).ok());
    const double err = MaxRowRelativeError(got, want, vocab);
    EXPECT_LE(err, 1e-4) << BackendName(kind);
    // Bf16 weights widen exactly and fp32 sums of O(1) terms lose ~1e-7 each:
    // an error far above that would mean a wrong op that happens to be close.
    RecordProperty(std::string("max_rel_err_") + std::string(BackendName(kind)),
                   std::to_string(err));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Models, EngineVsReference,
    ::testing::Values(Variant{"Tiny", nullptr},
                      Variant{"GqaQkvBiasTied", Qwen2Variant},
                      Variant{"Qwen3QkNormHeadDim", testing::Qwen3Variant},
                      Variant{"Llama3RopeScaling", Llama3Rope}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace layerproof::kernels::model
