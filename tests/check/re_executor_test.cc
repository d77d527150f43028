// The re-executor (check/re_executor.h) against commitments built the
// honest way (Engine::Generate with a salted hashing tap, signed with a
// test key) and against provers that cheat in each way the protocol must
// catch: a tampered or skipped layer, a wrong output token, openings that
// do not match the commitment, a relabelled commitment, bad signatures, the
// wrong model, and openings that fail or arrive late.
#include "check/re_executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/golden.h"
#include "kernels/model/layer_hash.h"
#include "store/commitment.h"
#include "store/envelope.h"
#include "store/merkle.h"
#include "tests/model/engine_fixture.h"

namespace layerproof::check {
namespace {

using kernels::model::Engine;
using kernels::model::FinishedSequence;
using kernels::model::GenerationRequest;
using kernels::model::LayerHasher;
using kernels::model::LayerTap;
using kernels::model::SequenceId;

template <typename Digest>
std::string Str(const Digest& d) {
  return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

std::string Bytes(size_t n, uint8_t first) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(first + 7 * i);
  return s;
}

// The shared model, executor and engine (built once per test binary).
struct World {
  std::unique_ptr<kernels::model::testing::SynthModel> synth;
  std::unique_ptr<kernels::model::Executor> executor;
  std::unique_ptr<Engine> engine;
  std::string model_digest;
  int64_t layers = 0, width = 0, vocab = 0;
};

// Destroyed at exit (engine, executor, then the model and its temp dir).
World& TheWorld() {
  static std::unique_ptr<World> w = [] {
    auto world = std::make_unique<World>();
    world->synth = kernels::model::testing::MakeSynthModel("reexec", false);
    kernels::StatusOr<kernels::Backend*> backend = kernels::DefaultBackend();
    EXPECT_TRUE(backend.ok());
    auto ex = kernels::model::MakeExecutor(*backend);
    EXPECT_TRUE(ex.ok());
    world->executor = std::move(*ex);
    // A verifier's engine covers every position the model allows.
    kernels::model::EngineOptions options;
    options.max_context = world->synth->model->config().max_positions;
    auto engine =
        Engine::Create(*world->synth->model, world->executor.get(), options);
    EXPECT_TRUE(engine.ok()) << engine.status().ToString();
    world->engine = std::move(*engine);
    world->model_digest = Str(world->synth->model->digest().root);
    const auto& c = world->synth->model->config();
    world->layers = c.num_layers;
    world->width = c.hidden_size;
    world->vocab = c.vocab_size;
    return world;
  }();
  return *w;
}

// One salted LayerHasher per layer, as a prover's tap.
class HashingTap : public LayerTap {
 public:
  HashingTap(int64_t layers, int64_t width, const std::string& key) {
    for (int64_t l = 0; l <= layers; ++l) {
      hashers_.emplace_back(l, width, store::AsBytes(key));
    }
  }
  void OnLayerRows(SequenceId, int64_t layer, int64_t, const float* rows,
                   int64_t n, int64_t) override {
    hashers_[layer].AddRows(rows, n);
  }
  std::vector<std::string> Finish() {
    std::vector<std::string> out;
    for (LayerHasher& h : hashers_) out.push_back(Str(h.Finish()));
    return out;
  }

