// Submits journaled commitments to the verifier's log (Log.Submit), in
// batches of up to 256 envelopes, asynchronously, retrying with exponential
// backoff (initial_backoff doubling up to max_backoff) while the log is
// unreachable or answers with a transient code.
//
// Outcomes per envelope (SubmitResult.code):
//   0              the inclusion (index, checkpoint, proof) is verified
//                  against the checkpoint's root and recorded in the journal;
//   UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, INTERNAL
//                  transient: retried after the backoff;
//   anything else  permanent: recorded in the journal as refused, logged to
//                  stderr as one structured line, never retried.
// Nothing is lost while the log is down: every commitment is in the journal
// before it is submitted, and Start re-queues the journal's pending entries.
//
// Checkpoints: every checkpoint the log sends must carry a valid signature
// by the configured log key (and, when set, the configured origin) and must
// extend the last one this submitter accepted: a larger tree is proven
// consistent with it (Log.GetConsistencyProof, RFC 9162 §2.1.4), an equal
// size has the same root, and the tree never shrinks. The last accepted
// checkpoint is kept in the journal, so this holds across restarts. Until a
// checkpoint
// passes, nothing it covers is journaled or handed to a client; the batch is
// retried and a "bad_checkpoint" line is logged (a forged or forked log
// never reaches a receipt).
//
// Receipts: Submit takes a deadline and a callback, called exactly once,
// on one of the submitter's two threads: with the inclusion if the log
// acknowledged in time, or with kRefused (the sending thread); otherwise at
// the deadline with kPending (the caller then hands out a signed promise),
// from a timer thread of its own, so that a Log.Submit call in flight
// (which may take up to rpc_timeout) never holds a receipt past its
// deadline.
//
// Thread safety: every method may be called from any thread.
#ifndef LAYERPROOF_PROVER_LOG_SUBMITTER_H_
#define LAYERPROOF_PROVER_LOG_SUBMITTER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"
#include "layerproof/v1/inference.pb.h"
#include "layerproof/v1/log.grpc.pb.h"
#include "layerproof/v1/prover_journal.pb.h"
#include "prover/journal.h"
#include "store/checkpoint.h"

namespace layerproof::prover {

struct LogSubmitterOptions {
  absl::Duration initial_backoff = absl::Milliseconds(50);
  absl::Duration max_backoff = absl::Seconds(2);
  // Envelopes per Log.Submit (the service takes 1..256).
  size_t max_batch = 256;
  // Deadline of one Log.Submit call.
  absl::Duration rpc_timeout = absl::Seconds(10);
};

struct ReceiptOutcome {
  enum class Kind { kIncluded, kPending, kRefused };
  Kind kind = Kind::kPending;
  v1::LogInclusion inclusion;  // kIncluded
  absl::Status refusal;        // kRefused
};

class LogSubmitter {
 public:
  using ReceiptCallback = std::function<void(const ReceiptOutcome&)>;

  // `journal` must outlive the submitter. `channel` leads to the Log
  // service, whose checkpoints must verify under `log_key` (required) with
  // origin `log_origin` (required).
  LogSubmitter(ProverJournal& journal, std::shared_ptr<grpc::Channel> channel,
               std::shared_ptr<const store::CheckpointVerifier> log_key,
               std::string log_origin, LogSubmitterOptions options = {});
  ~LogSubmitter();  // Stop()
  LogSubmitter(const LogSubmitter&) = delete;
  LogSubmitter& operator=(const LogSubmitter&) = delete;

  // Queues the journal's pending entries (after a restart).
  void Requeue(const std::vector<v1::JournalEntry>& pending);
  // Queues one journaled envelope. `on_receipt` (may be empty) is called
  // once, by `receipt_deadline` at the latest (with kPending then).
  void Submit(std::string request_id, std::string envelope,
              absl::Time receipt_deadline, ReceiptCallback on_receipt);
  // Waits until nothing is queued or in flight, or until `deadline`; OK, or
  // DeadlineExceeded naming how many are left (they stay in the journal).
  absl::Status Flush(absl::Time deadline);
  // Stops the thread; outstanding callbacks get kPending. Idempotent.
  void Stop();

  // Envelopes queued or in flight.
  size_t pending() const;

 private:
  struct Item {
    std::string request_id;
    std::string envelope;
  };
  struct Waiter {
    absl::Time deadline;
    ReceiptCallback callback;
  };
  // The sending thread: batches, Log.Submit, backoff.
  void Loop();
  // The timer thread: answers waiters whose deadline passed with kPending.
  void ExpiryLoop();
  // One Log.Submit of `batch`; returns the items to retry and appends the
  // settled ones' outcomes to `resolved`.
  std::vector<Item> SubmitBatch(
      std::vector<Item> batch,
      std::vector<std::pair<std::string, ReceiptOutcome>>& resolved);
  void Resolve(const std::string& request_id, const ReceiptOutcome& outcome);
  // Verifies `note` (signature, origin) and that it extends the last
  // accepted checkpoint, then makes it the last one. Sending thread only.
  absl::StatusOr<store::Checkpoint> AcceptCheckpoint(const std::string& note);

  ProverJournal& journal_;
  std::unique_ptr<v1::Log::Stub> stub_;
  const std::shared_ptr<const store::CheckpointVerifier> log_key_;
  const std::string expected_origin_;
  const LogSubmitterOptions options_;
  // The last checkpoint accepted (size 0: none yet). Sending thread only.
  store::Checkpoint last_checkpoint_;

  mutable absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool wake_ ABSL_GUARDED_BY(mu_) = false;
  // Set when a waiter is added, to wake the timer thread.
  bool waiters_changed_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<Item> queue_ ABSL_GUARDED_BY(mu_);
  size_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  std::multimap<std::string, Waiter> waiters_ ABSL_GUARDED_BY(mu_);
  absl::Duration backoff_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  absl::Time next_attempt_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // The Log.Submit call in flight, for Stop to cancel.
  grpc::ClientContext* current_call_ ABSL_GUARDED_BY(mu_) = nullptr;

  std::thread thread_;
  std::thread expiry_thread_;
  bool joined_ = false;
};

// Whether a SubmitResult code (google.rpc.Code) is worth retrying.
bool IsTransientSubmitCode(int32_t code);

}  // namespace layerproof::prover

#endif  // LAYERPROOF_PROVER_LOG_SUBMITTER_H_
