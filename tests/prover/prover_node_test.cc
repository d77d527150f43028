// ProverNode end to end over gRPC on 127.0.0.1, with an in-process fake Log
// service (a MemoryLog behind store::SubmitEnvelope): generation equals the
// engine's, receipts verify, promises stand in while the log is down and
// are redeemed once it is up (also after a restart), and openings hash to
// the committed layer hashes.
#include "prover/prover_node.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <thread>

#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "kernels/dispatch.h"
#include "kernels/model/layer_hash.h"
#include "layerproof/v1/inference.grpc.pb.h"
#include "layerproof/v1/log.grpc.pb.h"
#include "layerproof/v1/opening.grpc.pb.h"
#include "store/checkpoint.h"
#include "store/commitment.h"
#include "store/envelope.h"
#include "store/memory_log.h"
#include "store/merkle.h"
#include "store/rpc/server.h"
#include "store/submit.h"
#include "tests/model/engine_fixture.h"
#include "tests/store/temp_dir.h"

namespace layerproof::prover {
namespace {

namespace model = kernels::model;

// Log.Submit over a MemoryLog; every other method is unimplemented.
class FakeLog final : public v1::Log::CallbackService {
 public:
  FakeLog(store::KeyRing keys, std::shared_ptr<store::CheckpointSigner> signer)
      : keys_(std::move(keys)) {
    store::LogOptions o;
    o.origin = "test.layerproof/log";
    o.signer = signer;
    log_ = *store::MemoryLog::Create(o);
  }
  grpc::ServerUnaryReactor* Submit(grpc::CallbackServerContext* context,
                                   const v1::SubmitRequest* request,
                                   v1::SubmitResponse* response) override {
    absl::MutexLock lock(&mu_);
    ++submit_calls_;
    std::vector<uint64_t> indices;
    for (const std::string& e : request->envelopes()) {
      v1::SubmitResult* r = response->add_results();
      auto appended = store::SubmitEnvelope(
          *log_, e, keys_, store::kCommitmentPayloadType, 1 << 20);
      if (!appended.ok()) {
        r->set_code(static_cast<int>(appended.status().code()));
        r->set_message(std::string(appended.status().message()));
        indices.push_back(UINT64_MAX);
        continue;
      }
      r->set_leaf_index(appended->index);
      r->set_duplicate(appended->duplicate);
      indices.push_back(appended->index);
    }
    const std::string note = *log_->LatestCheckpoint();
    const uint64_t size = log_->Size();
    response->set_checkpoint(note);
    response->set_tree_size(size);
    for (size_t i = 0; i < indices.size(); ++i) {
      if (indices[i] == UINT64_MAX) continue;
      auto proof = log_->InclusionProof(indices[i], size);
      if (!proof.ok()) continue;
      for (const store::Sha256Hash& h : *proof) {
        response->mutable_results(int(i))->add_inclusion_proof(
            std::string(reinterpret_cast<const char*>(h.data()), h.size()));
      }
    }
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  uint64_t size() const { return log_->Size(); }
  int submit_calls() const {
    absl::MutexLock lock(&mu_);
    return submit_calls_;
  }

 private:
  store::KeyRing keys_;
  std::unique_ptr<store::Log> log_;
  mutable absl::Mutex mu_;
  int submit_calls_ ABSL_GUARDED_BY(mu_) = 0;
};

bool PollUntil(const std::function<bool()>& done,
               absl::Duration timeout = absl::Seconds(15)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

std::string Str(const kernels::Sha256Digest& d) {
  return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

class ProverNodeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    synth_ = model::testing::MakeSynthModel("prover_node", false).release();
    executor_ = model::MakeHostExecutor(*kernels::DefaultBackend()).release();
    ref_executor_ =
        model::MakeHostExecutor(*kernels::DefaultBackend()).release();
  }
  static void TearDownTestSuite() {
    delete ref_executor_;
    delete executor_;
    delete synth_;
  }

  void SetUp() override {
    ASSERT_NE(synth_->model, nullptr);
    key_ = std::make_shared<store::Ed25519PrivateKey>(
        *store::Ed25519PrivateKey::Generate());
    keys_.Add(key_->public_key());
    auto signer = store::CheckpointSigner::Create(
        "test-log", *store::Ed25519PrivateKey::Generate());
    ASSERT_TRUE(signer.ok());
    signer_ = std::make_shared<store::CheckpointSigner>(*std::move(signer));
  }

  void TearDown() override { (void)StopProver(); }

  // Starts the fake log on `port` (0: any); returns its port.
  // `accept_prover`: false registers no prover key, so the log refuses
  // every commitment with PERMISSION_DENIED.
  int StartLog(int port = 0, bool accept_prover = true) {
    fake_log_ = std::make_unique<FakeLog>(
        accept_prover ? keys_ : store::KeyRing(), signer_);
    rpc::ServerConfig config;
    config.listen = "127.0.0.1:" + std::to_string(port);
    config.tls.insecure = true;
    auto server = rpc::StartServer(config, {fake_log_.get()});
    EXPECT_TRUE(server.ok()) << server.status();
    log_server_ = *std::move(server);
    return log_server_->port();
  }
  void StopLog() {
    if (log_server_) log_server_->Shutdown(std::chrono::milliseconds(0));
    log_server_.reset();
  }

  void StartProver(int log_port, absl::Duration receipt_wait,
                   std::shared_ptr<ProverFaults> faults = nullptr) {
    ProverOptions o;
    o.prover_id = "prover-test";
    o.model = synth_->model.get();
    o.executor = executor_;
    o.key = key_;
    o.journal_dir = journal_dir_.path();
    o.verifier_address = "127.0.0.1:" + std::to_string(log_port);
    o.verifier_tls.insecure = true;
    o.log_origin = "test.layerproof/log";
    o.receipt_wait = receipt_wait;
    o.max_opening_bytes = 16 << 10;
    o.insecure = true;
    o.faults = std::move(faults);
    auto node = ProverNode::Create(std::move(o));
    ASSERT_TRUE(node.ok()) << node.status();
    node_ = *std::move(node);
    rpc::ServerConfig config;
    config.tls.insecure = true;
    auto server = rpc::StartServer(config, node_->services());
    ASSERT_TRUE(server.ok()) << server.status();
    prover_server_ = *std::move(server);
    auto channel = grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(prover_server_->port()),
        grpc::InsecureChannelCredentials());
    inference_ = v1::Inference::NewStub(channel);
    opening_ = v1::Opening::NewStub(channel);
  }
  absl::Status StopProver(absl::Duration grace = absl::Seconds(2)) {
    absl::Status s;
    if (node_) s = node_->Shutdown(absl::Now() + grace);
    if (prover_server_) prover_server_->Shutdown(std::chrono::milliseconds(0));
    prover_server_.reset();
    node_.reset();
    return s;
  }

