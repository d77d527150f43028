#include "prover/log_submitter.h"

#include <algorithm>
#include <utility>

#include "check/log_proofs.h"
#include "grpcpp/client_context.h"
#include "kernels/status.h"
#include "store/checkpoint.h"
#include "store/crypto.h"
#include "store/internal/str_cat.h"
#include "store/merkle.h"
#include "rpc/structured_log.h"

namespace layerproof::prover {
namespace {

using store::internal::Cat;

std::string Hex(std::string_view s) {
  return store::HexEncode(store::AsBytes(s));
}

// The inclusion of `envelope` that `result` and `response` state, checked
// against the checkpoint's root.
absl::StatusOr<v1::LogInclusion> CheckedInclusion(
    const std::string& envelope, const v1::SubmitResult& result,
    const v1::SubmitResponse& response, const store::Checkpoint& checkpoint) {
  if (checkpoint.size != response.tree_size()) {
    return absl::InvalidArgumentError(
        Cat("SubmitResponse.tree_size ", response.tree_size(),
            " differs from its checkpoint's size ", checkpoint.size));
  }
  LP_RETURN_IF_ERROR(check::CheckInclusionIn(checkpoint, result.leaf_index(),
                                             result.inclusion_proof(), envelope,
                                             "SubmitResult"));
  v1::LogInclusion inclusion;
  inclusion.set_leaf_index(result.leaf_index());
  inclusion.set_tree_size(response.tree_size());
  inclusion.set_checkpoint(response.checkpoint());
  *inclusion.mutable_inclusion_proof() = result.inclusion_proof();
  return inclusion;
}

}  // namespace

absl::StatusOr<store::Checkpoint> LogSubmitter::AcceptCheckpoint(
    const std::string& note) {
  absl::StatusOr<store::Checkpoint> cp =
      log_key_->Verify(note, expected_origin_);
  if (!cp.ok()) {
    return absl::Status(
        cp.status().code(),
        Cat("SubmitResponse.checkpoint: ", std::string(cp.status().message())));
  }
  const store::Checkpoint& last = last_checkpoint_;
  v1::GetConsistencyProofResponse response;
  if (check::NeedsConsistencyProof(last, *cp)) {
    v1::GetConsistencyProofRequest request;
    request.set_old_size(last.size);
    request.set_new_size(cp->size);
    grpc::ClientContext context;
    context.set_deadline(
        absl::ToChronoTime(absl::Now() + options_.rpc_timeout));
    const grpc::Status status =
        stub_->GetConsistencyProof(&context, request, &response);
    if (!status.ok()) {
      return absl::UnavailableError(Cat("Log.GetConsistencyProof(", last.size,
                                        ", ", cp->size,
                                        "): ", status.error_message()));
    }
  }
  LP_RETURN_IF_ERROR(check::CheckCheckpointFollows(
      last, *cp, response.proof(), "SubmitResponse.checkpoint"));
  if (cp->size != last.size) {
    // Kept before it is relied on: a crash after this still has it.
    LP_RETURN_IF_ERROR(journal_.SetLogCheckpoint(note));
  }
  last_checkpoint_ = *cp;
  return cp;
}

bool IsTransientSubmitCode(int32_t code) {
  switch (static_cast<absl::StatusCode>(code)) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kInternal:
      return true;
    default:
      return false;
  }
}

LogSubmitter::LogSubmitter(
    ProverJournal& journal, std::shared_ptr<grpc::Channel> channel,
    std::shared_ptr<const store::CheckpointVerifier> log_key,
    std::string log_origin, LogSubmitterOptions options)
    : journal_(journal),
      stub_(v1::Log::NewStub(std::move(channel))),
      log_key_(std::move(log_key)),
      expected_origin_(std::move(log_origin)),
      options_(options) {
  last_checkpoint_.size = 0;
  last_checkpoint_.root = store::EmptyRoot();
  // The last checkpoint a previous run accepted: the log's next ones must
  // extend it too. One that no longer verifies (another log key) is
  // ignored, with a warning.
  absl::StatusOr<std::optional<std::string>> stored = journal_.LogCheckpoint();
  if (stored.ok() && stored->has_value()) {
    absl::StatusOr<store::Checkpoint> cp =
        log_key_->Verify(**stored, expected_origin_);
    if (cp.ok()) {
      last_checkpoint_ = *cp;
    } else {
      rpc::LogEvent("warn", "prover.submitter", "stored_checkpoint_ignored",
                    {{"message", std::string(cp.status().message())}});
    }
  }
  thread_ = std::thread([this] { Loop(); });
  expiry_thread_ = std::thread([this] { ExpiryLoop(); });
}

