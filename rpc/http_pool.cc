#include "rpc/http_pool.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace layerproof::rpc {
namespace {

class BoundedPool final : public httplib::TaskQueue {
 public:
  BoundedPool(int threads, size_t max_queued) : max_queued_(max_queued) {
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { Run(); });
  }
  ~BoundedPool() override = default;

  void enqueue(std::function<void()> fn) override {
    std::unique_lock<std::mutex> lock(mu_);
    space_.wait(lock, [&] { return stop_ || jobs_.size() < max_queued_; });
    if (stop_) {
      lock.unlock();
      fn();  // stopping: answer (503) and close it here
      return;
    }
    jobs_.push_back(std::move(fn));
    work_.notify_one();
  }
  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    work_.notify_all();
    space_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

 private:
  void Run() {
    while (true) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // stopping, nothing left
        fn = std::move(jobs_.front());
        jobs_.pop_front();
        space_.notify_one();
      }
      fn();
    }
  }

  const size_t max_queued_;
  std::mutex mu_;
  std::condition_variable work_, space_;
  std::deque<std::function<void()>> jobs_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace

httplib::TaskQueue* NewBoundedHttpPool(int threads, size_t max_queued) {
  return new BoundedPool(threads, max_queued);
}

}  // namespace layerproof::rpc