  static v1::GenerateRequest Request() {
    v1::GenerateRequest r;
    for (int32_t id : {1, 50, 300, 7, 900}) r.mutable_token_ids()->add_ids(id);
    r.mutable_sampling()->set_temperature(0.8f);
    r.mutable_sampling()->set_top_k(40);
    r.mutable_sampling()->set_top_p(0.95f);
    r.set_seed(1234);
    r.set_max_tokens(6);
    r.set_ignore_eos(true);
    return r;
  }

  grpc::Status Generate(const v1::GenerateRequest& r,
                        v1::GenerateResponse* out) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(30));
    return inference_->Generate(&ctx, r, out);
  }

  // The commitment of `response`, verified under the prover's key.
  v1::Commitment CommitmentOf(const v1::GenerateResponse& response) {
    auto verified =
        store::VerifyEnvelope(response.commitment_envelope(), keys_,
                              store::kCommitmentPayloadType, 1 << 20);
    EXPECT_TRUE(verified.ok()) << verified.status();
    auto c = store::ParseCommitment(verified->payload);
    EXPECT_TRUE(c.ok()) << c.status();
    return *c;
  }

  void ExpectInclusionVerifies(const std::string& envelope,
                               const v1::LogInclusion& inclusion) {
    store::CheckpointVerifier verifier("test-log", signer_->public_key());
    auto checkpoint = verifier.Verify(inclusion.checkpoint());
    ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
    EXPECT_EQ(checkpoint->size, inclusion.tree_size());
    std::vector<store::Sha256Hash> proof;
    for (const std::string& h : inclusion.inclusion_proof()) {
      store::Sha256Hash x;
      ASSERT_EQ(h.size(), 32u);
      std::copy(h.begin(), h.end(), x.begin());
      proof.push_back(x);
    }
    EXPECT_TRUE(store::VerifyInclusion(
                    store::LeafHash(envelope), inclusion.leaf_index(),
                    inclusion.tree_size(), proof, checkpoint->root)
                    .ok());
  }

