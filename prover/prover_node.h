// The prover node (DESIGN §1 steps 1-2 and 4, §5 "Journals", §7): serves
// Inference and Opening over the deterministic engine, commits to every
// request's layer hashes, journals and signs the commitment, and submits it
// to the verifier's log. `layerproof serve prover` builds one from flags
// and serves services() with rpc::StartServer.
//
// Inside: one engine thread (BatchScheduler) runs the continuous batch; a
// commit worker signs and journals finished requests (InferencePipeline); a
// submitter thread batches them to Log.Submit with backoff (LogSubmitter);
// a small pool replays openings (replay.h); a sweeper deletes journal
// entries older than the retention.
//
// Lifetime: the node must outlive any server serving its services(). The
// order is: Shutdown (Inference stops: new Generate calls are UNAVAILABLE,
// those in flight are committed and their submissions flushed), then shut
// the server down, then destroy the node. Opening (Open and GetCommitment)
// keeps answering between Shutdown and the destructor, since an auditor
// may open the last commitments just then; the destructor finishes the
// openings still queued and closes the journal. The Model and the Executor
// must outlive the node.
//
// Thread safety: services() and the accessors may be called from any
// thread; Shutdown once from one thread (the destructor calls it if it was
// not called).
#ifndef LAYERPROOF_PROVER_PROVER_NODE_H_
#define LAYERPROOF_PROVER_PROVER_NODE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/impl/service_type.h"
#include "kernels/model/engine.h"
#include "kernels/model/executor.h"
#include "kernels/model/model.h"
#include "prover/http_api.h"
#include "prover/internal/prover_faults.h"
#include "prover/journal.h"
#include "prover/log_submitter.h"
#include "rpc/metrics.h"
#include "rpc/peer_limiter.h"
#include "rpc/roles.h"
#include "rpc/tls.h"
#include "store/crypto.h"

namespace layerproof::prover {

struct ProverOptions {
  // Commitment.prover_id: 1..256 printable ASCII characters, no spaces.
  std::string prover_id;
  // Not owned; must outlive the node.
  const kernels::model::Model* model = nullptr;
  kernels::model::Executor* executor = nullptr;
  // Signs commitments and promises. Required.
  std::shared_ptr<const store::Ed25519PrivateKey> key;
  // The journal's RocksDB directory (created if missing). Required.
  std::string journal_dir;
  // The verifier's Log service, "host:port". Required.
  std::string verifier_address;
  rpc::TlsOptions verifier_tls;
  // The log's checkpoint key (name: the verifier id). Every checkpoint the
  // log sends must verify under it, and extend the last one, before it is
  // journaled or handed to a client (log_submitter.h). Required.
  std::shared_ptr<const store::CheckpointVerifier> log_key;
  // The log's origin ("layerproof/<verifier id>" for a LayerProof
  // verifier): every checkpoint must carry it, and it is
  // SubmissionPromise.log_origin, the log a promise is judged by. Required.
  std::string log_origin;
  kernels::model::EngineOptions engine;
  // Requests waiting for the engine (beyond engine.max_sequences running)
  // at most; past it Generate is RESOURCE_EXHAUSTED (batch_scheduler.h).
  size_t max_waiting_requests = 1024;
  // Generate from callers without a client certificate (a prover serving
  // TLS without mTLS, or plaintext on loopback), per peer address
  // (rpc/peer_limiter.h). Under mTLS a caller needs role `client` instead.
  rpc::PeerLimits peer_limits;
  // Largest GenerateRequest.max_tokens.
  uint32_t max_new_tokens = 1024;
  // Longest prompt in tokens (and below the context) and in text bytes.
  uint32_t max_prompt_tokens = 4096;
  uint32_t max_prompt_bytes = 64 << 10;
  // How long Generate waits for the log before answering with a promise.
  absl::Duration receipt_wait = absl::Milliseconds(1500);
  // A promise's deadline (SubmissionPromise.log_by) is this long after it
  // is made: past it, an unlogged commitment is a FAIL_UNLOGGED verdict
  // against this prover for anyone who presents the promise. Keep it above
  // the log's worst outage.
  absl::Duration promise_window = absl::Hours(24);
  // Journal entries older than this are deleted (openings then NOT_FOUND),
  // checked at start and every retention_sweep_interval; entries still
  // pending submission are kept until the log has them.
  absl::Duration retention = absl::Hours(24 * 7);
  absl::Duration retention_sweep_interval = absl::Hours(1);
  // Openings: the largest (positions x hidden x 4 x layers), the longest
  // (on top of the call's deadline), and the replay threads.
  uint64_t max_opening_bytes = uint64_t{256} << 20;
  absl::Duration max_opening_time = absl::Seconds(60);
  int opening_threads = 2;
  // Openings waiting for a replay worker at most; past it Opening.Open is
  // RESOURCE_EXHAUSTED (the verifier retries). Each holds only its request.
  size_t max_queued_openings = 64;
  // Who may call Opening.Open (Role::kAuditor) when the server runs TLS;
  // `insecure`: the server is plaintext and every check passes.
  rpc::RoleMap roles;
  bool insecure = false;
  LogSubmitterOptions submitter;
  // Count requests, tokens, token timings and batch sizes (metrics()).
  // Off only to measure what counting costs (bench/http_api_bench); the
  // sampled queue depths and process metrics stay.
  bool record_metrics = true;
  // Tests only (prover_faults.h); null in production.
  std::shared_ptr<ProverFaults> faults;
};

class ProverNode {
 public:
  // Validates the options (InvalidArgument naming the field), loads the
  // tokenizer (tokenizer.json beside the model, if present), opens the
  // journal, sweeps it, re-queues its pending commitments and starts the
  // threads.
  static absl::StatusOr<std::unique_ptr<ProverNode>> Create(
      ProverOptions options);
  ~ProverNode();
  ProverNode(const ProverNode&) = delete;
  ProverNode& operator=(const ProverNode&) = delete;

