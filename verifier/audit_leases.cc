#include "verifier/audit_leases.h"

#include <openssl/rand.h>

#include <cstring>
#include <utility>
#include <vector>

#include "rpc/structured_log.h"
#include "store/crypto.h"
#include "store/internal/str_cat.h"

namespace layerproof::verifier {
namespace {

using store::internal::Cat;

// The outcome a worker reported, as the re-executor would have returned
// it; InvalidArgument naming the field when it is malformed.
absl::StatusOr<check::AuditOutcome> OutcomeOf(
    const v1::CompleteAuditRequest& r) {
  if (r.outcome_case() != v1::CompleteAuditRequest::kVerdict) {
    return absl::InvalidArgumentError(
        "CompleteAuditRequest.outcome: want a verdict or an error");
  }
  if (r.verdict().outcome() == v1::VERDICT_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        "CompleteAuditRequest.verdict.outcome: unspecified");
  }
  check::AuditOutcome out;
  out.verdict = r.verdict();
  if (!r.has_opening()) {
    if (r.opened_layers_size() > 0) {
      return absl::InvalidArgumentError(
          "CompleteAuditRequest.opened_layers: given without an opening");
    }
    return out;
  }
  check::Opening opening;
  opening.header = r.opening();
  for (int i = 0; i < r.opened_layers_size(); ++i) {
    const v1::OpenedLayer& l = r.opened_layers(i);
    if (l.data().size() % sizeof(float) != 0 ||
        (i > 0 && l.layer() <= r.opened_layers(i - 1).layer())) {
      return absl::InvalidArgumentError(
          Cat("CompleteAuditRequest.opened_layers[", i,
              "]: want whole fp32 values, layers ascending"));
    }
    std::vector<float>& rows = opening.layers[l.layer()];
    rows.resize(l.data().size() / sizeof(float));
    if (!rows.empty())
      std::memcpy(rows.data(), l.data().data(), l.data().size());
  }
  out.opening = std::move(opening);
  return out;
}

}  // namespace

struct AuditLeases::Job {
  v1::AuditTask task;
  std::string lease_id;  // empty: not leased
  std::string worker;
  absl::Time expires;
  std::optional<absl::StatusOr<check::AuditOutcome>> result;
};

absl::StatusOr<check::AuditOutcome> AuditLeases::Execute(v1::AuditTask task) {
  auto job = std::make_shared<Job>();
  job->task = std::move(task);
  job->task.set_lease_duration_ms(
      static_cast<uint32_t>(absl::ToInt64Milliseconds(lease_duration_)));
  absl::MutexLock lock(&mu_);
  if (shut_down_)
    return absl::UnavailableError("the verifier is shutting down");
  jobs_.push_back(job);
  const auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return job->result.has_value() || shut_down_;
  };
  mu_.Await(absl::Condition(&done));
  jobs_.remove(job);
  if (!job->lease_id.empty()) by_lease_.erase(job->lease_id);
  if (!job->result.has_value()) {
    return absl::UnavailableError(
        "the verifier is shutting down; the audit stays pending");
  }
  return *std::move(job->result);
}

void AuditLeases::ReapLocked(absl::Time now) {
  for (auto it = by_lease_.begin(); it != by_lease_.end();) {
    Job& job = *it->second;
    if (job.expires <= now) {
      rpc::LogEvent(
          "warn", "verifier.auditors", "lease_lapsed",
          {{"worker", job.worker},
           {"audit_seed",
            store::HexEncode(store::AsBytes(job.task.audit_seed()))}});
      job.lease_id.clear();
      job.worker.clear();
      ++lapsed_;
      it = by_lease_.erase(it);
    } else {
      ++it;
    }
  }
}

absl::StatusOr<std::optional<v1::AuditTask>> AuditLeases::Lease(
    const std::string& worker) {
  std::string lease_id(16, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(lease_id.data()),
                 static_cast<int>(lease_id.size())) != 1) {
    return absl::InternalError("RAND_bytes failed to draw a lease id");
  }
  absl::MutexLock lock(&mu_);
  if (shut_down_)
    return absl::UnavailableError("the verifier is shutting down");
  const absl::Time now = absl::Now();
  ReapLocked(now);
  for (const std::shared_ptr<Job>& job : jobs_) {
    if (!job->lease_id.empty() || job->result.has_value()) continue;
    job->lease_id = lease_id;
    job->worker = worker;
    job->expires = now + lease_duration_;
    by_lease_[lease_id] = job;
    v1::AuditTask task = job->task;
    task.set_lease_id(lease_id);
    task.set_lease_expires_unix_nanos(absl::ToUnixNanos(job->expires));
    return std::optional<v1::AuditTask>(std::move(task));
  }
  return std::optional<v1::AuditTask>();
}

absl::StatusOr<int64_t> AuditLeases::Renew(const std::string& lease_id) {
  absl::MutexLock lock(&mu_);
  const absl::Time now = absl::Now();
  ReapLocked(now);
  auto it = by_lease_.find(lease_id);
  if (it == by_lease_.end()) {
    return absl::FailedPreconditionError(
        "RenewAuditLeaseRequest.lease_id: not a current lease (it lapsed, "
        "was completed, or never was)");
  }
  it->second->expires = now + lease_duration_;
  return absl::ToUnixNanos(it->second->expires);
}

absl::Status AuditLeases::Complete(const v1::CompleteAuditRequest& request) {
  std::optional<absl::StatusOr<check::AuditOutcome>> result;
  if (request.outcome_case() == v1::CompleteAuditRequest::kError) {
    result = absl::UnavailableError(Cat("the auditor could not run the audit: ",
                                        check::VerdictDetail(request.error())));
  } else {
    absl::StatusOr<check::AuditOutcome> outcome = OutcomeOf(request);
    if (!outcome.ok()) return outcome.status();
    result = *std::move(outcome);
  }
  absl::MutexLock lock(&mu_);
  ReapLocked(absl::Now());
  auto it = by_lease_.find(request.lease_id());
  if (it == by_lease_.end()) {
    return absl::FailedPreconditionError(
        "CompleteAuditRequest.lease_id: not a current lease (it lapsed and "
        "the audit went to another worker, or it was completed); the "
        "outcome is not kept");
  }
  it->second->result = std::move(result);
  by_lease_.erase(it);
  return absl::OkStatus();
}

void AuditLeases::Shutdown() {
  absl::MutexLock lock(&mu_);
  shut_down_ = true;
}

size_t AuditLeases::posted() const {
  absl::MutexLock lock(&mu_);
  return jobs_.size();
}

size_t AuditLeases::leased() const {
  absl::MutexLock lock(&mu_);
  return by_lease_.size();
}

uint64_t AuditLeases::lapsed() const {
  absl::MutexLock lock(&mu_);
  return lapsed_;
}

std::vector<std::string> AuditLeases::Holders() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out;
  const absl::Time now = absl::Now();
  for (const auto& [id, job] : by_lease_) {
    if (job->expires > now) out.push_back(job->worker);
  }
  return out;
}

}  // namespace layerproof::verifier