  static model::testing::SynthModel* synth_;
  static model::Executor* executor_;
  static model::Executor* ref_executor_;
  std::shared_ptr<store::Ed25519PrivateKey> key_;
  store::KeyRing keys_;
  std::shared_ptr<store::CheckpointSigner> signer_;
  store::fixture::TempDir journal_dir_{"lp_prover_journal"};
  std::unique_ptr<FakeLog> fake_log_;
  std::unique_ptr<rpc::RunningServer> log_server_;
  std::unique_ptr<ProverNode> node_;
  std::unique_ptr<rpc::RunningServer> prover_server_;
  std::unique_ptr<v1::Inference::Stub> inference_;
  std::unique_ptr<v1::Opening::Stub> opening_;
};

model::testing::SynthModel* ProverNodeTest::synth_ = nullptr;
model::Executor* ProverNodeTest::executor_ = nullptr;
model::Executor* ProverNodeTest::ref_executor_ = nullptr;

TEST_F(ProverNodeTest, GenerateMatchesEngineWithVerifiableReceipt) {
  const int port = StartLog();
  StartProver(port, absl::Seconds(10));
  v1::GenerateResponse response;
  const v1::GenerateRequest request = Request();
  grpc::Status s = Generate(request, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();

  auto engine = model::Engine::Create(*synth_->model, ref_executor_);
  ASSERT_TRUE(engine.ok());
  model::GenerationRequest g;
  g.prompt = {1, 50, 300, 7, 900};
  g.sampling = {0.8f, 40, 0.95f, 1234};
  g.max_new_tokens = 6;
  g.ignore_eos = true;
  auto expected = (*engine)->Generate(g);
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(std::vector<int32_t>(response.output_token_ids().begin(),
                                 response.output_token_ids().end()),
            expected->output);
  EXPECT_EQ(response.seed(), 1234u);
  EXPECT_EQ(response.finish_reason(), v1::FINISH_REASON_MAX_TOKENS);

  const v1::Commitment c = CommitmentOf(response);
  const std::string key = store::DigestKey(
      store::AsBytes(response.salt()), store::AsBytes(response.request_id()));
  const auto digest = [&](const std::vector<int32_t>& ids) {
    auto h = store::TokenDigest(store::AsBytes(key), ids);
    return std::string(reinterpret_cast<const char*>(h.data()), h.size());
  };
  EXPECT_EQ(c.request_id(), response.request_id());
  EXPECT_EQ(c.output_digest(), digest(expected->output));
  EXPECT_EQ(c.prompt_digest(), digest(g.prompt));
  EXPECT_EQ(c.output_tokens(), 6u);

  ASSERT_TRUE(response.receipt().has_inclusion());
  ExpectInclusionVerifies(response.commitment_envelope(),
                          response.receipt().inclusion());
  EXPECT_EQ(fake_log_->size(), 1u);

  v1::ModelInfoResponse info;
  grpc::ClientContext ctx;
  ASSERT_TRUE(inference_->ModelInfo(&ctx, {}, &info).ok());
  EXPECT_EQ(info.num_layers(), uint32_t(synth_->model->config().num_layers));
  EXPECT_EQ(info.model_digest(), c.model_digest());
}

TEST_F(ProverNodeTest, StreamingDeliversTheSameTokensAsUnary) {
  const int port = StartLog();
  StartProver(port, absl::Seconds(10));
  v1::GenerateResponse unary;
  ASSERT_TRUE(Generate(Request(), &unary).ok());

  grpc::ClientContext ctx;
  auto reader = inference_->GenerateStream(&ctx, Request());
  std::vector<int32_t> streamed;
  v1::GenerateEvent event;
  v1::GenerateResponse done;
  int done_events = 0;
  while (reader->Read(&event)) {
    if (event.has_tokens()) {
      for (int32_t t : event.tokens().token_ids()) streamed.push_back(t);
    } else if (event.has_done()) {
      done = event.done();
      ++done_events;
    }
  }
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_EQ(done_events, 1);
  const std::vector<int32_t> expected(unary.output_token_ids().begin(),
                                      unary.output_token_ids().end());
  EXPECT_EQ(streamed, expected);
  EXPECT_EQ(std::vector<int32_t>(done.output_token_ids().begin(),
                                 done.output_token_ids().end()),
            expected);
  EXPECT_NE(done.request_id(), unary.request_id());
  EXPECT_TRUE(done.receipt().has_inclusion());
}

TEST_F(ProverNodeTest, OpeningHashesToTheCommittedLayerHashes) {
  const int port = StartLog();
  StartProver(port, absl::Seconds(10));
  v1::GenerateResponse response;
  ASSERT_TRUE(Generate(Request(), &response).ok());
  const v1::Commitment c = CommitmentOf(response);
  const int64_t hidden = synth_->model->config().hidden_size;
  const std::string key = store::DigestKey(
      store::AsBytes(response.salt()), store::AsBytes(response.request_id()));

  v1::OpenRequest open;
  open.set_request_id(response.request_id());
  for (uint32_t k : {0u, 2u, 4u}) open.add_layers(k);
  grpc::ClientContext ctx;
  auto reader = opening_->Open(&ctx, open);
  v1::OpenChunk chunk;
  ASSERT_TRUE(reader->Read(&chunk));
  ASSERT_TRUE(chunk.has_header());
  const v1::OpeningHeader header = chunk.header();
  EXPECT_EQ(header.commitment_envelope(), response.commitment_envelope());
  EXPECT_EQ(header.salt(), response.salt());
  EXPECT_EQ(header.seed(), 1234u);
  EXPECT_EQ(header.positions(), 5u + 6u - 1u);
  EXPECT_EQ(header.hidden_size(), uint32_t(hidden));
  std::map<uint32_t, std::vector<float>> rows;
  while (reader->Read(&chunk)) {
    ASSERT_TRUE(chunk.has_rows());
    std::vector<float>& v = rows[chunk.rows().layer()];
    EXPECT_EQ(int64_t(v.size()), int64_t(chunk.rows().position0()) * hidden);
    const std::string& data = chunk.rows().data();
    const float* f = reinterpret_cast<const float*>(data.data());
    v.insert(v.end(), f, f + data.size() / sizeof(float));
  }
  ASSERT_TRUE(reader->Finish().ok());
  ASSERT_EQ(rows.size(), 3u);
  for (auto& [layer, v] : rows) {
    ASSERT_EQ(int64_t(v.size()), int64_t(header.positions()) * hidden);
    EXPECT_EQ(Str(model::HashLayerRows(layer, v.data(), header.positions(),
                                       hidden, store::AsBytes(key))),
              c.layer_hashes(int(layer)))
        << "layer " << layer;
  }

  // Limits and validation.
  v1::OpenRequest too_big = open;
  too_big.clear_layers();
  for (uint32_t k = 0; k <= 4; ++k) too_big.add_layers(k);
  grpc::ClientContext ctx2;
  auto r2 = opening_->Open(&ctx2, too_big);
  while (r2->Read(&chunk)) {
  }
  EXPECT_EQ(r2->Finish().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  v1::OpenRequest unknown;
  unknown.set_request_id(std::string(16, 'q'));
  grpc::ClientContext ctx3;
  auto r3 = opening_->Open(&ctx3, unknown);
  while (r3->Read(&chunk)) {
  }
  EXPECT_EQ(r3->Finish().error_code(), grpc::StatusCode::NOT_FOUND);
  v1::OpenRequest bad = open;
  bad.add_layers(1);
  grpc::ClientContext ctx4;
  auto r4 = opening_->Open(&ctx4, bad);
  while (r4->Read(&chunk)) {
  }
  const grpc::Status s4 = r4->Finish();
  EXPECT_EQ(s4.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s4.error_message(),
            "OpenRequest.layers[3]: got 1 after 4, want strictly ascending");
}

TEST_F(ProverNodeTest, PromiseWhileLogIsDownThenInclusionAfterRestart) {
  const int port = StartLog();
  StopLog();
  StartProver(port, absl::Milliseconds(200));
  v1::GenerateResponse response;
  ASSERT_TRUE(Generate(Request(), &response).ok());
  ASSERT_TRUE(response.receipt().has_promise_envelope());
  auto verified =
      store::VerifyEnvelope(response.receipt().promise_envelope(), keys_,
                            store::kSubmissionPromisePayloadType, 1 << 20);
  ASSERT_TRUE(verified.ok()) << verified.status();
  v1::SubmissionPromise promise;
  ASSERT_TRUE(promise.ParseFromString(verified->payload));
  EXPECT_EQ(promise.request_id(), response.request_id());
  EXPECT_EQ(promise.commitment_leaf_hash(),
            Str(store::LeafHash(response.commitment_envelope())));
  EXPECT_EQ(promise.prover_id(), "prover-test");
  EXPECT_EQ(promise.log_origin(), "test.layerproof/log");
  EXPECT_GE(node_->pending_submissions(), 1u);

  // A restart while the log is down keeps the commitment pending.
  EXPECT_EQ(StopProver(absl::Milliseconds(300)).code(),
            absl::StatusCode::kDeadlineExceeded);
  StartProver(port, absl::Milliseconds(200));
  v1::GetCommitmentRequest get;
  get.set_request_id(response.request_id());
  v1::GetCommitmentResponse got;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(opening_->GetCommitment(&ctx, get, &got).ok());
    EXPECT_EQ(got.commitment_envelope(), response.commitment_envelope());
    EXPECT_FALSE(got.has_inclusion());
  }
  StartLog(port);
  ASSERT_TRUE(PollUntil([&] {
    grpc::ClientContext ctx;
    return opening_->GetCommitment(&ctx, get, &got).ok() && got.has_inclusion();
  }));
  ExpectInclusionVerifies(response.commitment_envelope(), got.inclusion());
  EXPECT_EQ(fake_log_->size(), 1u);
  EXPECT_TRUE(PollUntil([&] { return node_->pending_submissions() == 0; }));
}

class StallingFaults : public ProverFaults {
 public:
  bool StallOpenings() override { return true; }
};

TEST_F(ProverNodeTest, StalledOpeningEndsAtTheCallDeadline) {
  const int port = StartLog();
  StartProver(port, absl::Seconds(10), std::make_shared<StallingFaults>());
  v1::GenerateResponse response;
  ASSERT_TRUE(Generate(Request(), &response).ok());
  v1::OpenRequest open;
  open.set_request_id(response.request_id());
  open.add_layers(4);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(300));
  auto reader = opening_->Open(&ctx, open);
  v1::OpenChunk chunk;
  EXPECT_FALSE(reader->Read(&chunk));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
}

