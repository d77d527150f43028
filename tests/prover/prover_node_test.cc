// ProverNode end to end over gRPC on 127.0.0.1, with an in-process fake Log
// service (a MemoryLog behind store::SubmitEnvelope): generation equals the
// engine's, receipts verify, promises stand in while the log is down and
// are redeemed once it is up (also after a restart), openings hash to the
// committed layer hashes (also after Shutdown), commitments carry the stop
// rule, the sweep keeps what is pending, a slow log does not hold receipts,
// and concurrent requests share engine steps.
#include "prover/prover_node.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <thread>

#include "absl/synchronization/notification.h"
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
#include "rpc/server.h"
#include "store/submit.h"
#include "tests/model/engine_fixture.h"
#include "tests/store/temp_dir.h"

namespace layerproof::prover {
namespace {

namespace model = kernels::model;

// Log.Submit and Log.GetConsistencyProof over a MemoryLog; every other
// method is unimplemented. A test may have it forge the checkpoints it
// sends (set_checkpoint_forgery).
class FakeLog final : public v1::Log::CallbackService {
 public:
  FakeLog(store::KeyRing keys, std::shared_ptr<store::CheckpointSigner> signer)
      : keys_(std::move(keys)), signer_(std::move(signer)) {
    store::LogOptions o;
    o.origin = "test.layerproof/log";
    o.signer = signer_;
    log_ = *store::MemoryLog::Create(o);
  }
  // Replaces the tree by a fork under the same key: its first leaf is not
  // the one this log held, so its later checkpoints are valid notes with
  // valid inclusion proofs, yet not consistent with the earlier ones.
  void Fork() {
    absl::MutexLock lock(&mu_);
    store::LogOptions o;
    o.origin = "test.layerproof/log";
    o.signer = signer_;
    log_ = *store::MemoryLog::Create(o);
    EXPECT_TRUE(log_->Append("a forked first entry").ok());
  }
  grpc::ServerUnaryReactor* Submit(grpc::CallbackServerContext* context,
                                   const v1::SubmitRequest* request,
                                   v1::SubmitResponse* response) override {
    {
      // A slow log: hold the call for submit_delay, or until released.
      absl::MutexLock lock(&block_mu_);
      ++submit_started_;
      block_mu_.AwaitWithTimeout(absl::Condition(&released_), submit_delay_);
    }
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
    std::string note = *log_->LatestCheckpoint();
    const uint64_t size = log_->Size();
    if (forge_) {
      store::Checkpoint cp;
      cp.origin = "test.layerproof/log";
      cp.size = size;
      cp.root = *log_->Root(size);
      note = forge_(cp);
    }
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
  grpc::ServerUnaryReactor* GetConsistencyProof(
      grpc::CallbackServerContext* context,
      const v1::GetConsistencyProofRequest* request,
      v1::GetConsistencyProofResponse* response) override {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    absl::MutexLock lock(&mu_);
    auto proof =
        log_->ConsistencyProof(request->old_size(), request->new_size());
    if (!proof.ok()) {
      reactor->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                   std::string(proof.status().message())));
      return reactor;
    }
    for (const store::Sha256Hash& h : *proof) {
      response->add_proof(
          std::string(reinterpret_cast<const char*>(h.data()), h.size()));
    }
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  // Submit answers with forge(the true checkpoint) as its note; null: the
  // log's own. Set before the prover starts submitting.
  void set_checkpoint_forgery(
      std::function<std::string(store::Checkpoint)> forge) {
    absl::MutexLock lock(&mu_);
    forge_ = std::move(forge);
  }
  uint64_t size() const { return log_->Size(); }
  int submit_calls() const {
    absl::MutexLock lock(&mu_);
    return submit_calls_;
  }
  // Submit calls that arrived (answered or still held).
  int submit_started() const {
    absl::MutexLock lock(&block_mu_);
    return submit_started_;
  }
  // Every Submit waits `delay` (or until Release) before answering.
  void set_submit_delay(absl::Duration delay) {
    absl::MutexLock lock(&block_mu_);
    submit_delay_ = delay;
  }
  void Release() {
    absl::MutexLock lock(&block_mu_);
    released_ = true;
  }

