#include "kernels/cpu/thread_pool.h"

#include <cstdlib>

namespace layerproof::kernels::cpu {

ThreadPool::ThreadPool(int threads) {
  for (int w = 1; w < threads; ++w) {
    workers_.emplace_back([this, w] { WorkerLoop(w); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::RunTasks(int worker) {
  for (;;) {
    int64_t i;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (next_ >= tasks_) return;
      i = next_++;
    }
    (*task_)(i, worker);
    std::lock_guard<std::mutex> lock(mu_);
    if (++finished_ == tasks_) done_cv_.notify_all();
  }
}

void ThreadPool::WorkerLoop(int worker) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    RunTasks(worker);
  }
}

void ThreadPool::ParallelFor(int64_t tasks,
                             const std::function<void(int64_t, int)>& task) {
  if (tasks <= 0) return;
  if (workers_.empty() || tasks == 1) {
    for (int64_t i = 0; i < tasks; ++i) task(i, 0);
    return;
  }
  std::lock_guard<std::mutex> call_lock(call_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    task_ = &task;
    tasks_ = tasks;
    next_ = 0;
    finished_ = 0;
    ++generation_;
  }
  start_cv_.notify_all();
  RunTasks(0);
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return finished_ == tasks_; });
  task_ = nullptr;
}

int DefaultThreadCount() {
  if (const char* env = std::getenv("LAYERPROOF_THREADS")) {
    const int n = std::atoi(env);
    if (n >= 1 && n <= 1024) return n;
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

}  // namespace layerproof::kernels::cpu
