#include "tests/integration/cluster.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <random>
#include <utility>

#include "check/receipt.h"
#include "kernels/model/synth.h"
#include "rpc/tls.h"
#include "store/checkpoint.h"
#include "store/commitment.h"
#include "store/envelope.h"
#include "text/synthetic_tokenizer.h"

namespace layerproof::integration {
namespace {

std::string MakeTempDir(const std::string& prefix) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
  EXPECT_NE(mkdtemp(pattern.data()), nullptr) << pattern;
  return pattern;
}

std::shared_ptr<const store::Ed25519PrivateKey> NewKey() {
  auto key = store::Ed25519PrivateKey::Generate();
  EXPECT_TRUE(key.ok()) << key.status();
  return std::make_shared<const store::Ed25519PrivateKey>(*std::move(key));
}

kernels::Backend* TestBackend() {
  auto backend = kernels::DefaultBackend();
  EXPECT_TRUE(backend.ok()) << backend.status().ToString();
  return *backend;
}

template <typename Stub>
std::unique_ptr<typename Stub::Stub> NewStub(const std::string& address,
                                             const rpc::TlsOptions& tls) {
  auto channel = rpc::MakeChannel(address, tls);
  EXPECT_TRUE(channel.ok()) << channel.status();
  return Stub::NewStub(*channel);
}

}  // namespace

ModelDir::ModelDir(const std::string& preset, uint64_t seed) {
  dir = MakeTempDir("lp_cluster_model");
  auto config = kernels::model::SynthPreset(preset);
  EXPECT_TRUE(config.ok());
  kernels::model::SynthOptions options;
  options.seed = seed;
  const kernels::Status s =
      text::SynthesizeTextModel(*config, options, dir.string());
  EXPECT_TRUE(s.ok()) << s.ToString();
  auto loaded = kernels::model::Model::Load(dir.string());
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (loaded.ok()) model = *std::move(loaded);
}

ModelDir::~ModelDir() {
  model.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

namespace {

// The tests' shutdown deadlines.
cluster::LocalClusterOptions NodesOptions(
    std::shared_ptr<const store::Ed25519PrivateKey> verifier_key) {
  cluster::LocalClusterOptions options;
  options.verifier_key = std::move(verifier_key);
  options.timeouts.prover = absl::Seconds(20);
  options.timeouts.server_grace = std::chrono::seconds(5);
  return options;
}

}  // namespace

Cluster::Cluster()
    : root_(MakeTempDir("lp_cluster")),
      model_("tiny", 1),
      verifier_key_(NewKey()),
      nodes_(NodesOptions(verifier_key_)) {
  verifier_executor_ = kernels::model::MakeHostExecutor(TestBackend());
  auto engine =
      kernels::model::Engine::Create(*model_.model, verifier_executor_.get());
  EXPECT_TRUE(engine.ok()) << engine.status().ToString();
  if (engine.ok()) verifier_engine_ = *std::move(engine);
}

Cluster::~Cluster() {
  EXPECT_TRUE(nodes_.Shutdown().ok());
  std::error_code ec;
  std::filesystem::remove_all(root_, ec);
}

void Cluster::StartVerifier(const VerifierSetup& setup) {
  cluster::VerifierSpec spec;
  verifier::VerifierOptions& options = spec.options;
  options.engine = verifier_engine_.get();
  options.db_dir = root_ + "/verifier";
  options.policy = setup.policy;
  options.audit_threads = setup.audit_threads;
  options.opening_timeout = setup.opening_timeout;
  options.roles = setup.roles;
  options.peer_limits = setup.peer_limits;
  options.max_refusals_per_submitter = setup.max_refusals_per_submitter;
  options.remote_auditors = setup.remote_auditors;
  options.audit_lease = setup.audit_lease;
  spec.server_tls = setup.server_tls;
  spec.client_tls = setup.client_tls;
  const absl::Status started = nodes_.StartVerifier(std::move(spec));
  ASSERT_TRUE(started.ok()) << started;
}

void Cluster::StopVerifier() { EXPECT_TRUE(nodes_.StopVerifier().ok()); }

std::string Cluster::verifier_address() const {
  return nodes_.verifier_address();
}

std::unique_ptr<verifier::AuditorWorker> Cluster::StartAuditorWorker(
    const std::string& id, int concurrency) {
  verifier::AuditorWorkerOptions o;
  o.worker_id = id;
  o.verifier_address = verifier_address();
  o.verifier_tls = Insecure();
  o.prover_tls = Insecure();
  o.engine = verifier_engine_.get();
  o.concurrency = concurrency;
  o.poll_interval = absl::Milliseconds(20);
  auto w = verifier::AuditorWorker::Start(std::move(o));
  EXPECT_TRUE(w.ok()) << w.status();
  return w.ok() ? *std::move(w) : nullptr;
}

const store::Ed25519PublicKey& Cluster::verifier_key() const {
  return verifier_key_->public_key();
}

RunningProver& Cluster::StartProver(const ProverSetup& setup) {
  cluster::ProverSpec spec;
  prover::ProverOptions& options = spec.options;
  options.prover_id = setup.prover_id;
  options.journal_dir =
      setup.journal_dir.empty()
          ? root_ + "/journal" + std::to_string(next_journal_++)
          : setup.journal_dir;
  spec.executor = kernels::model::MakeHostExecutor(TestBackend());
  options.key = NewKey();
  // A restart keeps its key: the journal's commitments were signed by it.
  for (const auto& old : nodes_.provers()) {
    if (old->journal_dir == options.journal_dir) options.key = old->key;
  }
  options.model = setup.model ? setup.model : model_.model.get();
  options.receipt_wait = setup.receipt_wait;
  options.promise_window = setup.promise_window;
  options.roles = setup.roles;
  options.faults = setup.faults;
  options.max_waiting_requests = setup.max_waiting_requests;
  options.peer_limits = setup.peer_limits;
  spec.server_tls = setup.server_tls;
  spec.client_tls = setup.client_tls;
  spec.port = setup.port;
  spec.register_with_verifier = setup.register_with_verifier;
  // A foreign-key prover signs with its key but the verifier knows the
  // prover id by another key.
  if (setup.foreign_key) spec.registered_key = NewKey()->public_key();
  absl::StatusOr<RunningProver*> started = nodes_.StartProver(std::move(spec));
  // A prover that did not start leaves nothing to test with.
  if (!started.ok()) {
    ADD_FAILURE() << started.status();
    std::abort();
  }
  return **started;
}

std::unique_ptr<v1::Inference::Stub> Cluster::InferenceStub(
    const RunningProver& p, const rpc::TlsOptions& tls) {
  return NewStub<v1::Inference>(p.address(), tls);
}

std::unique_ptr<v1::Opening::Stub> Cluster::OpeningStub(
    const RunningProver& p, const rpc::TlsOptions& tls) {
  return NewStub<v1::Opening>(p.address(), tls);
}

std::unique_ptr<v1::Log::Stub> Cluster::LogStub(const rpc::TlsOptions& tls) {
  return NewStub<v1::Log>(verifier_address(), tls);
}

std::unique_ptr<v1::Audit::Stub> Cluster::AuditStub(
    const rpc::TlsOptions& tls) {
  return NewStub<v1::Audit>(verifier_address(), tls);
}

absl::StatusOr<ClientResult> Cluster::Generate(
    v1::Inference::Stub& stub, const std::vector<int32_t>& prompt,
    uint32_t max_tokens, const v1::SamplingParams& sampling,
    const std::string& nonce) {
  v1::GenerateRequest request;
  for (int32_t id : prompt) request.mutable_token_ids()->add_ids(id);
  *request.mutable_sampling() = sampling;
  request.set_max_tokens(max_tokens);
  request.set_client_nonce(nonce);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(60));
  ClientResult result;
  const grpc::Status status =
      stub.Generate(&context, request, &result.response);
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        status.error_message());
  }
  absl::StatusOr<check::CheckedReceipt> receipt =
      CheckReceipt(request, result.response);
  if (!receipt.ok()) return receipt.status();
  result.commitment = receipt->commitment;
  result.promised = receipt->promise.has_value();
  return result;
}