 private:
  mutable absl::Mutex block_mu_;
  absl::Duration submit_delay_ ABSL_GUARDED_BY(block_mu_) =
      absl::ZeroDuration();
  bool released_ ABSL_GUARDED_BY(block_mu_) = false;
  int submit_started_ ABSL_GUARDED_BY(block_mu_) = 0;
  store::KeyRing keys_;
  const std::shared_ptr<store::CheckpointSigner> signer_;
  std::unique_ptr<store::Log> log_;
  mutable absl::Mutex mu_;
  int submit_calls_ ABSL_GUARDED_BY(mu_) = 0;
  std::function<std::string(store::Checkpoint)> forge_ ABSL_GUARDED_BY(mu_);
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

  void TearDown() override {
    if (fake_log_) fake_log_->Release();
    (void)StopProver();
  }

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
    o.log_key = std::make_shared<const store::CheckpointVerifier>(
        "test-log", signer_->public_key());
    o.log_origin = "test.layerproof/log";
    o.receipt_wait = receipt_wait;
    o.max_opening_bytes = 16 << 10;
    o.insecure = true;
    o.faults = std::move(faults);
    if (tweak_options_) tweak_options_(o);
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
  // Applied to the options of every StartProver.
  std::function<void(ProverOptions&)> tweak_options_;
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

// Regression (issue 13, item 4): the prover parsed only the note body of
// the log's checkpoints, so a forged checkpoint was journaled and handed to
// clients. Now a checkpoint signed by another key, or one not consistent
// with the last verified checkpoint (a forked log signed by the right key),
// reaches no receipt and no journal entry; the commitment stays pending and
// is included once the log sends a true checkpoint.
TEST_F(ProverNodeTest, ForgedOrForkedCheckpointsNeverReachAReceipt) {
  StartLog();
  StartProver(log_server_->port(), absl::Milliseconds(500));
  v1::GenerateResponse first;
  ASSERT_TRUE(Generate(Request(), &first).ok());
  ASSERT_TRUE(first.receipt().has_inclusion());  // tree size 1, verified

  auto other = store::CheckpointSigner::Create(
      "test-log", *store::Ed25519PrivateKey::Generate());
  ASSERT_TRUE(other.ok());
  const auto forger =
      std::make_shared<store::CheckpointSigner>(*std::move(other));
  const auto true_signer = signer_;
  struct Forgery {
    const char* what;
    std::function<std::string(store::Checkpoint)> forge;
  };
  const Forgery forgeries[] = {
      {"another key",
       [forger](store::Checkpoint cp) { return *forger->Sign(cp); }},
      {"a flipped root under the log's key",
       [true_signer](store::Checkpoint cp) {
         cp.root[0] ^= 1;
         return *true_signer->Sign(cp);
       }},
  };
  for (const Forgery& f : forgeries) {
    SCOPED_TRACE(f.what);
    fake_log_->set_checkpoint_forgery(f.forge);
    v1::GenerateRequest request = Request();
    request.set_seed(request.seed() + fake_log_->size());
    v1::GenerateResponse response;
    ASSERT_TRUE(Generate(request, &response).ok());
    // Logged, but the answer carried a bad checkpoint: only a promise.
    EXPECT_FALSE(response.receipt().has_inclusion());
    EXPECT_TRUE(response.receipt().has_promise_envelope());
    v1::GetCommitmentRequest get;
    get.set_request_id(response.request_id());
    v1::GetCommitmentResponse got;
    {
      grpc::ClientContext ctx;
      ASSERT_TRUE(opening_->GetCommitment(&ctx, get, &got).ok());
      EXPECT_FALSE(got.has_inclusion());
    }
    EXPECT_GE(node_->pending_submissions(), 1u);
    // The log mends its ways: the retried submission is included, under
    // the true key.
    fake_log_->set_checkpoint_forgery(nullptr);
    ASSERT_TRUE(PollUntil([&] {
      grpc::ClientContext ctx;
      return opening_->GetCommitment(&ctx, get, &got).ok() &&
             got.has_inclusion();
    }));
    ExpectInclusionVerifies(response.commitment_envelope(), got.inclusion());
  }
}

// A forked log under the log's own key: valid notes and valid inclusion
// proofs of a tree that does not extend the one the prover saw. The last
// accepted checkpoint is journaled, so even a restarted prover refuses it.
TEST_F(ProverNodeTest, ForkedLogIsRefusedEvenAfterARestart) {
  StartLog();
  StartProver(log_server_->port(), absl::Milliseconds(500));
  v1::GenerateResponse first;
  ASSERT_TRUE(Generate(Request(), &first).ok());
  ASSERT_TRUE(first.receipt().has_inclusion());  // size 1, accepted
  ASSERT_TRUE(StopProver().ok());
  StartProver(log_server_->port(), absl::Milliseconds(500));
  fake_log_->Fork();
  v1::GenerateRequest request = Request();
  request.set_seed(request.seed() + 1);
  v1::GenerateResponse second;
  ASSERT_TRUE(Generate(request, &second).ok());
  EXPECT_EQ(fake_log_->size(), 2u);  // logged in the fork, at index 1
  EXPECT_FALSE(second.receipt().has_inclusion());
  EXPECT_TRUE(second.receipt().has_promise_envelope());
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

// Regression: the commitment did not carry the stop rule, so it no longer
// validated and an audit could not check where generation had to stop.
// It now commits the rule the engine applied: max_new_tokens, the
// effective stop ids (the request's, else the model's eos ids), ignore_eos
// and the engine's max_context.
TEST_F(ProverNodeTest, CommitmentCarriesTheEngineStopRule) {
  const int port = StartLog();
  StartProver(port, absl::Seconds(10));
  v1::ModelInfoResponse info;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(inference_->ModelInfo(&ctx, {}, &info).ok());
  }
  const std::vector<int32_t>& eos = synth_->model->config().eos_token_ids;
  ASSERT_FALSE(eos.empty());

  // No stop ids named: the model's eos ids are committed (and ignored).
  v1::GenerateResponse response;
  ASSERT_TRUE(Generate(Request(), &response).ok());
  v1::Commitment c = CommitmentOf(response);
  EXPECT_TRUE(store::ValidateCommitment(c).ok())
      << store::ValidateCommitment(c);
  EXPECT_EQ(c.max_new_tokens(), 6u);
  EXPECT_TRUE(c.ignore_eos());
  EXPECT_EQ(std::vector<int32_t>(c.stop_token_ids().begin(),
                                 c.stop_token_ids().end()),
            eos);
  EXPECT_EQ(c.max_context(), info.max_context());
  EXPECT_GT(c.max_context(), 0u);
  const std::vector<int32_t> first(response.output_token_ids().begin(),
                                   response.output_token_ids().end());
  size_t allowed = 0;
  EXPECT_TRUE(store::CheckStopRule(c, first, &allowed).ok());

  // A greedy run of 8 tokens; then the same with a stop id first seen at
  // position j: generation stops there, with STOP, and the rule checks.
  v1::GenerateRequest greedy = Request();
  greedy.clear_sampling();
  greedy.clear_seed();
  greedy.set_max_tokens(8);
  ASSERT_TRUE(Generate(greedy, &response).ok());
  const std::vector<int32_t> run(response.output_token_ids().begin(),
                                 response.output_token_ids().end());
  ASSERT_EQ(run.size(), 8u);
  size_t j = 1;
  while (j < run.size() &&
         std::find(run.begin(), run.begin() + j, run[j]) != run.begin() + j) {
    ++j;
  }
  ASSERT_LT(j, run.size()) << "no token that is new after the first";
  greedy.set_ignore_eos(false);
  greedy.add_stop_token_ids(run[j]);
  ASSERT_TRUE(Generate(greedy, &response).ok());
  c = CommitmentOf(response);
  const std::vector<int32_t> stopped(response.output_token_ids().begin(),
                                     response.output_token_ids().end());
  EXPECT_EQ(stopped, std::vector<int32_t>(run.begin(), run.begin() + j + 1));
  EXPECT_EQ(c.finish_reason(), v1::FINISH_REASON_STOP);
  EXPECT_EQ(std::vector<int32_t>(c.stop_token_ids().begin(),
                                 c.stop_token_ids().end()),
            std::vector<int32_t>{run[j]});
  EXPECT_FALSE(c.ignore_eos());
  EXPECT_EQ(c.max_new_tokens(), 8u);
  EXPECT_TRUE(store::CheckStopRule(c, stopped, &allowed).ok())
      << store::CheckStopRule(c, stopped, &allowed);
}

// Regression: the retention sweep (also the one at start, before the
// re-queue) deleted commitments the log had not yet acknowledged, so a log
// down for longer than the retention lost them for good.
TEST_F(ProverNodeTest, SweepNeverDeletesCommitmentsPendingSubmission) {
  tweak_options_ = [](ProverOptions& o) {
    o.retention = absl::Milliseconds(1);
  };
  const int port = StartLog();
  StopLog();
  StartProver(port, absl::Milliseconds(200));
  v1::GenerateResponse response;
  ASSERT_TRUE(Generate(Request(), &response).ok());
  ASSERT_TRUE(response.receipt().has_promise_envelope());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto swept = node_->SweepJournal();
  ASSERT_TRUE(swept.ok()) << swept.status();
  EXPECT_EQ(swept->deleted, 0u);
  EXPECT_EQ(swept->pending_kept, 1u);
  EXPECT_GT(swept->oldest_pending_unix_nanos, 0);

  // The restart sweeps again before it re-queues: still kept, and logged.
  EXPECT_EQ(StopProver(absl::Milliseconds(300)).code(),
            absl::StatusCode::kDeadlineExceeded);
  StartLog(port);
  StartProver(port, absl::Milliseconds(200));
  v1::GetCommitmentRequest get;
  get.set_request_id(response.request_id());
  v1::GetCommitmentResponse got;
  ASSERT_TRUE(PollUntil([&] {
    grpc::ClientContext ctx;
    return opening_->GetCommitment(&ctx, get, &got).ok() && got.has_inclusion();
  }));
  EXPECT_EQ(got.commitment_envelope(), response.commitment_envelope());
  EXPECT_EQ(fake_log_->size(), 1u);
  ASSERT_TRUE(PollUntil([&] { return node_->pending_submissions() == 0; }));

  // Logged now, and past the retention: the next sweep deletes it.
  swept = node_->SweepJournal();
  ASSERT_TRUE(swept.ok()) << swept.status();
  EXPECT_EQ(swept->deleted, 1u);
  EXPECT_EQ(swept->pending_kept, 0u);
  grpc::ClientContext ctx;
  EXPECT_EQ(opening_->GetCommitment(&ctx, get, &got).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

// Regression: the receipt wait expired only between Log.Submit calls, so a
// Submit in flight (up to rpc_timeout, 10 s) held every Generate past its
// receipt wait. A log that holds Submit for 3 s must not delay a promise
// due after 300 ms.
TEST_F(ProverNodeTest, ReceiptWaitHoldsWhileSubmitIsInFlight) {
  const int port = StartLog();
  fake_log_->set_submit_delay(absl::Seconds(3));
  StartProver(port, absl::Milliseconds(300));
  v1::GenerateResponse response;
  const absl::Time start = absl::Now();
  ASSERT_TRUE(Generate(Request(), &response).ok());
  const absl::Duration took = absl::Now() - start;
  EXPECT_LT(took, absl::Seconds(2));
  EXPECT_GE(took, absl::Milliseconds(300));
  ASSERT_TRUE(response.receipt().has_promise_envelope());
  // The Submit was in flight, and still is.
  EXPECT_EQ(fake_log_->submit_started(), 1);
  EXPECT_EQ(fake_log_->submit_calls(), 0);
  EXPECT_EQ(node_->pending_submissions(), 1u);
  // Once the log answers, the commitment is logged.
  fake_log_->Release();
  ASSERT_TRUE(PollUntil([&] { return node_->pending_submissions() == 0; }));
  EXPECT_EQ(fake_log_->size(), 1u);
}

// Regression: Shutdown stopped the opening pool and closed the journal, so
// an auditor opening the last commitments during a shutdown got
// UNAVAILABLE although the server still ran.
TEST_F(ProverNodeTest, OpeningStillWorksAfterShutdown) {
  const int port = StartLog();
  StartProver(port, absl::Seconds(10));
  v1::GenerateResponse response;
  ASSERT_TRUE(Generate(Request(), &response).ok());
  const v1::Commitment c = CommitmentOf(response);
  ASSERT_TRUE(node_->Shutdown(absl::Now() + absl::Seconds(2)).ok());

  const std::map<uint32_t, bool> expected = {{0, true}, {2, true}, {4, true}};
  EXPECT_EQ(OpenedLayersMatch(*opening_, response, c, {0, 2, 4}), expected);
  v1::GetCommitmentRequest get;
  get.set_request_id(response.request_id());
  v1::GetCommitmentResponse got;
  grpc::ClientContext ctx;
  ASSERT_TRUE(opening_->GetCommitment(&ctx, get, &got).ok());
  EXPECT_EQ(got.commitment_envelope(), response.commitment_envelope());
  EXPECT_TRUE(got.has_inclusion());
  // Inference, though, is closed.
  v1::GenerateResponse late;
  EXPECT_EQ(Generate(Request(), &late).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

// Flips one bit of the first signature after signing.
class ForgedSignatureFaults : public ProverFaults {
 public:
  void TamperEnvelope(v1::Envelope& envelope) override {
    std::string* sig = envelope.mutable_signatures(0)->mutable_sig();
    (*sig)[0] = static_cast<char>((*sig)[0] ^ 1);
  }
};

TEST_F(ProverNodeTest, TamperedEnvelopeIsWhatTheProverJournalsAndServes) {
  const int port = StartLog();
  StartProver(port, absl::Seconds(10),
              std::make_shared<ForgedSignatureFaults>());
  v1::GenerateResponse response;
  ASSERT_TRUE(Generate(Request(), &response).ok());
  // The response carries the forged signature; the payload is intact.
  const auto verified =
      store::VerifyEnvelope(response.commitment_envelope(), keys_,
                            store::kCommitmentPayloadType, 1 << 20);
  EXPECT_EQ(verified.status().code(), absl::StatusCode::kInvalidArgument);
  v1::Envelope envelope;
  ASSERT_TRUE(envelope.ParseFromString(response.commitment_envelope()));
  auto c = store::ParseCommitment(envelope.payload());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->request_id(), response.request_id());
  // The log refused it; the journal keeps the same bytes.
  EXPECT_EQ(response.receipt().kind_case(), v1::Receipt::KIND_NOT_SET);
  EXPECT_EQ(fake_log_->size(), 0u);
  v1::GetCommitmentRequest get;
  get.set_request_id(response.request_id());
  v1::GetCommitmentResponse got;
  grpc::ClientContext ctx;
  ASSERT_TRUE(opening_->GetCommitment(&ctx, get, &got).ok());
  EXPECT_EQ(got.commitment_envelope(), response.commitment_envelope());
}

// Continuous batching: 8 requests at once share engine steps.
TEST_F(ProverNodeTest, ConcurrentRequestsShareEngineSteps) {
  const int port = StartLog();
  StartProver(port, absl::Seconds(10));
  EXPECT_EQ(node_->max_batch_sequences(), 0u);
  constexpr int kRequests = 8;
  constexpr uint32_t kTokens = 256;
  std::vector<grpc::Status> status(kRequests);
  std::vector<v1::GenerateResponse> responses(kRequests);
  absl::Notification go;
  std::vector<std::thread> clients;
  for (int i = 0; i < kRequests; ++i) {
    clients.emplace_back([&, i] {
      v1::GenerateRequest r = Request();
      r.set_seed(1000 + i);
      r.set_max_tokens(kTokens);
      go.WaitForNotification();
      status[i] = Generate(r, &responses[i]);
    });
  }
  go.Notify();
  for (std::thread& t : clients) t.join();
  for (int i = 0; i < kRequests; ++i) {
    ASSERT_TRUE(status[i].ok()) << i << ": " << status[i].error_message();
    EXPECT_EQ(responses[i].output_token_ids_size(), int(kTokens));
  }
  EXPECT_GT(node_->max_batch_sequences(), 1u);
  EXPECT_LE(node_->max_batch_sequences(), uint64_t{kRequests});
}

TEST_F(ProverNodeTest, CreateRefusesABadProverId) {
  ProverOptions o;
  o.prover_id = "a b";
  EXPECT_EQ(ProverNode::Create(o).status().message(),
            "ProverOptions.prover_id: got byte 0x20 at offset 1, want "
            "printable ASCII without spaces (0x21..0x7e)");
  o.prover_id.clear();
  EXPECT_EQ(ProverNode::Create(o).status().message(),
            "ProverOptions.prover_id: got 0 characters, want 1..256");
}

}  // namespace
}  // namespace layerproof::prover
