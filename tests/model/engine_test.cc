// The engine's invariances (DESIGN §4): logits, tokens and every layer hash
// bit-identical across backends, thread counts, batch compositions, prefill
// chunking and decode; RunBlock and RunHead reproduce what serving produced;
// golden layer hashes of the synthetic tiny model.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "kernels/dispatch.h"
#include "kernels/golden.h"
#include "tests/model/engine_fixture.h"

namespace layerproof::kernels::model {
namespace {

using testing::MakeSynthModel;
using testing::RecordingTap;
using testing::SynthModel;

// The shapes every invariance runs on: tiny Llama, its Qwen2-style variant
// (GQA 8/2, QKV bias, tied), its Qwen3-shaped variant (q/k norms, head_dim
// != hidden / heads), and QuantVariant as a GGUF in each block type.
enum class Shape { kTiny, kQwen2, kQwen3, kQ8_0, kQ4_0, kQ4_K, kQ6_K };

const Model& Tiny(Shape shape) {
  static std::unique_ptr<SynthModel> plain = MakeSynthModel("tiny", false);
  static std::unique_ptr<SynthModel> qwen2 = MakeSynthModel("qwen2", true);
  static std::unique_ptr<SynthModel> qwen3 =
      testing::MakeSynthModelWith("qwen3", testing::Qwen3Variant);
  static std::map<Shape, std::unique_ptr<SynthModel>> quant;
  const std::map<Shape, DType> quant_type = {{Shape::kQ8_0, DType::kQ8_0},
                                             {Shape::kQ4_0, DType::kQ4_0},
                                             {Shape::kQ4_K, DType::kQ4_K},
                                             {Shape::kQ6_K, DType::kQ6_K}};
  switch (shape) {
    case Shape::kTiny:
      return *plain->model;
    case Shape::kQwen2:
      return *qwen2->model;
    case Shape::kQwen3:
      return *qwen3->model;
    default: {
      std::unique_ptr<SynthModel>& m = quant[shape];
      if (!m) m = testing::MakeQuantModel(quant_type.at(shape));
      return *m->model;
    }
  }
}

struct RunRecord {
  std::vector<int32_t> output;
  FinishReason finish = FinishReason::kNone;
  std::vector<std::string> hashes;  // H_0 .. H_L
};

std::unique_ptr<Engine> MakeEngine(const Model& m, Backend* b,
                                   std::unique_ptr<Executor>* ex,
                                   const EngineOptions& o = {}) {
  StatusOr<std::unique_ptr<Executor>> e = MakeExecutor(b);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  *ex = std::move(*e);
  StatusOr<std::unique_ptr<Engine>> engine = Engine::Create(m, ex->get(), o);
  EXPECT_TRUE(engine.ok()) << engine.status().ToString();
  return std::move(*engine);
}

Backend* Ref() { return *GetBackend(BackendKind::kRef); }

GenerationRequest Request(std::vector<int32_t> prompt, int64_t max_new,
                          float temperature = 0, uint64_t seed = 0) {
  GenerationRequest r;
  r.prompt = std::move(prompt);
  r.max_new_tokens = max_new;
  r.ignore_eos = true;
  r.sampling.temperature = temperature;
  r.sampling.top_k = temperature > 0 ? 40 : 0;
  r.sampling.top_p = temperature > 0 ? 0.9f : 1.0f;
  r.sampling.seed = seed;
  return r;
}

RunRecord Collect(const Model& m, RecordingTap& tap, SequenceId id,
                  const FinishedSequence& f) {
  RunRecord r;
  r.output = f.output;
  r.finish = f.finish;
  const int64_t h = m.config().hidden_size;
  // Every fed position was tapped: the prompt and all but the last output.
  const size_t positions = f.prompt.size() + f.output.size() - 1;
  for (int64_t l = 0; l <= m.config().num_layers; ++l) {
    EXPECT_EQ(tap.rows(id, l).size(), positions * h) << "layer " << l;
    r.hashes.push_back(tap.Hash(id, l, h));
  }
  return r;
}

RunRecord RunAlone(const Model& m, Backend* b, GenerationRequest req,
                   const EngineOptions& o = {}) {
  std::unique_ptr<Executor> ex;
  std::unique_ptr<Engine> e = MakeEngine(m, b, &ex, o);
  RecordingTap tap;
  req.tap = &tap;
  StatusOr<SequenceId> id = e->Add(std::move(req));
  EXPECT_TRUE(id.ok()) << id.status().ToString();
  while (!e->idle()) {
    Status s = e->Step();
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) break;
  }
  std::vector<FinishedSequence> f = e->TakeFinished();
  EXPECT_EQ(f.size(), 1u);
  return Collect(m, tap, *id, f.at(0));
}

void ExpectSameRun(const RunRecord& want, const RunRecord& got,
                   const std::string& what) {
  EXPECT_EQ(want.output, got.output) << what;
  EXPECT_EQ(want.finish, got.finish) << what;
  ASSERT_EQ(want.hashes.size(), got.hashes.size()) << what;
  for (size_t l = 0; l < want.hashes.size(); ++l) {
    EXPECT_EQ(want.hashes[l], got.hashes[l]) << what << ": layer " << l;
  }
}

const std::vector<int32_t> kPrompt = {5, 300, 17, 940, 2, 77, 513, 64, 1000};

class EngineInvariance : public ::testing::TestWithParam<Shape> {
 protected:
  const Model& model() { return Tiny(GetParam()); }
};

TEST_P(EngineInvariance, EveryBackendAndThreadCountGivesTheSameBits) {
  const RunRecord want =
      RunAlone(model(), Ref(), Request(kPrompt, 8, 0.8f, 11));
  ASSERT_EQ(want.output.size(), 8u);
  for (BackendKind kind : AvailableBackends()) {
    Backend* b = *GetBackend(kind);
    for (int threads : {1, 2, 3}) {
      b->SetThreads(threads);
      ExpectSameRun(want, RunAlone(model(), b, Request(kPrompt, 8, 0.8f, 11)),
                    std::string(BackendName(kind)) + " threads " +
                        std::to_string(threads));
    }
    b->SetThreads(1);
  }
}

TEST_P(EngineInvariance, BatchedWithOthersStartingLaterMatchesAlone) {
  Backend* b = *DefaultBackend();
  std::vector<GenerationRequest> reqs = {
      Request(kPrompt, 10), Request({1, 2, 3}, 6, 0.7f, 5),
      Request({900, 901, 902, 903, 904, 905, 906, 907, 908, 909, 910}, 4),
      Request({42}, 7, 1.2f, 99)};
  std::vector<RunRecord> alone;
  for (const auto& r : reqs) alone.push_back(RunAlone(model(), b, r));

  std::unique_ptr<Executor> ex;
  std::unique_ptr<Engine> e = MakeEngine(model(), b, &ex);
  RecordingTap tap;
  // Request i joins before step join_at[i]: mid-prefill of nobody, mid-decode
  // of the others.
  const int join_at[] = {0, 0, 2, 5};
  std::vector<SequenceId> ids(reqs.size());
  std::vector<FinishedSequence> done;
  for (int step = 0; step < 64; ++step) {
    for (size_t i = 0; i < reqs.size(); ++i) {
      if (join_at[i] == step) {
        reqs[i].tap = &tap;
        ids[i] = *e->Add(reqs[i]);
      }
    }
    if (step > 5 && e->idle()) break;
    ASSERT_TRUE(e->Step().ok());
    for (auto& f : e->TakeFinished()) done.push_back(std::move(f));
  }
  ASSERT_EQ(done.size(), reqs.size());
  for (const FinishedSequence& f : done) {
    const size_t i = std::find(ids.begin(), ids.end(), f.seq) - ids.begin();
    ExpectSameRun(alone[i], Collect(model(), tap, f.seq, f),
                  "request " + std::to_string(i));
  }
}

TEST_P(EngineInvariance, ChunkedPrefillAndTokenByTokenMatchOnePrefill) {
  Backend* b = *DefaultBackend();
  const RunRecord want = RunAlone(model(), b, Request(kPrompt, 5));
  for (int64_t rows : {1, 2, 4}) {
    EngineOptions o;
    o.max_sequences = 1;
    o.max_step_rows = rows;
    ExpectSameRun(want, RunAlone(model(), b, Request(kPrompt, 5), o),
                  "max_step_rows " + std::to_string(rows));
  }
}

TEST_P(EngineInvariance, RunBlockAndRunHeadReproduceServing) {
  const Model& m = model();
  const int64_t h = m.config().hidden_size;
  const int64_t vocab = m.config().vocab_size;
  std::unique_ptr<Executor> ex;
  std::unique_ptr<Engine> e = MakeEngine(m, *DefaultBackend(), &ex);
  RecordingTap tap;
  GenerationRequest req = Request(kPrompt, 6, 0.9f, 3);
  const SamplingParams sampling = req.sampling;
  req.tap = &tap;
  StatusOr<FinishedSequence> f = e->Generate(req);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const int64_t positions = static_cast<int64_t>(kPrompt.size() + 5);

  for (int64_t l = 1; l <= m.config().num_layers; ++l) {
    const std::vector<float>& in = tap.rows(f->seq, l - 1);
    ASSERT_EQ(static_cast<int64_t>(in.size()), positions * h);
    std::vector<float> out(positions * h);
    ASSERT_TRUE(e->RunBlock(l, in.data(), positions, out.data()).ok());
    EXPECT_EQ(0, std::memcmp(out.data(), tap.rows(f->seq, l).data(),
                             out.size() * sizeof(float)))
        << "layer " << l;
  }
  // The head over h^L re-draws every generated token at its position.
  std::vector<float> logits(positions * vocab);
  ASSERT_TRUE(e->RunHead(tap.rows(f->seq, m.config().num_layers).data(),
                         positions, logits.data())
                  .ok());
  for (int64_t i = 0; i < 6; ++i) {
    const int64_t row = static_cast<int64_t>(kPrompt.size()) - 1 + i;
    StatusOr<int32_t> t =
        e->Sample(logits.data() + row * vocab, sampling, row + 1);
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(*t, f->output[i]) << "generated token " << i;
  }
  // Forward over the fed tokens taps the same rows.
  std::vector<int32_t> fed = kPrompt;
  fed.insert(fed.end(), f->output.begin(), f->output.end() - 1);
  RecordingTap forward_tap;
  ASSERT_TRUE(e->Forward(fed, &forward_tap, 1, nullptr).ok());
  for (int64_t l = 0; l <= m.config().num_layers; ++l) {
    EXPECT_EQ(forward_tap.rows(1, l), tap.rows(f->seq, l)) << "layer " << l;
  }
}

TEST_P(EngineInvariance, ActivationsStayInARealisticRange) {
  const Model& m = model();
  const int64_t h = m.config().hidden_size;
  std::unique_ptr<Executor> ex;
  std::unique_ptr<Engine> e = MakeEngine(m, *DefaultBackend(), &ex);
  RecordingTap tap;
  const int64_t n = static_cast<int64_t>(kPrompt.size());
  std::vector<float> logits(n * m.config().vocab_size);
  ASSERT_TRUE(e->Forward(kPrompt, &tap, 1, logits.data()).ok());
  for (int64_t l = 0; l <= m.config().num_layers; ++l) {
    double sum = 0;
    for (float v : tap.rows(1, l)) sum += double(v) * v;
    const double rms = std::sqrt(sum / (n * h));
    EXPECT_GT(rms, 0.05) << "layer " << l;
    EXPECT_LT(rms, 20.0) << "layer " << l;
  }
  double lsum = 0, lmax = 0;
  for (float v : logits) {
    ASSERT_TRUE(std::isfinite(v));
    lsum += double(v) * v;
    lmax = std::max(lmax, double(std::fabs(v)));
  }
  const double lrms = std::sqrt(lsum / logits.size());
  EXPECT_GT(lrms, 0.3);  // the head discriminates between tokens
  EXPECT_LT(lmax, 100.0);
}

INSTANTIATE_TEST_SUITE_P(Shapes, EngineInvariance,
                         ::testing::Values(Shape::kTiny, Shape::kQwen2,
                                           Shape::kQwen3, Shape::kQ8_0,
                                           Shape::kQ4_0, Shape::kQ4_K,
                                           Shape::kQ6_K),
                         [](const auto& info) {
                           switch (info.param) {
                             case Shape::kQwen2:
                               return "Qwen2Variant";
                             case Shape::kQwen3:
                               return "Qwen3Variant";
                             case Shape::kQ8_0:
                               return "GgufQ8_0";
                             case Shape::kQ4_0:
                               return "GgufQ4_0";
                             case Shape::kQ4_K:
                               return "GgufQ4_K";
                             case Shape::kQ6_K:
                               return "GgufQ6_K";
                             default:
                               return "Tiny";
                           }
                         });

// The CUDA executor (weights, activations and KV caches in device memory)
// against ref: tokens and every layer hash, batched, plus RunBlock. Also
// covered by EveryBackendAndThreadCount when a device is present; this test
// names the skip when there is none.
TEST(EngineCuda, DeviceResidentEngineMatchesRef) {
  StatusOr<Backend*> cuda = GetBackend(BackendKind::kCuda);
  if (!cuda.ok()) GTEST_SKIP() << "no CUDA: " << cuda.status().ToString();
  for (Shape shape : {Shape::kTiny, Shape::kQwen2, Shape::kQwen3, Shape::kQ8_0,
                      Shape::kQ4_0, Shape::kQ4_K, Shape::kQ6_K}) {
    const Model& m = Tiny(shape);
    for (float temperature : {0.0f, 0.8f}) {
      GenerationRequest r = Request(kPrompt, 8, temperature, 5);
      ExpectSameRun(RunAlone(m, Ref(), r), RunAlone(m, *cuda, r),
                    "cuda, " + m.config().architecture);
    }
  }
}

TEST(Engine, StopsOnStopTokenMaxTokensContextAndCancel) {
  const Model& m = Tiny(Shape::kTiny);
  Backend* b = *DefaultBackend();
  const RunRecord greedy = RunAlone(m, b, Request(kPrompt, 4));
  GenerationRequest stop = Request(kPrompt, 4);
  stop.ignore_eos = false;
  stop.stop_tokens = {greedy.output[1]};
  const RunRecord stopped = RunAlone(m, b, stop);
  EXPECT_EQ(stopped.finish, FinishReason::kStop);
  EXPECT_EQ(stopped.output, std::vector<int32_t>(greedy.output.begin(),
                                                 greedy.output.begin() + 2));
  EXPECT_EQ(greedy.finish, FinishReason::kMaxTokens);

  EngineOptions small;
  small.max_context = 12;
  const RunRecord full = RunAlone(m, b, Request(kPrompt, 10), small);
  EXPECT_EQ(full.finish, FinishReason::kContextFull);
  EXPECT_EQ(full.output.size(), 12 - kPrompt.size());

  std::unique_ptr<Executor> ex;
  std::unique_ptr<Engine> e = MakeEngine(m, b, &ex);
  SequenceId id = *e->Add(Request(kPrompt, 100));
  ASSERT_TRUE(e->Step().ok());
  ASSERT_TRUE(e->Cancel(id).ok());
  ASSERT_TRUE(e->Step().ok());
  EXPECT_TRUE(e->idle());
  std::vector<FinishedSequence> f = e->TakeFinished();
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].finish, FinishReason::kCancelled);
  EXPECT_EQ(f[0].output.size(), 1u);
  EXPECT_EQ(e->Cancel(id).code(), StatusCode::kNotFound);
}

