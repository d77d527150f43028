#include "tests/integration/cluster.h"

#include <stdlib.h>
#include <unistd.h>

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

// The verifier's name and its log's origin (verifier_node.h names the log
// "layerproof/" + verifier_id), for a verifier in this process or outside.
constexpr char kVerifierId[] = "verifier-1";
constexpr char kLogOrigin[] = "layerproof/verifier-1";

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

std::string RunningProver::address() const {
  return "127.0.0.1:" + std::to_string(server->port());
}

void RunningProver::Stop() {
  if (node) {
    EXPECT_TRUE(node->Shutdown(absl::Now() + absl::Seconds(20)).ok());
  }
  if (server) server->Shutdown(std::chrono::seconds(5));
  server.reset();
  node.reset();
}

Cluster::Cluster() : root_(MakeTempDir("lp_cluster")), model_("tiny", 1) {
  verifier_executor_ = kernels::model::MakeHostExecutor(TestBackend());
  auto engine =
      kernels::model::Engine::Create(*model_.model, verifier_executor_.get());
  EXPECT_TRUE(engine.ok()) << engine.status().ToString();
  if (engine.ok()) verifier_engine_ = *std::move(engine);
  verifier_key_ = NewKey();
}

Cluster::~Cluster() {
  for (auto& p : provers_) p->Stop();
  StopVerifier();
  std::error_code ec;
  std::filesystem::remove_all(root_, ec);
}

void Cluster::StartVerifier(const VerifierSetup& setup) {
  verifier_setup_ = setup;
  verifier::VerifierOptions options;
  options.verifier_id = kVerifierId;
  options.engine = verifier_engine_.get();
  options.key = verifier_key_;
  options.db_dir = root_ + "/verifier";
  options.policy = setup.policy;
  options.audit_threads = setup.audit_threads;
  options.opening_timeout = setup.opening_timeout;
  options.roles = setup.roles;
  options.insecure = setup.server_tls.insecure;
  options.peer_limits = setup.peer_limits;
  options.max_refusals_per_submitter = setup.max_refusals_per_submitter;
  options.remote_auditors = setup.remote_auditors;
  options.audit_lease = setup.audit_lease;
  for (const auto& p : provers_) {
    if (!p->node) continue;
    options.provers.push_back(verifier::ProverRegistration{
        p->prover_id, p->key->public_key(), p->address(), setup.client_tls});
  }
  auto node = verifier::VerifierNode::Create(std::move(options));
  ASSERT_TRUE(node.ok()) << node.status();
  verifier_ = *std::move(node);
  rpc::ServerConfig config;
  config.listen = "127.0.0.1:" + std::to_string(verifier_port_);
  config.tls = setup.server_tls;
  auto server = rpc::StartServer(config, verifier_->services());
  ASSERT_TRUE(server.ok()) << server.status();
  verifier_server_ = *std::move(server);
  verifier_port_ = verifier_server_->port();
}

void Cluster::StopVerifier() {
  // As `layerproof serve verifier` does: the node, then the server.
  if (verifier_server_) verifier_server_->MarkNotServing();
  if (verifier_) {
    EXPECT_TRUE(verifier_->Shutdown(absl::Seconds(20)).ok());
  }
  if (verifier_server_) verifier_server_->Shutdown(std::chrono::seconds(5));
  verifier_server_.reset();
  verifier_.reset();
}

std::string Cluster::verifier_address() const {
  return "127.0.0.1:" + std::to_string(verifier_port_);
}

const store::Ed25519PublicKey& Cluster::verifier_key() const {
  return verifier_key_->public_key();
}

RunningProver& Cluster::StartProver(const ProverSetup& setup) {
  auto p = std::make_unique<RunningProver>();
  p->prover_id = setup.prover_id;
  p->journal_dir = setup.journal_dir.empty()
                       ? root_ + "/journal" + std::to_string(next_journal_++)
                       : setup.journal_dir;
  p->executor = kernels::model::MakeHostExecutor(TestBackend());
  p->key = NewKey();
  // A restart keeps its key: the journal's commitments were signed by it.
  for (const auto& old : provers_) {
    if (old->journal_dir == p->journal_dir) p->key = old->key;
  }
  prover::ProverOptions options;
  options.prover_id = setup.prover_id;
  options.model = setup.model ? setup.model : model_.model.get();
  options.executor = p->executor.get();
  options.key = p->key;
  options.journal_dir = p->journal_dir;
  options.verifier_address = verifier_address();
  options.verifier_tls = setup.client_tls;
  options.log_key = std::make_shared<const store::CheckpointVerifier>(
      kVerifierId, verifier_key_->public_key());
  options.log_origin = kLogOrigin;
  options.receipt_wait = setup.receipt_wait;
  options.promise_window = setup.promise_window;
  options.roles = setup.roles;
  options.insecure = setup.server_tls.insecure;
  options.faults = setup.faults;
  options.max_waiting_requests = setup.max_waiting_requests;
  options.peer_limits = setup.peer_limits;
  auto node = prover::ProverNode::Create(std::move(options));
  EXPECT_TRUE(node.ok()) << node.status();
  p->node = *std::move(node);
  rpc::ServerConfig config;
  config.listen = "127.0.0.1:" + std::to_string(setup.port);
  config.tls = setup.server_tls;
  auto server = rpc::StartServer(config, p->node->services());
  EXPECT_TRUE(server.ok()) << server.status();
  p->server = *std::move(server);
  if (setup.register_with_verifier && verifier_) {
    // A foreign-key prover signs with p->key but the verifier knows the
    // prover id by another key.
    const std::shared_ptr<const store::Ed25519PrivateKey> registered =
        setup.foreign_key ? NewKey() : p->key;
    EXPECT_TRUE(verifier_
                    ->AddProver(verifier::ProverRegistration{
                        p->prover_id, registered->public_key(), p->address(),
                        verifier_setup_.client_tls})
                    .ok());
  }
  provers_.push_back(std::move(p));
  return *provers_.back();
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
  for (const auto& p : provers_) trust.prover_keys.Add(p->key->public_key());
  const store::CheckpointVerifier log_key(kVerifierId,
                                          verifier_key_->public_key());
  trust.log = {&log_key, kLogOrigin};
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
  store::CheckpointVerifier checker(verifier_->verifier_id(),
                                    verifier_->public_key());
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
