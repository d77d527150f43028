// CommitmentTap and BuildCommitment: the layer hashes taken while serving
// (decode, token by token) equal Engine::Forward + HashLayerRows under the
// same key, the digests are the records' definitions, and a RowsTamper
// changes exactly what is hashed.
#include "prover/commitment_builder.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/dispatch.h"
#include "kernels/golden.h"
#include "kernels/model/executor.h"
#include "store/commitment.h"
#include "store/envelope.h"
#include "tests/model/engine_fixture.h"

namespace layerproof::prover {
namespace {

namespace model = kernels::model;

std::string Str(const kernels::Sha256Digest& d) {
  return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

class CommitmentBuilderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    synth_ = model::testing::MakeSynthModel("prover_cb", false);
    ASSERT_NE(synth_->model, nullptr);
    executor_ = model::MakeHostExecutor(*kernels::DefaultBackend());
    auto engine = model::Engine::Create(*synth_->model, executor_.get());
    ASSERT_TRUE(engine.ok());
    engine_ = *std::move(engine);
  }

  // Serves `prompt` with `tap` and returns the finished sequence.
  model::FinishedSequence Serve(const std::vector<int32_t>& prompt,
                                model::LayerTap* tap) {
    model::GenerationRequest r;
    r.prompt = prompt;
    r.sampling.temperature = 0.8f;
    r.sampling.seed = 99;
    r.max_new_tokens = 5;
    r.ignore_eos = true;
    r.tap = tap;
    auto f = engine_->Generate(r);
    EXPECT_TRUE(f.ok());
    return *f;
  }

  std::unique_ptr<model::testing::SynthModel> synth_;
  std::unique_ptr<model::Executor> executor_;
  std::unique_ptr<model::Engine> engine_;
};

TEST_F(CommitmentBuilderTest, TapHashesEqualForwardHashes) {
  auto secrets = NewRequestSecrets();
  ASSERT_TRUE(secrets.ok());
  const model::ModelConfig& c = synth_->model->config();
  CommitmentTap tap(c.num_layers, c.hidden_size, secrets->key, nullptr);
  const std::vector<int32_t> prompt = {1, 17, 42, 99, 3};
  model::FinishedSequence f = Serve(prompt, &tap);
  ASSERT_EQ(f.output.size(), 5u);
  const int64_t positions = int64_t(prompt.size() + f.output.size()) - 1;
  auto hashes = tap.Finish(positions);
  ASSERT_TRUE(hashes.ok()) << hashes.status();
  ASSERT_EQ(hashes->size(), size_t(c.num_layers + 1));

  std::vector<int32_t> tokens = prompt;
  tokens.insert(tokens.end(), f.output.begin(), f.output.end() - 1);
  model::testing::RecordingTap recorded;
  ASSERT_TRUE(engine_->Forward(tokens, &recorded, 7, nullptr).ok());
  for (int64_t l = 0; l <= c.num_layers; ++l) {
    const std::vector<float>& rows = recorded.rows(7, l);
    EXPECT_EQ((*hashes)[l],
              Str(model::HashLayerRows(l, rows.data(), positions, c.hidden_size,
                                       store::AsBytes(secrets->key))))
        << "layer " << l;
  }
  // A wrong count is refused, not committed.
  CommitmentTap other(c.num_layers, c.hidden_size, secrets->key, nullptr);
  Serve(prompt, &other);
  EXPECT_EQ(other.Finish(positions + 1).status().code(),
            absl::StatusCode::kInternal);
}

class AddOneToLayer : public RowsTamper {
 public:
  explicit AddOneToLayer(int64_t layer) : layer_(layer) {}
  void Tamper(int64_t layer, int64_t, float* rows, int64_t, int64_t) override {
    if (layer == layer_) rows[0] += 1.0f;
  }