TEST(Engine, SeededSamplingIsReproducibleAndSeedsDiffer) {
  const Model& m = Tiny(Shape::kTiny);
  Backend* b = *DefaultBackend();
  const RunRecord a = RunAlone(m, b, Request(kPrompt, 12, 1.5f, 1));
  const RunRecord a2 = RunAlone(m, b, Request(kPrompt, 12, 1.5f, 1));
  const RunRecord c = RunAlone(m, b, Request(kPrompt, 12, 1.5f, 2));
  ExpectSameRun(a, a2, "same seed");
  EXPECT_NE(a.output, c.output);
}

TEST(Engine, BadRequestsNameTheField) {
  const Model& m = Tiny(Shape::kTiny);
  std::unique_ptr<Executor> ex;
  std::unique_ptr<Engine> e = MakeEngine(m, Ref(), &ex);
  auto expect_bad = [&](GenerationRequest r, const std::string& field) {
    StatusOr<SequenceId> id = e->Add(std::move(r));
    ASSERT_FALSE(id.ok()) << field;
    EXPECT_EQ(id.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(id.status().message().find(field), std::string::npos)
        << id.status().message();
  };
  expect_bad(Request({}, 4), "prompt");
  expect_bad(Request({1, 1024}, 4), "prompt[1]");
  expect_bad(Request({1, -3}, 4), "prompt[1]");
  expect_bad(Request({1}, 0), "max_new_tokens");
  expect_bad(Request({1}, 4, -1.0f), "temperature");
  expect_bad(Request(std::vector<int32_t>(e->max_context(), 1), 4), "prompt");
  EXPECT_TRUE(e->idle());

  std::vector<float> h(16 * m.config().hidden_size);
  EXPECT_EQ(e->RunBlock(0, h.data(), 16, h.data()).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(e->RunBlock(5, h.data(), 16, h.data()).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(e->RunBlock(1, h.data(), 0, h.data()).code(),
            StatusCode::kInvalidArgument);
  std::vector<int32_t> bad = {1, 5000};
  EXPECT_EQ(e->Embed(bad.data(), 2, h.data()).code(),
            StatusCode::kInvalidArgument);
}

// Golden: the model of seed 7, its digest and the layer hashes and greedy
// tokens of a fixed prompt, as `layerproof forward` prints them, against
// tests/golden/`file`. The cross-platform contract of the whole model path
// (tests/golden/README.md).
void ExpectGolden(const Model& m, const std::string& file) {
  std::unique_ptr<Executor> ex;
  std::unique_ptr<Engine> e = MakeEngine(m, *DefaultBackend(), &ex);
  RecordingTap tap;
  std::ostringstream got;
  got << "spec_version " << kSpecVersion << "\n";
  got << "model_digest " << HexDigest(m.digest().root) << "\n";
  ASSERT_TRUE(e->Forward(kPrompt, &tap, 1, nullptr).ok());
  for (int64_t l = 0; l <= m.config().num_layers; ++l) {
    got << "layer " << l << " " << tap.Hash(1, l, m.config().hidden_size)
        << "\n";
  }
  StatusOr<FinishedSequence> f = e->Generate(Request(kPrompt, 8));
  ASSERT_TRUE(f.ok());
  got << "greedy";
  for (int32_t t : f->output) got << " " << t;
  got << "\n";

  const std::string path = std::string(LP_SOURCE_DIR) + "/tests/golden/" + file;
  if (std::getenv("LP_WRITE_GOLDEN") != nullptr) {
    std::ofstream(path) << got.str();
    std::printf("wrote %s\n", path.c_str());  // regeneration, not a check
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing " << path;
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(want.str(), got.str());
}

TEST(EngineGolden, TinyModelLayerHashesMatchGoldenFile) {
  ExpectGolden(Tiny(Shape::kTiny), "model_tiny.golden");
}

TEST(EngineGolden, Qwen3ShapedModelLayerHashesMatchGoldenFile) {
  ExpectGolden(Tiny(Shape::kQwen3), "model_qwen3.golden");
}

// The quantized path end to end: GGUF writing (the reference quantizers),
// loading, activation quantization and the integer GEMMs.
TEST(EngineGolden, QuantizedModelsLayerHashesMatchGoldenFiles) {
  for (const auto& [shape, file] : std::vector<std::pair<Shape, std::string>>{
           {Shape::kQ8_0, "model_q8_0.golden"},
           {Shape::kQ4_0, "model_q4_0.golden"},
           {Shape::kQ4_K, "model_q4_k.golden"},
           {Shape::kQ6_K, "model_q6_k.golden"}}) {
    SCOPED_TRACE(file);
    ExpectGolden(Tiny(shape), file);
  }
}

}  // namespace
}  // namespace layerproof::kernels::model
