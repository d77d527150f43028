#include "rpc/task_pool.h"

#include <utility>

#include "store/internal/str_cat.h"

namespace layerproof::rpc {

using store::internal::Cat;

TaskPool::TaskPool(int threads, size_t max_queued) : max_queued_(max_queued) {
  if (threads < 1) threads = 1;
  threads_.reserve(size_t(threads));
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

TaskPool::~TaskPool() {
  Stop(absl::InfinitePast());
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

absl::Status TaskPool::Offer(Task task, std::string_view what) {
  absl::MutexLock lock(&mu_);
  if (stopped_ || refusing_) {
    return absl::UnavailableError(Cat(what, ": shutting down"));
  }
  if (queue_.size() >= max_queued_) {
    return absl::ResourceExhaustedError(
        Cat(what, ": ", queue_.size(), " tasks queued, the most it holds; "
            "retry later"));
  }
  queue_.push_back(std::move(task));
  return absl::OkStatus();
}

void TaskPool::Drain() {
  {
    absl::MutexLock lock(&mu_);
    refusing_ = true;
    auto idle = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return queue_.empty() && running_ == 0;
    };
    mu_.Await(absl::Condition(&idle));
    stopped_ = true;  // the workers return once the queue is empty
  }
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

bool TaskPool::Idle() const {
  absl::MutexLock lock(&mu_);
  return queue_.empty() && running_ == 0;
}

bool TaskPool::WaitIdle(absl::Time deadline) const {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return queue_.empty() && running_ == 0;
  };
  return mu_.AwaitWithDeadline(absl::Condition(&idle), deadline);
}

bool TaskPool::Stop(absl::Time deadline) {
  std::deque<Task> dropped;
  {
    absl::MutexLock lock(&mu_);
    stopped_ = refusing_ = true;
    dropped.swap(queue_);
  }
  for (Task& t : dropped) {
    if (t.dropped) t.dropped();
  }
  absl::MutexLock lock(&mu_);
  auto done = [this]()
                  ABSL_SHARED_LOCKS_REQUIRED(mu_) { return running_ == 0; };
  return mu_.AwaitWithDeadline(absl::Condition(&done), deadline);
}

size_t TaskPool::queued() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

size_t TaskPool::running() const {
  absl::MutexLock lock(&mu_);
  return running_;
}

void TaskPool::Work() {
  while (true) {
    Task task;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stopped_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;  // stopped and drained
      task = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    task.run();
    absl::MutexLock lock(&mu_);
    --running_;
  }
}

}  // namespace layerproof::rpc