// Adds 1 to the first value of h^2 at every position: a consistent cheater
// commits to and opens the same tampered rows.
class LayerTwoTamper : public RowsTamper {
 public:
  void Tamper(int64_t layer, int64_t, float* rows, int64_t n,
              int64_t width) override {
    if (layer != 2) return;
    for (int64_t i = 0; i < n; ++i) rows[i * width] += 1.0f;
  }
};

class CheatingFaults : public ProverFaults {
 public:
  explicit CheatingFaults(bool tamper_opened) : tamper_opened_(tamper_opened) {}
  std::unique_ptr<RowsTamper> NewRowsTamper() override {
    return std::make_unique<LayerTwoTamper>();
  }
  void TamperOpenedRows(int64_t layer, int64_t, float* rows, int64_t,
                        int64_t) override {
    if (tamper_opened_ && layer == 3) rows[0] = -rows[0] - 1.0f;
  }

 private:
  bool tamper_opened_;
};

// Opens `layers` of `response` and returns whether each hashes to its
// committed H_k.
std::map<uint32_t, bool> OpenedLayersMatch(
    v1::Opening::Stub& opening, const v1::GenerateResponse& response,
    const v1::Commitment& c, const std::vector<uint32_t>& layers) {
  v1::OpenRequest open;
  open.set_request_id(response.request_id());
  for (uint32_t k : layers) open.add_layers(k);
  grpc::ClientContext ctx;
  auto reader = opening.Open(&ctx, open);
  v1::OpenChunk chunk;
  std::map<uint32_t, std::vector<float>> rows;
  uint32_t positions = 0;
  while (reader->Read(&chunk)) {
    if (chunk.has_header()) positions = chunk.header().positions();
    if (!chunk.has_rows()) continue;
    const std::string& data = chunk.rows().data();
    const float* f = reinterpret_cast<const float*>(data.data());
    auto& v = rows[chunk.rows().layer()];
    v.insert(v.end(), f, f + data.size() / sizeof(float));
  }
  EXPECT_TRUE(reader->Finish().ok());
  const std::string key = store::DigestKey(
      store::AsBytes(response.salt()), store::AsBytes(response.request_id()));
  std::map<uint32_t, bool> out;
  for (auto& [layer, v] : rows) {
    out[layer] = Str(model::HashLayerRows(
                     layer, v.data(), positions, c.hidden_size(),
                     store::AsBytes(key))) == c.layer_hashes(int(layer));
  }
  return out;
}

