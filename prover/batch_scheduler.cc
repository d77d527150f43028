#include "prover/batch_scheduler.h"

#include <algorithm>
#include <set>
#include <utility>

#include "store/internal/str_cat.h"
#include "store/status.h"

namespace layerproof::prover {

using store::internal::Cat;

namespace model = kernels::model;

BatchScheduler::BatchScheduler(model::Engine& engine, int64_t max_sequences,
                               size_t max_waiting,
                               prometheus::Histogram* batch_size)
    : engine_(engine),
      max_sequences_(std::max<int64_t>(1, max_sequences)),
      max_waiting_(max_waiting),
      batch_size_(batch_size) {
  thread_ = std::thread([this] { Loop(); });
}

BatchScheduler::~BatchScheduler() { Drain(absl::Now()); }

absl::Status BatchScheduler::QueueFull(size_t wanted) const {
  return absl::ResourceExhaustedError(
      Cat("prover: ", waiting_.size(), " requests waiting for the engine, ",
          wanted, " more would pass the bound of ", max_waiting_,
          " (ProverOptions.max_waiting_requests); retry later"));
}

absl::StatusOr<uint64_t> BatchScheduler::Enqueue(ScheduledGeneration g) {
  absl::MutexLock lock(&mu_);
  if (draining_) {
    return absl::UnavailableError(
        "prover: shutting down, not accepting "
        "requests");
  }
  if (waiting_.size() >= max_waiting_) return QueueFull(1);
  const uint64_t ticket = next_ticket_++;
  waiting_.push_back(Waiting{ticket, std::move(g)});
  return ticket;
}

absl::StatusOr<std::vector<uint64_t>> BatchScheduler::EnqueueAll(
    std::vector<ScheduledGeneration> gs) {
  absl::MutexLock lock(&mu_);
  if (draining_) {
    return absl::UnavailableError(
        "prover: shutting down, not accepting requests");
  }
  if (gs.size() > max_waiting_ - std::min(max_waiting_, waiting_.size())) {
    return QueueFull(gs.size());
  }
  std::vector<uint64_t> tickets;
  for (ScheduledGeneration& g : gs) {
    tickets.push_back(next_ticket_++);
    waiting_.push_back(Waiting{tickets.back(), std::move(g)});
  }
  return tickets;
}

void BatchScheduler::Cancel(uint64_t ticket) {
  absl::MutexLock lock(&mu_);
  cancels_.push_back(ticket);
}

int64_t BatchScheduler::active() const {
  absl::MutexLock lock(&mu_);
  return running_count_ + static_cast<int64_t>(waiting_.size());
}

void BatchScheduler::Drain(absl::Time deadline) {
  std::deque<Waiting> dropped;
  {
    absl::MutexLock lock(&mu_);
    if (joined_) return;
    draining_ = true;
    mu_.AwaitWithDeadline(
        absl::Condition(
            +[](BatchScheduler* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu_) {
              return s->waiting_.empty() && s->running_count_ == 0;
            },
            this),
        deadline);
    dropped.swap(waiting_);
    cancel_all_ = true;
    stop_ = true;
  }
  for (Waiting& w : dropped) {
    w.g.on_finished(
        absl::CancelledError("prover: shut down before the request started"));
  }
  thread_.join();
  absl::MutexLock lock(&mu_);
  joined_ = true;
}

void BatchScheduler::Loop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      const bool busy = !engine_.idle();
      if (!busy) {
        mu_.Await(absl::Condition(
            +[](BatchScheduler* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu_) {
              return s->stop_ || !s->cancels_.empty() ||
                     s->running_count_ > 0 ||
                     (!s->waiting_.empty() &&
                      s->running_count_ < s->max_sequences_);
            },
            this));
      }
      if (stop_ && running_count_ == 0 && waiting_.empty() && !busy) return;
    }
    AdmitAndCancel();
    if (!engine_.idle()) StepOnce();
  }
}

void BatchScheduler::AdmitAndCancel() {
  std::vector<Waiting> admit;
  std::vector<Waiting> cancelled_waiting;
  std::vector<uint64_t> cancels;
  bool cancel_all = false;
  {
    absl::MutexLock lock(&mu_);
    cancels.swap(cancels_);
    cancel_all = cancel_all_;
    for (uint64_t c : cancels) {
      auto it = std::find_if(waiting_.begin(), waiting_.end(),
                             [c](const Waiting& w) { return w.ticket == c; });
      if (it != waiting_.end()) {
        cancelled_waiting.push_back(std::move(*it));
        waiting_.erase(it);
      }
    }
    while (!waiting_.empty() && running_count_ < max_sequences_) {
      admit.push_back(std::move(waiting_.front()));
      waiting_.pop_front();
      ++running_count_;
    }
  }
  for (Waiting& w : cancelled_waiting) {
    w.g.on_finished(
        absl::CancelledError("request cancelled before it started"));
  }
  for (Waiting& w : admit) {
    kernels::StatusOr<model::SequenceId> seq =
        engine_.Add(std::move(w.g.request));
    if (!seq.ok()) {
      w.g.on_finished(store::ToAbslStatus(seq.status()));
      absl::MutexLock lock(&mu_);
      --running_count_;
      continue;
    }
    seq_of_ticket_[w.ticket] = *seq;
    running_.emplace(*seq, Running{w.ticket, std::move(w.g)});
  }
  for (uint64_t c : cancels) {
    auto it = seq_of_ticket_.find(c);
    if (it != seq_of_ticket_.end()) (void)engine_.Cancel(it->second);
  }
  if (cancel_all) {
    for (auto& [seq, r] : running_) (void)engine_.Cancel(seq);
  }
}

void BatchScheduler::StepOnce() {
  std::vector<model::TokenEvent> events;
  const kernels::Status step = engine_.Step(&events);
  std::set<model::SequenceId> sampled;
  for (const model::TokenEvent& e : events) sampled.insert(e.seq);
  if (batch_size_ != nullptr && !sampled.empty()) {
    batch_size_->Observe(static_cast<double>(sampled.size()));
  }
  if (sampled.size() > max_batch_sequences_.load()) {
    max_batch_sequences_.store(sampled.size());  // engine thread only writes
  }
  for (const model::TokenEvent& e : events) {
    auto it = running_.find(e.seq);
    if (it != running_.end() && it->second.g.on_token &&
        !it->second.g.on_token(e.token) &&
        e.finish == model::FinishReason::kNone) {
      (void)engine_.Cancel(e.seq);  // before the next Step: no more tokens
    }
  }
  int64_t done = 0;
  for (model::FinishedSequence& f : engine_.TakeFinished()) {
    auto it = running_.find(f.seq);
    if (it == running_.end()) continue;  // failed earlier
    Running r = std::move(it->second);
    running_.erase(it);
    seq_of_ticket_.erase(r.ticket);
    ++done;
    r.g.on_finished(std::move(f));
  }
  if (!step.ok()) {
    const absl::Status error = store::ToAbslStatus(step);
    for (auto& [seq, r] : running_) {
      (void)engine_.Cancel(seq);
      r.g.on_finished(error);
      ++done;
    }
    running_.clear();
    seq_of_ticket_.clear();
  }
  absl::MutexLock lock(&mu_);
  running_count_ -= done;
}

}  // namespace layerproof::prover