absl::StatusOr<check::CheckedReceipt> Cluster::CheckReceipt(
    const v1::GenerateRequest& request, const v1::GenerateResponse& response) {
  // What every client checks (check/receipt.h), with the keys of the
  // provers this cluster started and the verifier's log key.
  check::ReceiptTrust trust;
  for (const auto& p : nodes_.provers()) {
    trust.prover_keys.Add(p->key->public_key());
  }
  const store::CheckpointVerifier log_key(nodes_.verifier_id(),
                                          verifier_key_->public_key());
  trust.log = {&log_key, nodes_.log_origin()};
  return check::CheckReceipt(request, response, trust);
}

std::vector<v1::Verdict> Cluster::Verdicts(const std::string& request_id) {
  auto stub = AuditStub(query_tls_);
  v1::GetVerdictRequest request;
  request.set_request_id(request_id);
  v1::GetVerdictResponse response;
  grpc::ClientContext context;
  const grpc::Status status = stub->GetVerdict(&context, request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  std::vector<v1::Verdict> verdicts;
  for (const v1::VerdictRecord& record : response.verdicts()) {
    v1::Envelope envelope;
    EXPECT_TRUE(envelope.ParseFromString(record.verdict_envelope()));
    auto verdict = store::ParseVerdict(envelope.payload());
    EXPECT_TRUE(verdict.ok()) << verdict.status();
    if (verdict.ok()) verdicts.push_back(*std::move(verdict));
  }
  return verdicts;
}

std::vector<v1::Verdict> Cluster::WaitForVerdicts(const std::string& request_id,
                                                  absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  std::vector<v1::Verdict> verdicts;
  while ((verdicts = Verdicts(request_id)).empty() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));  // polling the verifier
  }
  return verdicts;
}

store::Checkpoint Cluster::LatestCheckpoint() {
  auto stub = LogStub(query_tls_);
  v1::GetCheckpointResponse response;
  grpc::ClientContext context;
  EXPECT_TRUE(
      stub->GetCheckpoint(&context, v1::GetCheckpointRequest(), &response)
          .ok());
  store::CheckpointVerifier checker(verifier().verifier_id(),
                                    verifier().public_key());
  auto checkpoint = checker.Verify(response.checkpoint());
  EXPECT_TRUE(checkpoint.ok()) << checkpoint.status();
  return checkpoint.ok() ? *checkpoint : store::Checkpoint{};
}

bool WaitForAudits(Cluster& cluster, uint64_t n, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (cluster.verifier().counters().audits_done < n) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(10));  // polling the verifier
  }
  return cluster.verifier().WaitIdle(deadline - absl::Now()).ok();
}

std::vector<int32_t> RandomPrompt(uint64_t seed, int32_t vocab, int max_len) {
  std::mt19937_64 rng(seed);
  const int len = 2 + static_cast<int>(rng() % (max_len - 1));
  std::vector<int32_t> prompt(len);
  for (int32_t& id : prompt) id = static_cast<int32_t>(rng() % vocab);
  return prompt;
}

}  // namespace layerproof::integration
