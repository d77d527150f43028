// The engine thread (DESIGN §1 step 1): ONE thread owns the Engine and
// runs the continuous batch. It takes new requests from a queue (Add),
// steps every sequence in flight (Step), hands each sampled token to its
// request, and hands each finished sequence over (TakeFinished).
//
// Requests beyond the engine's max_sequences wait in the queue, at most
// max_waiting of them: past that Enqueue refuses with RESOURCE_EXHAUSTED
// (Generate answers it to the client), so the queue is bounded. A request
// cancelled while queued finishes with CANCELLED (it never ran); one
// cancelled in flight is Engine::Cancel'ed and finishes normally with
// FinishReason::kCancelled. If a Step fails, every sequence in flight fails
// with that error and is dropped from the engine.
//
// Thread safety: Enqueue, Cancel and Drain may be called from any thread.
// The callbacks run on the engine thread and must not block: they hand
// their work on (e.g. to an rpc::TaskPool) and return.
#ifndef LAYERPROOF_PROVER_BATCH_SCHEDULER_H_
#define LAYERPROOF_PROVER_BATCH_SCHEDULER_H_

#include <prometheus/histogram.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kernels/model/engine.h"

namespace layerproof::prover {

struct ScheduledGeneration {
  // request.tap, when set, must outlive on_finished's call.
  kernels::model::GenerationRequest request;
  // One sampled token; engine thread. Returning false ends the sequence
  // right after this token (it finishes CANCELLED at the next Step unless
  // this token already finished it): a client's stop string.
  std::function<bool(int32_t token)> on_token;
  // Called exactly once, engine thread (or the Drain caller's thread for a
  // request still queued when the scheduler stops).
  std::function<void(absl::StatusOr<kernels::model::FinishedSequence>)>
      on_finished;
};

class BatchScheduler {
 public:
  // `engine` must outlive the scheduler; at most `max_sequences` run at
  // once (the engine's own limit) and `max_waiting` wait.
  // `batch_size`, when not null, observes how many sequences sampled a
  // token in each step; it must outlive the scheduler.
  BatchScheduler(kernels::model::Engine& engine, int64_t max_sequences,
                 size_t max_waiting = kDefaultMaxWaiting,
                 prometheus::Histogram* batch_size = nullptr);
  static constexpr size_t kDefaultMaxWaiting = 1024;
  ~BatchScheduler();  // Drain(now)
  BatchScheduler(const BatchScheduler&) = delete;
  BatchScheduler& operator=(const BatchScheduler&) = delete;

  // Queues `g`; returns its ticket (for Cancel). Unavailable once draining,
  // ResourceExhausted with max_waiting requests waiting.
  absl::StatusOr<uint64_t> Enqueue(ScheduledGeneration g);
  // Queues every one of `gs` at once, so that they join the same engine
  // step (as far as max_sequences allows); their tickets in order. All or
  // none: ResourceExhausted when they do not all fit under max_waiting.
  absl::StatusOr<std::vector<uint64_t>> EnqueueAll(
      std::vector<ScheduledGeneration> gs);
  // Cancels the request with `ticket`; unknown or finished tickets are
  // ignored.
  void Cancel(uint64_t ticket);
  // Stops accepting, lets queued and in-flight requests finish until
  // `deadline`, then cancels what is left (in-flight sequences still finish
  // as kCancelled), and joins the engine thread. Idempotent.
  void Drain(absl::Time deadline);

  // Requests queued or in flight.
  int64_t active() const;
  // The most sequences that sampled a token in one engine Step so far
  // (evidence of continuous batching: > 1 when requests shared a step).
  uint64_t max_batch_sequences() const { return max_batch_sequences_.load(); }

 private:
  struct Waiting {
    uint64_t ticket;
    ScheduledGeneration g;
  };
  struct Running {
    uint64_t ticket;
    ScheduledGeneration g;
  };
  absl::Status QueueFull(size_t wanted) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void Loop();
  void AdmitAndCancel();
  void StepOnce();

  kernels::model::Engine& engine_;
  const int64_t max_sequences_;
  const size_t max_waiting_;

  mutable absl::Mutex mu_;
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool cancel_all_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t next_ticket_ ABSL_GUARDED_BY(mu_) = 1;
  std::deque<Waiting> waiting_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> cancels_ ABSL_GUARDED_BY(mu_);
  int64_t running_count_ ABSL_GUARDED_BY(mu_) = 0;

  // Engine thread only.
  std::map<kernels::model::SequenceId, Running> running_;
  std::map<uint64_t, kernels::model::SequenceId> seq_of_ticket_;

  prometheus::Histogram* const batch_size_;
  std::atomic<uint64_t> max_batch_sequences_{0};

  std::thread thread_;
  bool joined_ = false;
};

}  // namespace layerproof::prover

#endif  // LAYERPROOF_PROVER_BATCH_SCHEDULER_H_