  // Inference and Opening, for rpc::StartServer. Owned by the node.
  std::vector<grpc::Service*> services();
  // The same, split for a deployment that serves Opening (salts and
  // activations, for auditors only) on a listener of its own, so that a
  // network policy can keep everyone else off it (docs/operations.md).
  std::vector<grpc::Service*> inference_services();
  std::vector<grpc::Service*> opening_services();

  // Starts the OpenAI-compatible HTTP API (http_api.h) over this node's
  // pipeline; returns its port. At most once. Shutdown drains it (503 for
  // new completions) and stops it once the requests in flight are done.
  absl::StatusOr<int> StartHttpApi(HttpApiOptions options);

  // Stops accepting Generate requests, lets requests in flight finish
  // (cancelling those still running at `deadline`), commits them, flushes
  // submissions until `deadline` and stops the submitter and the sweeper.
  // Opening keeps working (replays and GetCommitment from the journal)
  // until the node is destroyed. OK, or DeadlineExceeded when commitments
  // were left pending (they are submitted at the next start).
  absl::Status Shutdown(absl::Time deadline);

  // Commitments queued for or in flight to the log.
  size_t pending_submissions() const;
  // Requests committed since the start.
  uint64_t committed_requests() const;
  // Deletes journal entries older than the retention now, except those
  // still pending submission (kept, with a "pending_past_retention"
  // warning on stderr); says how many it deleted and kept.
  absl::StatusOr<JournalSweep> SweepJournal();
  // The node's Prometheus metrics (prover_metrics.h, and the queue depths
  // sampled when scraped), for an rpc::MetricsServer.
  const rpc::NodeMetrics& metrics() const;
  // The most sequences that sampled a token in one engine Step since the
  // start: > 1 shows requests were batched together (continuous batching).
  uint64_t max_batch_sequences() const;

 private:
  struct Impl;
  explicit ProverNode(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace layerproof::prover

#endif  // LAYERPROOF_PROVER_PROVER_NODE_H_
