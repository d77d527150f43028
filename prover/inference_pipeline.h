// The life of one inference request on the prover (DESIGN §1 steps 1-2):
//   Start: draw the request id, salt and seed, attach a CommitmentTap and
//          queue the request on the engine thread (BatchScheduler);
//   engine thread: each sampled token goes to the caller's TokenSink;
//   commit worker: when the sequence finishes, close the layer hashes,
//          build the Commitment, sign it, write the journal entry (synced)
//          and hand the envelope to the LogSubmitter;
//   submitter: once the log acknowledges (or receipt_wait passes, or the
//          log refuses) the caller's DoneCallback gets the GenerateResponse
//          with its receipt: the inclusion, or a signed SubmissionPromise,
//          or no receipt at all when the log refused the commitment (the
//          refusal is logged and journaled).
//
// Seeds: a client nonce fixes the seed (store::SeedFromNonce); otherwise the
// request's seed, otherwise 64 random bits.
//
// Cancellation: a request cancelled before it ran is not committed (the
// DoneCallback gets CANCELLED). One cancelled while running finishes with
// FINISH_REASON_CANCELLED and, if it produced at least one token, is
// committed, journaled and logged like any other: the work was done and an
// auditor may ask about it. Without a token there is nothing to commit to
// (a Commitment needs output_tokens >= 1) and the callback gets CANCELLED.
//
// The commitment carries the stop rule the engine applied (max_new_tokens,
// the effective stop ids, ignore_eos, max_context), so that an audit can
// check that generation stopped where it had to.
//
// Faults (tests only): TamperOutputTokens changes the output before the
// commitment, the journal and the response; TamperCommitment runs just
// before signing; TamperEnvelope runs on the signed envelope (the journal
// and the response keep its bytes); each request's tap gets
// NewRowsTamper().
//
// Thread safety: Start and Cancel may be called from any thread. The
// DoneCallback is called exactly once, from a worker thread.
#ifndef LAYERPROOF_PROVER_INFERENCE_PIPELINE_H_
#define LAYERPROOF_PROVER_INFERENCE_PIPELINE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kernels/model/model.h"
#include "layerproof/v1/inference.pb.h"
#include "prover/batch_scheduler.h"
#include "prover/internal/prover_faults.h"
#include "prover/journal.h"
#include "prover/log_submitter.h"
#include "prover/prover_metrics.h"
#include "prover/validation.h"
#include "rpc/task_pool.h"
#include "store/crypto.h"
#include "text/model_text.h"

namespace layerproof::prover {

struct PipelineConfig {
  const kernels::model::Model* model = nullptr;
  std::string prover_id;
  std::shared_ptr<const store::Ed25519PrivateKey> key;
  const text::ModelText* text = nullptr;  // may be null
  // The engine's max_context (Commitment.max_context).
  int64_t max_context = 0;
  absl::Duration receipt_wait = absl::Milliseconds(1500);
  // The promise's log_origin (ProverOptions.log_origin).
  std::string log_origin;
  // SubmissionPromise.log_by = promised_at + promise_window.
  absl::Duration promise_window = absl::Hours(24);
  ProverFaults* faults = nullptr;  // tests only
  // Tokens and token timings, when not null; must outlive the pipeline.
  ProverMetrics* metrics = nullptr;
};

class InferencePipeline {
 public:
  // Engine thread; must not block. Returns false to end generation after
  // this token (a stop string the caller watches for): the request then
  // finishes with FINISH_REASON_CANCELLED, unless this token finished it
  // anyway, and is committed like any other.
  using TokenSink = std::function<bool(int32_t token)>;
  using DoneCallback =
      std::function<void(absl::StatusOr<v1::GenerateResponse>)>;

  // Every reference must outlive the pipeline.
  InferencePipeline(PipelineConfig config, BatchScheduler& scheduler,
                    rpc::TaskPool& commit_pool, ProverJournal& journal,
                    LogSubmitter& submitter);
  InferencePipeline(const InferencePipeline&) = delete;
  InferencePipeline& operator=(const InferencePipeline&) = delete;

  // Queues `spec`; returns a ticket for Cancel. On error `done` is not
  // called. `on_token` may be empty. `request_id`, when not null, gets the
  // request's id (GenerateResponse.request_id) before any callback runs.
  absl::StatusOr<uint64_t> Start(GenerationSpec spec, TokenSink on_token,
                                 DoneCallback done,
                                 std::string* request_id = nullptr);
  void Cancel(uint64_t ticket);

  // Requests committed (journaled) so far.
  uint64_t committed() const { return committed_.load(); }

 private:
  struct Request;
  void Commit(const std::shared_ptr<Request>& request,
              absl::StatusOr<kernels::model::FinishedSequence> finished);
  void Respond(const std::shared_ptr<Request>& request,
               v1::GenerateResponse response, const ReceiptOutcome& outcome);

  const PipelineConfig config_;
  BatchScheduler& scheduler_;
  rpc::TaskPool& commit_pool_;
  ProverJournal& journal_;
  LogSubmitter& submitter_;
  std::atomic<uint64_t> committed_{0};
};

}  // namespace layerproof::prover

#endif  // LAYERPROOF_PROVER_INFERENCE_PIPELINE_H_
