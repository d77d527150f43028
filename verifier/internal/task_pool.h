// A fixed pool of worker threads running queued tasks, with the shutdown the
// verifier needs: Stop refuses new tasks and drops the queued ones (calling
// their `dropped` callback, e.g. to finish an RPC with UNAVAILABLE), then
// waits for the running ones until a deadline.
//
// Thread safety: every method is thread-safe. Tasks run on the pool's
// threads; a task must not wait for another task of the same pool.
#ifndef LAYERPROOF_VERIFIER_INTERNAL_TASK_POOL_H_
#define LAYERPROOF_VERIFIER_INTERNAL_TASK_POOL_H_

#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace layerproof::verifier::internal {

class TaskPool {
 public:
  struct Task {
    std::function<void()> run;
    // Called instead of run when the task is dropped by Stop; may be empty.
    std::function<void()> dropped;
  };

  explicit TaskPool(int threads);
  // Stops (dropping queued tasks) and joins every thread, waiting for the
  // running tasks however long they take.
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  // Queues `task`; false (and nothing queued or called) once stopped.
  bool Post(Task task);
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

  mutable absl::Mutex mu_;
  std::deque<Task> queue_ ABSL_GUARDED_BY(mu_);
  size_t running_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace layerproof::verifier::internal

#endif  // LAYERPROOF_VERIFIER_INTERNAL_TASK_POOL_H_
