// A fixed pool of worker threads running queued tasks in FIFO order: where
// the nodes run their long work (signing and journaling, opening replays,
// admissions, audits), never on a gRPC reactor thread or the engine thread.
// Two ways to stop:
//   - Drain runs every task already queued, then joins (the prover's commit
//     worker: nothing committed is dropped);
//   - Stop refuses new tasks and drops the queued ones (calling their
//     `dropped` callback, e.g. to finish an RPC with UNAVAILABLE), then
//     waits for the running ones until a deadline (the verifier, whose
//     queued work is persisted and resumes at the next start).
//
// Thread safety: every method is thread-safe. Tasks run on the pool's
// threads; a task must not wait for another task of the same pool.
#ifndef LAYERPROOF_RPC_TASK_POOL_H_
#define LAYERPROOF_RPC_TASK_POOL_H_

#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace layerproof::rpc {

class TaskPool {
 public:
  struct Task {
    std::function<void()> run;
    // Called instead of run when the task is dropped by Stop; may be empty.
    std::function<void()> dropped;
  };

  // `max_queued` bounds the tasks waiting (not running): past it Offer is
  // RESOURCE_EXHAUSTED and Post false, so no queue of a node grows without
  // bound.
  explicit TaskPool(int threads, size_t max_queued = kUnbounded);
  static constexpr size_t kUnbounded = ~size_t{0};
  // Stops (dropping queued tasks) and joins every thread, waiting for the
  // running tasks however long they take.
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  // Queues `task`: OK; UNAVAILABLE once stopped or draining;
  // RESOURCE_EXHAUSTED naming `what` when max_queued tasks wait. Nothing is
  // queued or called on an error.
  absl::Status Offer(Task task, std::string_view what = "task pool");
  // Offer(task).ok().
  bool Post(Task task) { return Offer(std::move(task)).ok(); }
  bool Post(std::function<void()> run) {
    return Post(Task{std::move(run), {}});
  }
  // Refuses new tasks, runs every queued one, then joins the threads.
  // Idempotent; not from a pool thread.
  void Drain();
  // No task queued or running.
  bool Idle() const;
  // Blocks until Idle() or `deadline`; whether it became idle.
  bool WaitIdle(absl::Time deadline) const;
  // Refuses new tasks, drops the queued ones, and waits until the running
  // ones finish or `deadline` passes; whether they all finished.
  bool Stop(absl::Time deadline);
  size_t queued() const;
  size_t running() const;

 private:
  void Work();

  const size_t max_queued_;
  mutable absl::Mutex mu_;
  std::deque<Task> queue_ ABSL_GUARDED_BY(mu_);
  size_t running_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  bool refusing_ ABSL_GUARDED_BY(mu_) = false;  // Drain or Stop began
  std::vector<std::thread> threads_;
};

}  // namespace layerproof::rpc

#endif  // LAYERPROOF_RPC_TASK_POOL_H_
