// A fixed pool of worker threads for the CPU backends' fork-join loops.
//
// Work is cut into tasks by the caller from the problem's shape alone; a task
// computes whole outputs, so which thread runs it, and how many threads there
// are, never changes a result bit (docs/determinism.md §5).
// Thread safety: ParallelFor may be called from several threads; calls are
// serialised. Destroying the pool must not race with ParallelFor.
#ifndef LAYERPROOF_KERNELS_CPU_THREAD_POOL_H_
#define LAYERPROOF_KERNELS_CPU_THREAD_POOL_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace layerproof::kernels::cpu {

class ThreadPool {
 public:
  // threads >= 1 counts the calling thread.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs task(i, worker) for i in [0, tasks) and returns when all are done;
  // worker in [0, threads()) identifies the running thread, for per-thread
  // scratch. Tasks are handed out dynamically.
  void ParallelFor(int64_t tasks,
                   const std::function<void(int64_t, int)>& task);

 private:
  void WorkerLoop(int worker);
  void RunTasks(int worker);

  std::mutex call_mu_;  // serialises ParallelFor calls
  std::mutex mu_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(int64_t, int)>* task_ = nullptr;
  int64_t tasks_ = 0;
  int64_t next_ = 0;
  int64_t finished_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

// LAYERPROOF_THREADS if set (>= 1), else the hardware concurrency.
int DefaultThreadCount();

}  // namespace layerproof::kernels::cpu

#endif  // LAYERPROOF_KERNELS_CPU_THREAD_POOL_H_
