// A fixed pool of worker threads running queued closures in FIFO order: the
// prover's commit worker and its opening replays run here, never on a gRPC
// reactor thread or the engine thread.
//
// Thread safety: Schedule and Shutdown may be called from any thread.
// Shutdown runs every closure already queued, then joins the threads;
// closures scheduled after it are dropped (Schedule returns false).
#ifndef LAYERPROOF_PROVER_INTERNAL_WORKER_POOL_H_
#define LAYERPROOF_PROVER_INTERNAL_WORKER_POOL_H_

#include <deque>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace layerproof::prover::internal {

class WorkerPool {
 public:
  explicit WorkerPool(int threads) {
    for (int i = 0; i < (threads < 1 ? 1 : threads); ++i) {
      threads_.emplace_back([this] { Run(); });
    }
  }
  ~WorkerPool() { Shutdown(); }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `work`; false (and `work` dropped) after Shutdown.
  bool Schedule(std::function<void()> work) {
    absl::MutexLock lock(&mu_);
    if (stopping_) return false;
    queue_.push_back(std::move(work));
    return true;
  }

  // Runs what is queued, then joins. Idempotent; not from a pool thread
  // and not concurrently with itself.
  void Shutdown() {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_ && threads_.empty()) return;
      stopping_ = true;
    }
    for (std::thread& t : threads_) t.join();
    absl::MutexLock lock(&mu_);
    threads_.clear();
  }

 private:
  void Run() {
    while (true) {
      std::function<void()> work;
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(
            +[](WorkerPool* p) { return p->stopping_ || !p->queue_.empty(); },
            this));
        if (queue_.empty()) return;  // stopping and drained
        work = std::move(queue_.front());
        queue_.pop_front();
      }
      work();
    }
  }

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_;
};

}  // namespace layerproof::prover::internal

#endif  // LAYERPROOF_PROVER_INTERNAL_WORKER_POOL_H_
