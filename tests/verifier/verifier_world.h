// Shared fixtures for the verifier node tests: the tiny synthetic model and
// an engine (built once per binary), honest requests served the way a
// prover serves them (Engine::Generate with a salted hashing tap, a signed
// commitment), and an OpeningSource that opens them honestly by replay and
// can be held closed to simulate a slow prover.
#ifndef LAYERPROOF_TESTS_VERIFIER_VERIFIER_WORLD_H_
#define LAYERPROOF_TESTS_VERIFIER_VERIFIER_WORLD_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "kernels/dispatch.h"
#include "kernels/golden.h"
#include "kernels/model/layer_hash.h"
#include "store/commitment.h"
#include "store/crypto.h"
#include "store/envelope.h"
#include "tests/model/engine_fixture.h"
#include "tests/store/temp_dir.h"
#include "check/re_executor.h"

namespace layerproof::verifier::testing {

template <typename Digest>
std::string Str(const Digest& d) {
  return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

// Distinct bytes from a counter: request ids and salts.
inline std::string FreshBytes(size_t n) {
  static std::atomic<uint32_t> counter{1};
  const uint32_t c = counter.fetch_add(1);
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i)
    s[i] = static_cast<char>((c * 131 + i * 7) ^ (c >> 8));
  s[0] = static_cast<char>(c);
  s[1] = static_cast<char>(c >> 8);
  return s;
}

struct World {
  std::unique_ptr<kernels::model::testing::SynthModel> synth;
  std::unique_ptr<kernels::model::Executor> executor;
  std::unique_ptr<kernels::model::Engine> engine;
  std::string model_digest;
  int64_t layers = 0, width = 0;
};

inline World& TheWorld() {
  static World* w = [] {
    auto* world = new World;
    world->synth = kernels::model::testing::MakeSynthModel("verifier", false);
    kernels::StatusOr<kernels::Backend*> backend = kernels::DefaultBackend();
    EXPECT_TRUE(backend.ok());
    auto ex = kernels::model::MakeExecutor(*backend);
    EXPECT_TRUE(ex.ok());
    world->executor = std::move(*ex);
    // A verifier's engine covers every position the model allows
    // (VerifierNode refuses a shorter one).
    kernels::model::EngineOptions options;
    options.max_context = world->synth->model->config().max_positions;
    auto engine = kernels::model::Engine::Create(
        *world->synth->model, world->executor.get(), options);
    EXPECT_TRUE(engine.ok()) << engine.status().ToString();
    world->engine = std::move(*engine);
    world->model_digest = Str(world->synth->model->digest().root);
    world->layers = world->synth->model->config().num_layers;
    world->width = world->synth->model->config().hidden_size;
    return world;
  }();
  return *w;
}

// One salted LayerHasher per layer, as a prover's tap.
class HashingTap : public kernels::model::LayerTap {
 public:
  HashingTap(int64_t layers, int64_t width, const std::string& key) {
    for (int64_t l = 0; l <= layers; ++l) {
      hashers_.emplace_back(l, width, store::AsBytes(key));
    }
  }
  void OnLayerRows(kernels::model::SequenceId, int64_t layer, int64_t,
                   const float* rows, int64_t n, int64_t) override {
    hashers_[layer].AddRows(rows, n);
  }
  std::vector<std::string> Finish() {
    std::vector<std::string> out;
    for (kernels::model::LayerHasher& h : hashers_) {
      out.push_back(Str(h.Finish()));
    }
    return out;
  }

 private:
  std::vector<kernels::model::LayerHasher> hashers_;
};

// Collects h^k rows of a replay for the requested layers.
class RowsTap : public kernels::model::LayerTap {
 public:
  void OnLayerRows(kernels::model::SequenceId, int64_t layer, int64_t,
                   const float* rows, int64_t n, int64_t width) override {
    std::vector<float>& v = rows_[static_cast<uint32_t>(layer)];
    v.insert(v.end(), rows, rows + n * width);
  }
  std::map<uint32_t, std::vector<float>> rows_;
};

// What a prover keeps for one request, and its signed commitment.
struct Served {
  std::string request_id = FreshBytes(16);
  std::string salt = FreshBytes(32);
  std::vector<int32_t> prompt, output;
  uint64_t seed = 5;
  v1::Commitment commitment;
  std::string envelope;