TEST_F(ProverNodeTest, ConsistentCheaterOpensWhatItCommitted) {
  const int port = StartLog();
  StartProver(port, absl::Seconds(10), std::make_shared<CheatingFaults>(false));
  v1::GenerateResponse response;
  ASSERT_TRUE(Generate(Request(), &response).ok());
  const v1::Commitment c = CommitmentOf(response);
  const std::map<uint32_t, bool> expected = {{1, true}, {2, true}, {3, true}};
  EXPECT_EQ(OpenedLayersMatch(*opening_, response, c, {1, 2, 3}), expected);
}

TEST_F(ProverNodeTest, TamperedOpenedRowsNoLongerMatch) {
  const int port = StartLog();
  StartProver(port, absl::Seconds(10), std::make_shared<CheatingFaults>(true));
  v1::GenerateResponse response;
  ASSERT_TRUE(Generate(Request(), &response).ok());
  const v1::Commitment c = CommitmentOf(response);
  const std::map<uint32_t, bool> expected = {{2, true}, {3, false}};
  EXPECT_EQ(OpenedLayersMatch(*opening_, response, c, {2, 3}), expected);
}

TEST_F(ProverNodeTest, RefusedCommitmentIsJournaledAndNotRetried) {
  const int port = StartLog(0, /*accept_prover=*/false);
  StartProver(port, absl::Seconds(10));
  v1::GenerateResponse response;
  ASSERT_TRUE(Generate(Request(), &response).ok());
  EXPECT_EQ(response.receipt().kind_case(), v1::Receipt::KIND_NOT_SET);
  EXPECT_EQ(node_->pending_submissions(), 0u);
  EXPECT_EQ(fake_log_->submit_calls(), 1);
  EXPECT_EQ(fake_log_->size(), 0u);
  // Still journaled: GetCommitment answers, without an inclusion.
  v1::GetCommitmentRequest get;
  get.set_request_id(response.request_id());
  v1::GetCommitmentResponse got;
  grpc::ClientContext ctx;
  ASSERT_TRUE(opening_->GetCommitment(&ctx, get, &got).ok());
  EXPECT_EQ(got.commitment_envelope(), response.commitment_envelope());
  EXPECT_FALSE(got.has_inclusion());
  // A restart does not resubmit it.
  ASSERT_TRUE(StopProver().ok());
  StartProver(port, absl::Seconds(10));
  EXPECT_EQ(node_->pending_submissions(), 0u);
  EXPECT_EQ(fake_log_->submit_calls(), 1);
}

}  // namespace
}  // namespace layerproof::prover