 private:
  std::vector<LayerHasher> hashers_;
};

// Records h^0..h^L of a replay.
class RowsTap : public LayerTap {
 public:
  explicit RowsTap(int64_t layers) : rows_(layers + 1) {}
  void OnLayerRows(SequenceId, int64_t layer, int64_t, const float* rows,
                   int64_t n, int64_t width) override {
    rows_[layer].insert(rows_[layer].end(), rows, rows + n * width);
  }
  std::vector<std::vector<float>> rows_;
};

struct RequestSpec {
  std::vector<int32_t> prompt = {1, 17, 33, 250, 7, 900, 12};
  int64_t max_new_tokens = 6;
  float temperature = 0;
  int32_t top_k = 0;
  float top_p = 1;
  uint64_t seed = 99;
  std::string nonce;  // non-empty: seed = SeedFromNonce(nonce)
  // The committed stop rule (Commitment fields 16-20). Honest requests
  // ignore eos and stop at max_new_tokens.
  bool ignore_eos = true;
  std::vector<int32_t> stop_token_ids;  // empty: the model's eos ids
  v1::FinishReason finish_reason = v1::FINISH_REASON_MAX_TOKENS;
};

// What a prover keeps for one request, and the commitment it signed.
struct Served {
  std::string request_id = Bytes(16, 1);
  std::string salt = Bytes(32, 3);
  std::vector<int32_t> prompt, output;
  uint64_t seed = 0;
  std::vector<std::vector<float>> h;  // h^0..h^L, what the prover opens
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

store::Ed25519PrivateKey& ProverKey() {
  static auto* key = new store::Ed25519PrivateKey(
      *store::Ed25519PrivateKey::FromSeed(store::AsBytes(Bytes(32, 11))));
  return *key;
}

store::KeyRing ProverKeys() {
  store::KeyRing keys;
  keys.Add(ProverKey().public_key());
  return keys;
}

// Fills the commitment from s's tokens, seed and the given layer hashes,
// and signs it.
void Commit(Served& s, const RequestSpec& spec,
            const std::vector<std::string>& hashes) {
  const World& w = TheWorld();
  const std::string key = s.Key();
  v1::Commitment& c = s.commitment;
  c.set_request_id(s.request_id);
  c.set_prover_id("prover-test");
  c.set_model_digest(w.model_digest);
  c.set_spec_version(kernels::kSpecVersion);
  c.set_prompt_digest(Str(store::TokenDigest(store::AsBytes(key), s.prompt)));
  c.set_prompt_tokens(s.prompt.size());
  c.set_output_digest(Str(store::TokenDigest(store::AsBytes(key), s.output)));
  c.set_output_tokens(s.output.size());
  c.mutable_sampling()->set_temperature(spec.temperature);
  c.mutable_sampling()->set_top_k(spec.top_k);
  c.mutable_sampling()->set_top_p(spec.top_p);
  c.set_seed_digest(Str(store::SeedDigest(store::AsBytes(key), s.seed)));
  c.clear_layer_hashes();
  for (const std::string& h : hashes) c.add_layer_hashes(h);
  c.set_num_layers(w.layers);
  c.set_hidden_size(w.width);
  c.set_client_nonce(spec.nonce);
  c.set_created_at_unix_nanos(1700000000000000000);
  c.set_finish_reason(spec.finish_reason);
  c.set_max_new_tokens(static_cast<uint32_t>(spec.max_new_tokens));
  c.clear_stop_token_ids();
  for (int32_t id : spec.stop_token_ids.empty()
                        ? w.synth->model->config().eos_token_ids
                        : spec.stop_token_ids) {
    c.add_stop_token_ids(id);
  }
  c.set_ignore_eos(spec.ignore_eos);
  c.set_max_context(static_cast<uint32_t>(w.engine->max_context()));
  absl::StatusOr<std::string> env = store::SignCommitment(c, ProverKey());
  ASSERT_TRUE(env.ok()) << env.status();
  s.envelope = *env;
}

// Re-signs s.commitment after a test changed it.
void Resign(Served& s) {
  absl::StatusOr<std::string> env =
      store::SignCommitment(s.commitment, ProverKey());
  ASSERT_TRUE(env.ok()) << env.status();
  s.envelope = *env;
}

// The replayed h^0..h^L of s's positions.
std::vector<std::vector<float>> Replay(const Served& s) {
  RowsTap tap(TheWorld().layers);
  kernels::Status st =
      TheWorld().engine->Forward(s.Positions(), &tap, 1, nullptr);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return std::move(tap.rows_);
}

std::vector<std::string> HashAll(const Served& s,
                                 const std::vector<std::vector<float>>& h) {
  const std::string key = s.Key();
  std::vector<std::string> out;
  const int64_t positions = static_cast<int64_t>(s.Positions().size());
  for (size_t l = 0; l < h.size(); ++l) {
    out.push_back(Str(kernels::model::HashLayerRows(
        l, h[l].data(), positions, TheWorld().width, store::AsBytes(key))));
  }
  return out;
}

// An honest prover: serves with Engine::Generate, hashing every layer with
// the key as it goes, and keeps the replay for openings.
Served Honest(const RequestSpec& spec = {}) {
  World& w = TheWorld();
  Served s;
  s.prompt = spec.prompt;
  s.seed = spec.nonce.empty()
               ? spec.seed
               : store::SeedFromNonce(store::AsBytes(spec.nonce));
  HashingTap tap(w.layers, w.width, s.Key());
  GenerationRequest req;
  req.prompt = spec.prompt;
  req.max_new_tokens = spec.max_new_tokens;
  req.ignore_eos = true;
  req.sampling.temperature = spec.temperature;
  req.sampling.top_k = spec.top_k;
  req.sampling.top_p = spec.top_p;
  req.sampling.seed = s.seed;
  req.tap = &tap;
  kernels::StatusOr<FinishedSequence> f = w.engine->Generate(req);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  s.output = f->output;
  const std::vector<std::string> served_hashes = tap.Finish();
  s.h = Replay(s);
  // The protocol's premise: the replay reproduces what serving hashed.
  EXPECT_EQ(HashAll(s, s.h), served_hashes);
  Commit(s, spec, served_hashes);
  return s;
}

// Opens what a Served prover keeps; tests make it misbehave.
class FakeOpeningSource : public OpeningSource {
 public:
  explicit FakeOpeningSource(const Served& s) : s_(s) {}