LogSubmitter::~LogSubmitter() { Stop(); }

void LogSubmitter::Requeue(const std::vector<v1::JournalEntry>& pending) {
  absl::MutexLock lock(&mu_);
  for (const v1::JournalEntry& e : pending) {
    queue_.push_back(Item{e.request_id(), e.commitment_envelope()});
  }
  wake_ = true;
}

void LogSubmitter::Submit(std::string request_id, std::string envelope,
                          absl::Time receipt_deadline,
                          ReceiptCallback on_receipt) {
  {
    absl::MutexLock lock(&mu_);
    if (!stop_) {
      if (on_receipt) {
        waiters_.emplace(request_id,
                         Waiter{receipt_deadline, std::move(on_receipt)});
        waiters_changed_ = true;
      }
      queue_.push_back(Item{std::move(request_id), std::move(envelope)});
      wake_ = true;
      return;
    }
  }
  // Stopped: the entry stays pending in the journal for the next start.
  if (on_receipt) on_receipt(ReceiptOutcome{});
}

absl::Status LogSubmitter::Flush(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  const bool done = mu_.AwaitWithDeadline(
      absl::Condition(
          +[](LogSubmitter* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu_) {
            return s->queue_.empty() && s->in_flight_ == 0;
          },
          this),
      deadline);
  if (done) return absl::OkStatus();
  return absl::DeadlineExceededError(
      Cat("log submitter: ", queue_.size() + in_flight_,
          " commitments not yet logged; they stay pending in the journal"));
}

void LogSubmitter::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (joined_) return;
    stop_ = true;
    wake_ = true;
    if (current_call_ != nullptr) current_call_->TryCancel();
  }
  thread_.join();
  expiry_thread_.join();
  std::multimap<std::string, Waiter> waiters;
  {
    absl::MutexLock lock(&mu_);
    joined_ = true;
    waiters.swap(waiters_);
  }
  for (auto& [id, w] : waiters) w.callback(ReceiptOutcome{});
}

size_t LogSubmitter::pending() const {
  absl::MutexLock lock(&mu_);
  return queue_.size() + in_flight_;
}

void LogSubmitter::Resolve(const std::string& request_id,
                           const ReceiptOutcome& outcome) {
  std::vector<ReceiptCallback> callbacks;
  {
    absl::MutexLock lock(&mu_);
    auto [first, last] = waiters_.equal_range(request_id);
    for (auto it = first; it != last; ++it) {
      callbacks.push_back(std::move(it->second.callback));
    }
    waiters_.erase(first, last);
  }
  for (ReceiptCallback& cb : callbacks) cb(outcome);
}

void LogSubmitter::ExpiryLoop() {
  absl::MutexLock lock(&mu_);
  while (!stop_) {
    absl::Time wake_at = absl::InfiniteFuture();
    for (const auto& [id, w] : waiters_) {
      wake_at = std::min(wake_at, w.deadline);
    }
    if (!waiters_changed_) {
      mu_.AwaitWithDeadline(
          absl::Condition(
              +[](LogSubmitter* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu_) {
                return s->stop_ || s->waiters_changed_;
              },
              this),
          wake_at);
    }
    waiters_changed_ = false;
    if (stop_) break;
    std::vector<ReceiptCallback> expired;
    const absl::Time now = absl::Now();
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (it->second.deadline <= now) {
        expired.push_back(std::move(it->second.callback));
        it = waiters_.erase(it);
      } else {
        ++it;
      }
    }
    if (expired.empty()) continue;
    mu_.Unlock();
    for (ReceiptCallback& cb : expired) cb(ReceiptOutcome{});
    mu_.Lock();
  }
}