  std::string Key() const {
    return store::DigestKey(store::AsBytes(salt), store::AsBytes(request_id));
  }
  std::vector<int32_t> Positions() const {
    std::vector<int32_t> t = prompt;
    t.insert(t.end(), output.begin(), output.end() - 1);
    return t;
  }
};

// Output tokens of every Serve'd request (ignore_eos: exactly these).
inline constexpr int64_t kServedTokens = 4;

// Serves `prompt` greedily with Engine::Generate as a prover does and signs
// the commitment with `key` as prover `prover_id`.
inline Served Serve(const store::Ed25519PrivateKey& key,
                    const std::string& prover_id,
                    std::vector<int32_t> prompt = {1, 17, 33, 250, 7}) {
  World& w = TheWorld();
  Served s;
  s.prompt = std::move(prompt);
  HashingTap tap(w.layers, w.width, s.Key());
  kernels::model::GenerationRequest req;
  req.prompt = s.prompt;
  req.max_new_tokens = kServedTokens;
  req.ignore_eos = true;
  req.sampling.seed = s.seed;
  req.tap = &tap;
  kernels::StatusOr<kernels::model::FinishedSequence> f =
      w.engine->Generate(req);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  s.output = f->output;
  const std::string k = s.Key();
  v1::Commitment& c = s.commitment;
  c.set_request_id(s.request_id);
  c.set_prover_id(prover_id);
  c.set_model_digest(w.model_digest);
  c.set_spec_version(kernels::kSpecVersion);
  c.set_prompt_digest(Str(store::TokenDigest(store::AsBytes(k), s.prompt)));
  c.set_prompt_tokens(s.prompt.size());
  c.set_output_digest(Str(store::TokenDigest(store::AsBytes(k), s.output)));
  c.set_output_tokens(s.output.size());
  c.mutable_sampling()->set_temperature(0);
  c.mutable_sampling()->set_top_k(0);
  c.mutable_sampling()->set_top_p(1);
  c.set_seed_digest(Str(store::SeedDigest(store::AsBytes(k), s.seed)));
  for (const std::string& h : tap.Finish()) c.add_layer_hashes(h);
  c.set_num_layers(w.layers);
  c.set_hidden_size(w.width);
  c.set_created_at_unix_nanos(1700000000000000000);
  c.set_finish_reason(v1::FINISH_REASON_MAX_TOKENS);
  c.set_max_new_tokens(kServedTokens);
  for (int32_t id : w.synth->model->config().eos_token_ids) {
    c.add_stop_token_ids(id);
  }
  c.set_ignore_eos(true);
  c.set_max_context(w.engine->max_context());
  absl::StatusOr<std::string> env = store::SignCommitment(c, key);
  EXPECT_TRUE(env.ok()) << env.status();
  s.envelope = env.value_or("");
  return s;
}

// Opens served requests honestly (deterministic replay). While held, Open
// blocks until Release; `opens` counts the calls that started.
class HonestOpenings : public check::OpeningSource {
 public:
  void Add(const Served& s) {
    absl::MutexLock lock(&mu_);
    served_[s.request_id] = s;
  }
  void Hold() {
    absl::MutexLock lock(&mu_);
    held_ = true;
  }
  void Release() {
    absl::MutexLock lock(&mu_);
    held_ = false;
  }
  int opens() const {
    absl::MutexLock lock(&mu_);
    return opens_;
  }

  absl::StatusOr<check::Opening> Open(std::string_view, std::string_view request_id,
                               const std::vector<uint32_t>& layers, uint64_t,
                               uint64_t, absl::Time) override {
    Served s;
    {
      absl::MutexLock lock(&mu_);
      ++opens_;
      auto released = [this]()
                          ABSL_SHARED_LOCKS_REQUIRED(mu_) { return !held_; };
      mu_.Await(absl::Condition(&released));
      auto it = served_.find(std::string(request_id));
      if (it == served_.end()) return absl::NotFoundError("no such request");
      s = it->second;
    }
    RowsTap tap;
    kernels::Status st =
        TheWorld().engine->Forward(s.Positions(), &tap, 1, nullptr);
    if (!st.ok()) return absl::InternalError(st.ToString());
    check::Opening o;
    v1::OpeningHeader& h = o.header;
    h.set_commitment_envelope(s.envelope);
    h.set_salt(s.salt);
    for (int32_t t : s.prompt) h.add_prompt_token_ids(t);
    for (int32_t t : s.output) h.add_output_token_ids(t);
    h.set_seed(s.seed);
    h.set_positions(s.Positions().size());
    h.set_hidden_size(TheWorld().width);
    for (uint32_t k : layers) {
      h.add_layers(k);
      o.layers[k] = tap.rows_[k];
    }
    return o;
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, Served> served_ ABSL_GUARDED_BY(mu_);
  bool held_ ABSL_GUARDED_BY(mu_) = false;
  int opens_ ABSL_GUARDED_BY(mu_) = 0;
};

// A fresh directory under the system temp dir, removed with its contents.
using TempDir = store::fixture::TempDir;

}  // namespace layerproof::verifier::testing

#endif  // LAYERPROOF_TESTS_VERIFIER_VERIFIER_WORLD_H_