  absl::StatusOr<Opening> Open(std::string_view prover_id,
                               std::string_view request_id,
                               const std::vector<uint32_t>& layers,
                               uint64_t positions, uint64_t hidden_size,
                               absl::Time) override {
    requests.push_back(layers);
    EXPECT_EQ(prover_id, "prover-test");
    // What the commitment fixes, for the source to check the header with.
    EXPECT_EQ(positions, s_.Positions().size());
    EXPECT_EQ(hidden_size, static_cast<uint64_t>(TheWorld().width));
    if (!fail.ok()) return fail;
    if (request_id != s_.commitment.request_id()) {
      return absl::NotFoundError("no such request");
    }
    Opening o;
    v1::OpeningHeader& h = o.header;
    h.set_commitment_envelope(s_.envelope);
    h.set_salt(s_.salt);
    for (int32_t t : s_.prompt) h.add_prompt_token_ids(t);
    for (int32_t t : s_.output) h.add_output_token_ids(t);
    h.set_seed(s_.seed);
    h.set_positions(s_.Positions().size());
    h.set_hidden_size(TheWorld().width);
    for (uint32_t k : layers) {
      h.add_layers(k);
      o.layers[k] = s_.h.at(k);
    }
    if (mutate) mutate(o);
    return o;
  }

  absl::Status fail;
  std::function<void(Opening&)> mutate;
  std::vector<std::vector<uint32_t>> requests;