void LogSubmitter::Loop() {
  while (true) {
    std::vector<Item> batch;
    {
      absl::MutexLock lock(&mu_);
      const absl::Time wake_at =
          queue_.empty() ? absl::InfiniteFuture() : next_attempt_;
      if (!wake_ && !stop_) {
        mu_.AwaitWithDeadline(absl::Condition(&wake_), wake_at);
      }
      wake_ = false;
      if (stop_) return;
      if (!queue_.empty() && absl::Now() >= next_attempt_) {
        while (!queue_.empty() && batch.size() < options_.max_batch) {
          batch.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
        in_flight_ = batch.size();
      }
    }
    if (batch.empty()) continue;
    const size_t sent = batch.size();
    std::vector<std::pair<std::string, ReceiptOutcome>> resolved;
    std::vector<Item> retry = SubmitBatch(std::move(batch), resolved);
    {
      absl::MutexLock lock(&mu_);
      in_flight_ -= sent;
      if (retry.empty()) {
        backoff_ = absl::ZeroDuration();
        next_attempt_ = absl::InfinitePast();
        if (!queue_.empty()) wake_ = true;
      } else {
        backoff_ = backoff_ == absl::ZeroDuration()
                       ? options_.initial_backoff
                       : std::min(backoff_ * 2, options_.max_backoff);
        next_attempt_ = absl::Now() + backoff_;
        for (auto it = retry.rbegin(); it != retry.rend(); ++it) {
          queue_.push_front(std::move(*it));
        }
      }
    }
    // After the counts are updated, so that a caller woken by its receipt
    // sees pending() without its entry.
    for (const auto& [id, outcome] : resolved) Resolve(id, outcome);
  }
}

std::vector<LogSubmitter::Item> LogSubmitter::SubmitBatch(
    std::vector<Item> batch,
    std::vector<std::pair<std::string, ReceiptOutcome>>& resolved) {
  v1::SubmitRequest request;
  for (const Item& item : batch) request.add_envelopes(item.envelope);
  v1::SubmitResponse response;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + options_.rpc_timeout));
  {
    absl::MutexLock lock(&mu_);
    if (stop_) return batch;
    current_call_ = &context;
  }
  const grpc::Status status = stub_->Submit(&context, request, &response);
  {
    absl::MutexLock lock(&mu_);
    current_call_ = nullptr;
  }
  if (!status.ok()) return batch;  // retried with backoff
  if (response.results_size() != static_cast<int>(batch.size())) {
    rpc::LogEvent(
        "warn", "prover.submitter", "bad_submit_response",
        {{"results", response.results_size()}, {"sent", batch.size()}});
    return batch;
  }
  absl::StatusOr<store::Checkpoint> checkpoint =
      AcceptCheckpoint(response.checkpoint());
  if (!checkpoint.ok()) {
    rpc::LogEvent("error", "prover.submitter", "bad_checkpoint",
                  {{"message", std::string(checkpoint.status().message())}});
  }
  std::vector<Item> retry;
  for (size_t i = 0; i < batch.size(); ++i) {
    Item& item = batch[i];
    const v1::SubmitResult& r = response.results(static_cast<int>(i));
    if (r.code() == 0) {
      absl::StatusOr<v1::LogInclusion> inclusion =
          checkpoint.ok()
              ? CheckedInclusion(item.envelope, r, response, *checkpoint)
              : absl::StatusOr<v1::LogInclusion>(checkpoint.status());
      if (!inclusion.ok()) {
        rpc::LogEvent("warn", "prover.submitter", "bad_inclusion",
                      {{"request_id", Hex(item.request_id)},
                       {"message", std::string(inclusion.status().message())}});
        retry.push_back(std::move(item));
        continue;
      }
      absl::Status journaled =
          journal_.SetInclusion(item.request_id, *inclusion);
      if (!journaled.ok() && !absl::IsNotFound(journaled)) {
        rpc::LogEvent("error", "prover.submitter", "journal_write_failed",
                      {{"request_id", Hex(item.request_id)},
                       {"message", std::string(journaled.message())}});
      }
      ReceiptOutcome outcome;
      outcome.kind = ReceiptOutcome::Kind::kIncluded;
      outcome.inclusion = *std::move(inclusion);
      resolved.emplace_back(item.request_id, std::move(outcome));
    } else if (IsTransientSubmitCode(r.code())) {
      retry.push_back(std::move(item));
    } else {
      rpc::LogEvent("warn", "prover.submitter", "commitment_refused",
                    {{"request_id", Hex(item.request_id)},
                     {"code", r.code()},
                     {"message", r.message()}});
      absl::Status marked =
          journal_.MarkRefused(item.request_id, r.code(), r.message());
      if (!marked.ok() && !absl::IsNotFound(marked)) {
        rpc::LogEvent("error", "prover.submitter", "journal_write_failed",
                      {{"request_id", Hex(item.request_id)},
                       {"message", std::string(marked.message())}});
      }
      ReceiptOutcome outcome;
      outcome.kind = ReceiptOutcome::Kind::kRefused;
      outcome.refusal =
          absl::Status(static_cast<absl::StatusCode>(r.code()), r.message());
      resolved.emplace_back(item.request_id, std::move(outcome));
    }
  }
  return retry;
}

}  // namespace layerproof::prover