 private:
  int64_t layer_;
};

TEST_F(CommitmentBuilderTest, TamperChangesOnlyItsLayer) {
  auto secrets = NewRequestSecrets();
  ASSERT_TRUE(secrets.ok());
  const model::ModelConfig& c = synth_->model->config();
  const std::vector<int32_t> prompt = {5, 6, 7};
  CommitmentTap honest(c.num_layers, c.hidden_size, secrets->key, nullptr);
  CommitmentTap cheat(c.num_layers, c.hidden_size, secrets->key,
                      std::make_unique<AddOneToLayer>(2));
  model::FinishedSequence a = Serve(prompt, &honest);
  model::FinishedSequence b = Serve(prompt, &cheat);
  ASSERT_EQ(a.output, b.output);  // the engine itself runs honestly
  const int64_t positions = int64_t(prompt.size() + a.output.size()) - 1;
  auto h = honest.Finish(positions);
  auto t = cheat.Finish(positions);
  ASSERT_TRUE(h.ok() && t.ok());
  for (int64_t l = 0; l <= c.num_layers; ++l) {
    if (l == 2) {
      EXPECT_NE((*h)[l], (*t)[l]);
    } else {
      EXPECT_EQ((*h)[l], (*t)[l]) << "layer " << l;
    }
  }
}

TEST_F(CommitmentBuilderTest, BuildCommitmentFillsEveryFieldValidly) {
  auto secrets = NewRequestSecrets();
  ASSERT_TRUE(secrets.ok());
  EXPECT_EQ(secrets->request_id.size(), 16u);
  EXPECT_EQ(secrets->salt.size(), 32u);
  EXPECT_EQ(secrets->key,
            store::DigestKey(store::AsBytes(secrets->salt),
                             store::AsBytes(secrets->request_id)));
  const model::ModelConfig& c = synth_->model->config();
  CommitmentInputs in;
  in.model = synth_->model.get();
  in.prover_id = "prover-test";
  in.secrets = *secrets;
  in.prompt = {1, 2, 3};
  in.output = {4, 5};
  in.sampling.set_temperature(0);
  in.sampling.set_top_p(1);
  in.seed = 1234;
  in.layer_hashes.assign(c.num_layers + 1, std::string(32, 'h'));
  in.client_nonce = "nonce";
  in.created_at_unix_nanos = UnixNanosNow();
  in.finish_reason = v1::FINISH_REASON_MAX_TOKENS;
  in.max_new_tokens = 2;
  in.ignore_eos = false;
  in.max_context = engine_->max_context();
  const v1::Commitment commitment = BuildCommitment(in);
  EXPECT_TRUE(store::ValidateCommitment(commitment).ok())
      << store::ValidateCommitment(commitment);
  const store::Bytes key = store::AsBytes(secrets->key);
  auto s = [](const store::Sha256Hash& h) {
    return std::string(reinterpret_cast<const char*>(h.data()), h.size());
  };
  EXPECT_EQ(commitment.prompt_digest(),
            s(store::TokenDigest(key, std::vector<int32_t>{1, 2, 3})));
  EXPECT_EQ(commitment.output_digest(),
            s(store::TokenDigest(key, std::vector<int32_t>{4, 5})));
  EXPECT_EQ(commitment.seed_digest(), s(store::SeedDigest(key, 1234)));
  EXPECT_EQ(commitment.prompt_tokens(), 3u);
  EXPECT_EQ(commitment.output_tokens(), 2u);
  EXPECT_EQ(commitment.model_digest(), Str(synth_->model->digest().root));
  EXPECT_EQ(commitment.spec_version(), uint32_t(kernels::kSpecVersion));
  EXPECT_EQ(commitment.num_layers(), uint32_t(c.num_layers));
  EXPECT_EQ(commitment.hidden_size(), uint32_t(c.hidden_size));
  EXPECT_EQ(commitment.client_nonce(), "nonce");
  EXPECT_EQ(commitment.max_new_tokens(), 2u);
  EXPECT_FALSE(commitment.ignore_eos());
  EXPECT_EQ(commitment.max_context(), uint32_t(engine_->max_context()));
}

// Regression: the commitment left the stop rule out (max_new_tokens,
// stop_token_ids, ignore_eos, max_context were unset), so it no longer
// validated and an audit could not check where generation had to stop.
// The committed rule is the one the engine applied: it accepts what the
// engine served, and refuses the same output cut short or run past a stop.
TEST_F(CommitmentBuilderTest, CommitmentCommitsTheStopRuleTheEngineApplied) {
  const model::ModelConfig& c = synth_->model->config();
  ASSERT_FALSE(c.eos_token_ids.empty());
  const std::vector<int32_t> prompt = {1, 17, 42, 99, 3};
  // Greedy, 8 tokens: the stop id is the 3rd token served without one.
  model::GenerationRequest free_run;
  free_run.prompt = prompt;
  free_run.max_new_tokens = 8;
  free_run.ignore_eos = true;
  auto unstopped = engine_->Generate(free_run);
  ASSERT_TRUE(unstopped.ok());
  ASSERT_EQ(unstopped->output.size(), 8u);
  const int32_t stop_id = unstopped->output[2];
  ASSERT_EQ(std::count(unstopped->output.begin(), unstopped->output.begin() + 2,
                       stop_id),
            0);

  struct Case {
    std::vector<int32_t> stops;
    bool ignore_eos;
    std::vector<int32_t> want_committed;
  };
  const std::vector<Case> cases = {
      {{stop_id}, false, {stop_id}},
      {{}, false, c.eos_token_ids},  // no stop ids: the model's eos ids
      {{stop_id}, true, {stop_id}},  // ignored, but still committed
  };
  for (const Case& k : cases) {
    model::GenerationRequest r = free_run;
    r.stop_tokens = k.stops;
    r.ignore_eos = k.ignore_eos;
    auto f = engine_->Generate(r);
    ASSERT_TRUE(f.ok());
    auto secrets = NewRequestSecrets();
    ASSERT_TRUE(secrets.ok());
    CommitmentInputs in;
    in.model = synth_->model.get();
    in.prover_id = "prover-test";
    in.secrets = *secrets;
    in.prompt = prompt;
    in.output = f->output;
    in.sampling.set_top_p(1);
    in.layer_hashes.assign(c.num_layers + 1, std::string(32, 'h'));
    in.created_at_unix_nanos = UnixNanosNow();
    in.finish_reason = ToProtoFinishReason(f->finish);
    in.max_new_tokens = 8;
    in.request_stop_token_ids = k.stops;
    in.ignore_eos = k.ignore_eos;
    in.max_context = engine_->max_context();
    const v1::Commitment commitment = BuildCommitment(in);
    ASSERT_TRUE(store::ValidateCommitment(commitment).ok())
        << store::ValidateCommitment(commitment);
    EXPECT_EQ(std::vector<int32_t>(commitment.stop_token_ids().begin(),
                                   commitment.stop_token_ids().end()),
              k.want_committed);
    EXPECT_EQ(commitment.ignore_eos(), k.ignore_eos);
    EXPECT_EQ(commitment.max_new_tokens(), 8u);
    EXPECT_EQ(commitment.max_context(), uint32_t(engine_->max_context()));
    size_t allowed = 0;
    EXPECT_TRUE(store::CheckStopRule(commitment, f->output, &allowed).ok())
        << store::CheckStopRule(commitment, f->output, &allowed);
    if (!k.stops.empty() && !k.ignore_eos) {
      EXPECT_EQ(f->output.size(), 3u);
      EXPECT_EQ(commitment.finish_reason(), v1::FINISH_REASON_STOP);
      // The unstopped output under the same rule ran past the stop id.
      v1::Commitment longer = commitment;
      longer.set_output_tokens(8);
      longer.set_finish_reason(v1::FINISH_REASON_MAX_TOKENS);
      EXPECT_FALSE(
          store::CheckStopRule(longer, unstopped->output, &allowed).ok());
      EXPECT_EQ(allowed, 3u);
    }
  }
}

}  // namespace
}  // namespace layerproof::prover