 private:
  const Served& s_;
};

AuditPlan Plan(std::vector<uint32_t> layers, bool all = false) {
  AuditPlan p;
  p.layers = std::move(layers);
  p.all_layers = all;
  p.audit_seed = Bytes(32, 200);
  return p;
}

AuditOutcome RunAudit(const Served& s, OpeningSource& source,
                      const AuditPlan& plan,
                      const store::KeyRing& keys = ProverKeys(),
                      absl::Duration timeout = absl::Seconds(30)) {
  ReExecutor re(*TheWorld().engine, TheWorld().model_digest);
  absl::StatusOr<AuditOutcome> out =
      re.Audit(s.envelope, 41, plan, keys, source, timeout);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  // Every verdict must be signable once the caller fills in its fields.
  v1::Verdict v = out->verdict;
  v.set_verifier_id("verifier-test");
  v.set_created_at_unix_nanos(1);
  absl::Status valid = store::ValidateVerdict(v);
  EXPECT_TRUE(valid.ok()) << valid << "\n" << v.DebugString();
  return *std::move(out);
}

AuditOutcome RunAudit(const Served& s, const AuditPlan& plan) {
  FakeOpeningSource source(s);
  return RunAudit(s, source, plan);
}

void ExpectPass(const AuditOutcome& out) {
  EXPECT_EQ(out.verdict.outcome(), v1::PASS) << out.verdict.DebugString();
  EXPECT_TRUE(out.verdict.head_checked());
}

void ExpectMismatch(const AuditOutcome& out, uint32_t layer) {
  ASSERT_EQ(out.verdict.outcome(), v1::FAIL_MISMATCH)
      << out.verdict.DebugString();
  EXPECT_EQ(out.verdict.mismatch().layer(), layer) << out.verdict.detail();
}

void ExpectOutcome(const AuditOutcome& out, v1::VerdictOutcome outcome,
                   const std::string& detail_part) {
  EXPECT_EQ(out.verdict.outcome(), outcome) << out.verdict.DebugString();
  EXPECT_NE(out.verdict.detail().find(detail_part), std::string::npos)
      << out.verdict.detail();
}

uint32_t L() { return static_cast<uint32_t>(TheWorld().layers); }

std::vector<uint32_t> Blocks(uint32_t from, uint32_t to) {
  std::vector<uint32_t> v;
  for (uint32_t l = from; l <= to; ++l) v.push_back(l);
  return v;
}

// ---------------------------------------------------------------- honest

TEST(ReExecutorTest, HonestGreedyPassesEverySingleLayerPlan) {
  const Served s = Honest();
  for (uint32_t l = 1; l <= L(); ++l) {
    FakeOpeningSource source(s);
    const AuditOutcome out = RunAudit(s, source, Plan({l}));
    ExpectPass(out);
    // h^(l-1) for the block (h^0 is recomputed, never opened), h^L for
    // the head.
    std::vector<uint32_t> want;
    if (l > 1) want.push_back(l - 1);
    want.push_back(L());
    ASSERT_EQ(source.requests.size(), 1u);
    EXPECT_EQ(source.requests[0], want) << "block " << l;
    EXPECT_EQ(out.verdict.audited_layers().size(), 1);
    EXPECT_EQ(out.verdict.audited_layers(0), l);
  }
}

TEST(ReExecutorTest, HonestVerdictDescribesTheAudit) {
  const Served s = Honest();
  const AuditOutcome out = RunAudit(s, Plan(Blocks(1, L())));
  ExpectPass(out);
  const v1::Verdict& v = out.verdict;
  EXPECT_EQ(v.request_id(), s.request_id);
  EXPECT_EQ(v.commitment_leaf_index(), 41u);
  EXPECT_EQ(v.commitment_leaf_hash(), Str(store::LeafHash(s.envelope)));
  EXPECT_EQ(v.audit_seed(), Bytes(32, 200));
  EXPECT_EQ(std::vector<uint32_t>(v.audited_layers().begin(),
                                  v.audited_layers().end()),
            Blocks(1, L()));
  EXPECT_FALSE(v.has_mismatch());
  ASSERT_TRUE(out.opening.has_value());
  EXPECT_EQ(out.opening->header.salt(), s.salt);
}

TEST(ReExecutorTest, HonestPassesWithoutBlockOneAndUnderAllLayers) {
  const Served s = Honest();
  FakeOpeningSource source(s);
  ExpectPass(RunAudit(s, source, Plan({2, 4})));
  EXPECT_EQ(source.requests.at(0), (std::vector<uint32_t>{1, 3, L()}));

  FakeOpeningSource header_only(s);
  const AuditOutcome all = RunAudit(s, header_only, Plan({}, true));
  ExpectPass(all);
  EXPECT_TRUE(header_only.requests.at(0).empty());
  EXPECT_EQ(all.verdict.audited_layers_size(), static_cast<int>(L()));
}

TEST(ReExecutorTest, HonestSampledRequestsPass) {
  RequestSpec spec;
  spec.temperature = 0.8f;
  spec.top_k = 40;
  spec.top_p = 0.9f;
  spec.seed = 12345;
  spec.max_new_tokens = 8;
  const Served s = Honest(spec);
  ExpectPass(RunAudit(s, Plan({1})));
  ExpectPass(RunAudit(s, Plan({3})));
  ExpectPass(RunAudit(s, Plan({}, true)));

  spec.nonce = "client nonce 7";
  spec.top_k = 0;
  spec.top_p = 0.95f;
  const Served n = Honest(spec);
  ExpectPass(RunAudit(n, Plan({2})));
}

TEST(ReExecutorTest, EmptyPlanStillChecksTheHead) {
  const Served s = Honest();
  FakeOpeningSource source(s);
  ExpectPass(RunAudit(s, source, Plan({})));
  EXPECT_EQ(source.requests.at(0), std::vector<uint32_t>{L()});
}

// ------------------------------------------------------- cheating provers

// A prover that commits to h^layer with one bit flipped, and opens the
// flipped rows (consistently with its commitment).
Served TamperedAt(uint32_t layer) {
  Served s = Honest();
  std::vector<float>& rows = s.h[layer];
  uint32_t bits;
  std::memcpy(&bits, &rows[3 * TheWorld().width + 5], 4);
  bits ^= 1u << 22;
  std::memcpy(&rows[3 * TheWorld().width + 5], &bits, 4);
  s.commitment.set_layer_hashes(layer, HashAll(s, s.h)[layer]);
  Resign(s);
  return s;
}

TEST(ReExecutorTest, TamperedLayerIsCaughtAtItsBlockOrTheNext) {
  for (uint32_t l = 0; l <= L(); ++l) {
    SCOPED_TRACE("tampered h^" + std::to_string(l));
    const Served s = TamperedAt(l);
    const std::string honest_hash = HashAll(s, Replay(s))[l];
    // Block l recomputed from an honest input disagrees with H_l (for
    // l = 0: the embedding, checked with block 1).
    const AuditOutcome at = RunAudit(s, Plan({std::max(l, 1u)}));
    ExpectMismatch(at, l);
    EXPECT_EQ(at.verdict.mismatch().expected(), s.commitment.layer_hashes(l));
    EXPECT_EQ(at.verdict.mismatch().got(), honest_hash);
    // Block l+1 run on the tampered (but hash-consistent) h^l disagrees
    // with the honest H_(l+1).
    if (l >= 1 && l < L()) ExpectMismatch(RunAudit(s, Plan({l + 1})), l + 1);
    // Fault localisation finds exactly l.
    ExpectMismatch(RunAudit(s, Plan({}, true)), l);
  }
}

// A prover whose model skips block `skip`: it generates and commits with
// h^skip = h^(skip-1), consistently.
Served SkippingBlock(uint32_t skip) {
  World& w = TheWorld();
  RequestSpec spec;
  Served s;
  s.prompt = spec.prompt;
  s.seed = spec.seed;
  auto chain = [&](const std::vector<int32_t>& tokens) {
    const int64_t n = tokens.size();
    std::vector<std::vector<float>> h(w.layers + 1);
    h[0].resize(n * w.width);
    EXPECT_TRUE(w.engine->Embed(tokens.data(), n, h[0].data()).ok());
    for (int64_t l = 1; l <= w.layers; ++l) {
      if (l == skip) {
        h[l] = h[l - 1];
        continue;
      }
      h[l].resize(n * w.width);
      EXPECT_TRUE(w.engine->RunBlock(l, h[l - 1].data(), n, h[l].data()).ok());
    }
    return h;
  };
  std::vector<int32_t> tokens = s.prompt;
  kernels::SamplingParams params;
  params.seed = s.seed;
  std::vector<float> logits(w.vocab);
  for (int64_t j = 0; j < spec.max_new_tokens; ++j) {
    const std::vector<std::vector<float>> h = chain(tokens);
    EXPECT_TRUE(
        w.engine
            ->RunHead(h[w.layers].data() + (tokens.size() - 1) * w.width, 1,
                      logits.data())
            .ok());
    kernels::StatusOr<int32_t> t =
        w.engine->Sample(logits.data(), params, tokens.size());
    EXPECT_TRUE(t.ok());
    s.output.push_back(*t);
    tokens.push_back(*t);
  }
  s.h = chain(s.Positions());
  Commit(s, spec, HashAll(s, s.h));
  return s;
}

TEST(ReExecutorTest, SkippedBlockIsCaughtWhenDrawnAndLocalised) {
  const uint32_t skip = 2;
  const Served s = SkippingBlock(skip);
  ExpectMismatch(RunAudit(s, Plan({skip})), skip);
  ExpectMismatch(RunAudit(s, Plan({1, skip, 4})), skip);
  ExpectMismatch(RunAudit(s, Plan({}, true)), skip);
  // Blocks other than the skipped one are consistent with the opening: an
  // audit that does not draw it passes (hence s per audit, DESIGN §6).
  ExpectPass(RunAudit(s, Plan({3})));
}

TEST(ReExecutorTest, WrongLastOutputTokenFailsTheHead) {
  Served s = Honest();
  const std::string honest_digest = s.commitment.output_digest();
  s.output.back() = (s.output.back() + 1) % TheWorld().vocab;
  // The last token is never fed back: every layer hash still holds.
  s.commitment.set_output_digest(
      Str(store::TokenDigest(store::AsBytes(s.Key()), s.output)));
  Resign(s);
  for (const AuditPlan& plan : {Plan({1}), Plan({2, 3}), Plan({}, true)}) {
    const AuditOutcome out = RunAudit(s, plan);
    ExpectMismatch(out, L() + 1);
    EXPECT_TRUE(out.verdict.head_checked());
    EXPECT_EQ(out.verdict.mismatch().expected(), s.commitment.output_digest());
    EXPECT_EQ(out.verdict.mismatch().got(), honest_digest);
  }
}

// Regression (issue 13): a prover that commits to (and opens) a NaN h^L
// for a sampled request made the head's softmax NaN, RequestAudit failed
// with INVALID_ARGUMENT and the audit stayed pending forever. The sampler
// is total (docs/determinism.md §3.11), so the audit computes and compares.
TEST(ReExecutorTest, NanHeadInputWithTemperatureIsAVerdictNotAnError) {
  RequestSpec spec;
  spec.temperature = 0.8f;
  spec.top_p = 0.9f;
  Served s = Honest(spec);
  std::fill(s.h[L()].begin(), s.h[L()].end(), std::nanf(""));
  s.commitment.set_layer_hashes(static_cast<int>(L()), HashAll(s, s.h)[L()]);
  Resign(s);
  // The head alone: the NaN logits give the greedy fallback's token 0 for
  // every position, not the honest output.
  ASSERT_NE(s.output, std::vector<int32_t>(s.output.size(), 0));
  const AuditOutcome head = RunAudit(s, Plan({1}));
  ExpectMismatch(head, L() + 1);
  EXPECT_TRUE(head.verdict.head_checked());
  // Block L, recomputed from the honest h^(L-1), is not NaN.
  ExpectMismatch(RunAudit(s, Plan({L()})), L());
  ExpectMismatch(RunAudit(s, Plan({}, true)), L());
}

// ------------------------------------------------------- bad openings

TEST(ReExecutorTest, ChangedOpeningRowsFailTheOpening) {
  const Served s = Honest();
  FakeOpeningSource source(s);
  source.mutate = [](Opening& o) { o.layers.rbegin()->second[10] += 1.0f; };
  const AuditOutcome out = RunAudit(s, source, Plan({3}));
  ExpectOutcome(out, v1::FAIL_OPENING, "layer_hashes");
  EXPECT_TRUE(out.verdict.audited_layers().empty());
  EXPECT_FALSE(out.verdict.head_checked());
  EXPECT_TRUE(out.opening.has_value());

  FakeOpeningSource short_rows(s);
  short_rows.mutate = [](Opening& o) { o.layers.begin()->second.pop_back(); };
  ExpectOutcome(RunAudit(s, short_rows, Plan({3})), v1::FAIL_OPENING, "floats");
}

TEST(ReExecutorTest, OpeningOfAnotherEnvelopeFails) {
  const Served s = Honest();
  Served other = Honest();
  other.commitment.set_created_at_unix_nanos(1700000000000000001);
  Resign(other);
  FakeOpeningSource source(s);
  source.mutate = [&](Opening& o) {
    o.header.set_commitment_envelope(other.envelope);
  };
  ExpectOutcome(RunAudit(s, source, Plan({1})), v1::FAIL_OPENING,
                "commitment_envelope");
}

TEST(ReExecutorTest, WrongSaltFailsTheOpening) {
  const Served s = Honest();
  FakeOpeningSource source(s);
  source.mutate = [](Opening& o) { o.header.set_salt(Bytes(32, 99)); };
  ExpectOutcome(RunAudit(s, source, Plan({1})), v1::FAIL_OPENING,
                "prompt_digest");
  FakeOpeningSource short_salt(s);
  short_salt.mutate = [](Opening& o) { o.header.set_salt(Bytes(31, 3)); };
  ExpectOutcome(RunAudit(s, short_salt, Plan({1})), v1::FAIL_OPENING,
                "OpeningHeader.salt: got 31 bytes");
}

TEST(ReExecutorTest, SeedNotDerivedFromTheNonceFailsTheOpening) {
  RequestSpec spec;
  spec.temperature = 1.0f;
  spec.top_p = 1.0f;
  spec.seed = 4242;  // the prover's own choice...
  Served s = Honest(spec);
  // ...while claiming the client's nonce, which fixes another seed.
  s.commitment.set_client_nonce("the client's nonce");
  Resign(s);
  ExpectOutcome(RunAudit(s, Plan({1})), v1::FAIL_OPENING,
                "SeedFromNonce(Commitment.client_nonce)");
}

TEST(ReExecutorTest, WrongSeedFailsTheOpening) {
  const Served s = Honest();
  FakeOpeningSource source(s);
  source.mutate = [](Opening& o) { o.header.set_seed(o.header.seed() + 1); };
  ExpectOutcome(RunAudit(s, source, Plan({1})), v1::FAIL_OPENING,
                "Commitment.seed_digest");
}

TEST(ReExecutorTest, CommitmentRelabelledUnderANewRequestIdFails) {
  const Served original = Honest();
  Served s = original;
  s.request_id = Bytes(16, 77);  // what the prover now claims
  s.commitment.set_request_id(s.request_id);
  Resign(s);
  // The digests were keyed with the old id; the prover cannot open the
  // relabelled commitment consistently.
  ExpectOutcome(RunAudit(s, Plan({2})), v1::FAIL_OPENING, "prompt_digest");
}

TEST(ReExecutorTest, OutOfRangeTokenIdFailsTheOpeningWithoutCrashing) {
  Served s = Honest();
  s.output[0] = static_cast<int32_t>(TheWorld().vocab + 5);  // fed back
  s.commitment.set_output_digest(
      Str(store::TokenDigest(store::AsBytes(s.Key()), s.output)));
  Resign(s);
  ExpectOutcome(RunAudit(s, Plan({1})), v1::FAIL_OPENING,
                "output_token_ids[0]: got token id");
  ExpectOutcome(RunAudit(s, Plan({}, true)), v1::FAIL_OPENING, "vocabulary");

  Served neg = Honest();
  neg.prompt[2] = -1;
  neg.commitment.set_prompt_digest(
      Str(store::TokenDigest(store::AsBytes(neg.Key()), neg.prompt)));
  Resign(neg);
  ExpectOutcome(RunAudit(neg, Plan({1})), v1::FAIL_OPENING,
                "prompt_token_ids[2]");
}

TEST(ReExecutorTest, OpeningThatLeavesOutALayerFails) {
  const Served s = Honest();
  FakeOpeningSource source(s);
  source.mutate = [](Opening& o) { o.layers.erase(o.layers.begin()); };
  ExpectOutcome(RunAudit(s, source, Plan({3})), v1::FAIL_OPENING,
                "Opening.layers");
}

TEST(ReExecutorTest, FailedOpeningsAndTimeouts) {
  const Served s = Honest();
  FakeOpeningSource refused(s);
  refused.fail = absl::NotFoundError("opening refused: NOT_FOUND");
  const AuditOutcome u = RunAudit(s, refused, Plan({1}));
  ExpectOutcome(u, v1::FAIL_OPENING, "opening refused: NOT_FOUND");
  EXPECT_FALSE(u.opening.has_value());

  FakeOpeningSource slow(s);
  slow.fail = absl::DeadlineExceededError("too slow");
  ExpectOutcome(RunAudit(s, slow, Plan({1})), v1::FAIL_TIMEOUT, "opening");

  // An opening that completes, but only after its deadline.
  FakeOpeningSource late(s);
  ExpectOutcome(RunAudit(s, late, Plan({1}), ProverKeys(),
                         absl::ZeroDuration() - absl::Seconds(1)),
                v1::FAIL_TIMEOUT, "opening");
}

// A source error in the verifier's words is the whole detail: the
// re-executor adds nothing of the prover's (and strips what is not
// printable).
TEST(ReExecutorTest, FailOpeningDetailIsTheSourcesMessageOnly) {
  const Served s = Honest();
  FakeOpeningSource source(s);
  source.fail = absl::InvalidArgumentError(
      "opening malformed: chunk 2: ActivationRows.position0: got 3, want "
      "2\x01");
  const AuditOutcome out = RunAudit(s, source, Plan({1}));
  EXPECT_EQ(out.verdict.outcome(), v1::FAIL_OPENING);
  EXPECT_EQ(out.verdict.detail(),
            "opening malformed: chunk 2: ActivationRows.position0: got 3, "
            "want 2?");
}

// Regression: an unreachable prover, or one the verifier has no address
// for, became a permanent FAIL_OPENING. They are the verifier's errors
// now: no verdict, the audit stays pending.
TEST(ReExecutorTest, OpeningsTheVerifierCannotMakeAreErrorsNotVerdicts) {
  const Served s = Honest();
  ReExecutor re(*TheWorld().engine, TheWorld().model_digest);
  FakeOpeningSource no_address(s);
  no_address.fail = OpeningUnavailableToVerifier(
      "prover \"prover-test\" is registered without an Opening address");
  absl::StatusOr<AuditOutcome> out = re.Audit(
      s.envelope, 41, Plan({1}), ProverKeys(), no_address, absl::Seconds(5));
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(out.status())) << out.status();
  EXPECT_TRUE(IsOpeningUnavailableToVerifier(out.status())) << out.status();
  EXPECT_NE(out.status().message().find("without an Opening address"),
            std::string::npos)
      << out.status();

  FakeOpeningSource unreachable(s);
  unreachable.fail = absl::UnavailableError("connection refused");
  out = re.Audit(s.envelope, 41, Plan({1}), ProverKeys(), unreachable,
                 absl::Seconds(5));
  EXPECT_TRUE(absl::IsUnavailable(out.status())) << out.status();

  // A prover reporting FAILED_PRECONDITION itself is not mistaken for the
  // verifier's problem.
  FakeOpeningSource prover_says(s);
  prover_says.fail =
      absl::FailedPreconditionError("opening refused: FAILED_PRECONDITION");
  ExpectOutcome(RunAudit(s, prover_says, Plan({1})), v1::FAIL_OPENING,
                "opening refused: FAILED_PRECONDITION");
}

// ------------------------------------------------------------- stop rule

// The first index j >= 2, before the last, of a token of `output` that
// occurs nowhere earlier in it (a stop id there stops generation at j + 1).
size_t MidNewToken(const std::vector<int32_t>& output) {
  for (size_t j = 2; j + 1 < output.size(); ++j) {
    if (std::find(output.begin(), output.begin() + j, output[j]) ==
        output.begin() + j) {
      return j;
    }
  }
  return output.size();
}

// Regression: a prover could cut an output short and claim STOP; the stop
// rule was never checked.
TEST(ReExecutorTest, OutputCutShortClaimingStopFailsTheHead) {
  const Served honest = Honest();  // 6 tokens, MAX_TOKENS
  RequestSpec spec;
  spec.finish_reason = v1::FINISH_REASON_STOP;
  spec.ignore_eos = false;
  // A stop set that none of the kept tokens is in.
  spec.stop_token_ids = {static_cast<int32_t>(TheWorld().vocab - 1)};
  Served s = honest;
  s.output.resize(3);  // the first 3 tokens, honestly generated
  for (int32_t t : s.output) ASSERT_NE(t, spec.stop_token_ids[0]);
  s.h = Replay(s);
  Commit(s, spec, HashAll(s, s.h));
  for (const AuditPlan& plan : {Plan({1}), Plan({}, true)}) {
    const AuditOutcome out = RunAudit(s, plan);
    ExpectMismatch(out, L() + 1);
    EXPECT_TRUE(out.verdict.head_checked());
    EXPECT_EQ(out.verdict.mismatch().expected(), s.commitment.output_digest());
    std::vector<int32_t> went_on = s.output;
    went_on.push_back(-1);  // generation had to go on
    EXPECT_EQ(out.verdict.mismatch().got(),
              Str(store::TokenDigest(store::AsBytes(s.Key()), went_on)));
    EXPECT_NE(out.verdict.detail().find("stop rule"), std::string::npos)
        << out.verdict.detail();
    EXPECT_NE(out.verdict.detail().find("had to go on"), std::string::npos)
        << out.verdict.detail();
  }
}

// Regression: a prover could run past a stop id (e.g. to bill more tokens)
// with a commitment that says the stop id was in force.
TEST(ReExecutorTest, OutputRunningPastAStopIdFailsTheHead) {
  const Served honest = Honest();
  const size_t j = MidNewToken(honest.output);
  ASSERT_LT(j + 1, honest.output.size()) << "no usable stop token";
  RequestSpec spec;
  spec.ignore_eos = false;
  spec.stop_token_ids = {honest.output[j]};
  Served s = honest;
  Commit(s, spec, HashAll(s, s.h));  // MAX_TOKENS, every token kept
  const AuditOutcome out = RunAudit(s, Plan({2}));
  ExpectMismatch(out, L() + 1);
  EXPECT_EQ(out.verdict.mismatch().expected(), s.commitment.output_digest());
  const std::vector<int32_t> stopped(s.output.begin(),
                                     s.output.begin() + j + 1);
  EXPECT_EQ(out.verdict.mismatch().got(),
            Str(store::TokenDigest(store::AsBytes(s.Key()), stopped)));
  EXPECT_NE(out.verdict.detail().find("had to stop after " +
                                      std::to_string(j + 1) + " of 6"),
            std::string::npos)
      << out.verdict.detail();

  // The same output with ignore_eos committed is honest.
  spec.ignore_eos = true;
  Commit(s, spec, HashAll(s, s.h));
  ExpectPass(RunAudit(s, Plan({2})));
}

TEST(ReExecutorTest, StopIdLastWithAnotherFinishReasonFailsTheHead) {
  const Served honest = Honest();
  RequestSpec spec;
  spec.ignore_eos = false;
  // The last token is a stop id (and no earlier one is), yet MAX_TOKENS.
  spec.stop_token_ids = {honest.output.back()};
  if (std::find(honest.output.begin(), honest.output.end() - 1,
                honest.output.back()) != honest.output.end() - 1) {
    GTEST_SKIP() << "the last token also occurs earlier";
  }
  Served s = honest;
  Commit(s, spec, HashAll(s, s.h));
  const AuditOutcome out = RunAudit(s, Plan({1}));
  ExpectMismatch(out, L() + 1);
  std::vector<int32_t> other = s.output;
  other.push_back(-2);  // another finish reason
  EXPECT_EQ(out.verdict.mismatch().got(),
            Str(store::TokenDigest(store::AsBytes(s.Key()), other)));

  spec.finish_reason = v1::FINISH_REASON_STOP;
  Commit(s, spec, HashAll(s, s.h));
  ExpectPass(RunAudit(s, Plan({1})));
}

// ---------------------------------------------------- signature and model

TEST(ReExecutorTest, UnknownSignerFailsTheSignature) {
  const Served s = Honest();
  FakeOpeningSource source(s);
  const AuditOutcome out = RunAudit(s, source, Plan({1}), store::KeyRing());
  ExpectOutcome(out, v1::FAIL_SIGNATURE, "envelope");
  EXPECT_EQ(out.verdict.request_id(), s.request_id);
  EXPECT_TRUE(source.requests.empty());
  EXPECT_FALSE(out.opening.has_value());
}

TEST(ReExecutorTest, CorruptedSignatureFailsTheSignature) {
  Served s = Honest();
  v1::Envelope e;
  ASSERT_TRUE(e.ParseFromString(s.envelope));
  e.mutable_signatures(0)->mutable_sig()->at(5) ^= 0x10;
  s.envelope = e.SerializeAsString();
  FakeOpeningSource source(s);
  const AuditOutcome out = RunAudit(s, source, Plan({1}));
  EXPECT_EQ(out.verdict.outcome(), v1::FAIL_SIGNATURE);
  EXPECT_EQ(out.verdict.request_id(), s.request_id);
  EXPECT_TRUE(source.requests.empty());
}

TEST(ReExecutorTest, OtherModelFailsTheModelCheck) {
  Served s = Honest();
  s.commitment.set_model_digest(std::string(32, '\xab'));
  Resign(s);
  FakeOpeningSource source(s);
  ExpectOutcome(RunAudit(s, source, Plan({1})), v1::FAIL_MODEL, "model_digest");
  EXPECT_TRUE(source.requests.empty());

  Served wide = Honest();
  wide.commitment.set_hidden_size(TheWorld().width * 2);
  Resign(wide);
  ExpectOutcome(RunAudit(wide, Plan({1})), v1::FAIL_MODEL,
                "Commitment.hidden_size: got 256, want 128");
}

// A prover cannot claim a context this model does not have (its stop rule
// could then never hold CONTEXT_FULL to account).
TEST(ReExecutorTest, ContextBeyondTheModelFailsTheModelCheck) {
  Served s = Honest();
  const int64_t max_positions = TheWorld().synth->model->config().max_positions;
  s.commitment.set_max_context(static_cast<uint32_t>(max_positions + 1));
  Resign(s);
  FakeOpeningSource source(s);
  ExpectOutcome(RunAudit(s, source, Plan({1})), v1::FAIL_MODEL,
                "Commitment.max_context: got " +
                    std::to_string(max_positions + 1) +
                    ", want <= " + std::to_string(max_positions) +
                    " (the model's max_positions)");
  EXPECT_TRUE(source.requests.empty());
}

TEST(ReExecutorTest, BadPlansAreTheVerifiersError) {
  const Served s = Honest();
  ReExecutor re(*TheWorld().engine, TheWorld().model_digest);
  FakeOpeningSource source(s);
  for (const AuditPlan& plan : {Plan({2, 2}), Plan({0}), Plan({L() + 1})}) {
    absl::StatusOr<AuditOutcome> out =
        re.Audit(s.envelope, 0, plan, ProverKeys(), source, absl::Seconds(1));
    EXPECT_TRUE(absl::IsInvalidArgument(out.status())) << out.status();
    EXPECT_NE(out.status().message().find("AuditPlan.layers"),
              std::string::npos);
  }
  AuditPlan no_seed = Plan({1});
  no_seed.audit_seed = "short";
  EXPECT_TRUE(absl::IsInvalidArgument(
      re.Audit(s.envelope, 0, no_seed, ProverKeys(), source, absl::Seconds(1))
          .status()));
  EXPECT_TRUE(source.requests.empty());
}

}  // namespace
}  // namespace layerproof::check
