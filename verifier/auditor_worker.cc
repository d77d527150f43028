#include "verifier/auditor_worker.h"

#include <cstring>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "check/re_executor.h"
#include "grpcpp/grpcpp.h"
#include "layerproof/v1/audit_work.grpc.pb.h"
#include "rpc/structured_log.h"
#include "store/crypto.h"
#include "verifier/opening_client.h"

namespace layerproof::verifier {
namespace {

std::string DigestOf(const kernels::model::Model& model) {
  const kernels::Sha256Digest& root = model.digest().root;
  return std::string(reinterpret_cast<const char*>(root.data()), root.size());
}

// The request of a completed audit, with its opening for the evidence.
v1::CompleteAuditRequest CompletionOf(const std::string& lease_id,
                                      absl::StatusOr<check::AuditOutcome> r) {
  v1::CompleteAuditRequest out;
  out.set_lease_id(lease_id);
  if (!r.ok()) {
    out.set_error(std::string(r.status().message()));
    return out;
  }
  *out.mutable_verdict() = r->verdict;
  if (r->opening.has_value()) {
    *out.mutable_opening() = r->opening->header;
    for (const auto& [layer, rows] : r->opening->layers) {
      v1::OpenedLayer* l = out.add_opened_layers();
      l->set_layer(layer);
      l->mutable_data()->resize(rows.size() * sizeof(float));
      if (!rows.empty()) {
        std::memcpy(l->mutable_data()->data(), rows.data(),
                    rows.size() * sizeof(float));
      }
    }
  }
  return out;
}

}  // namespace

struct AuditorWorker::Impl {
  AuditorWorkerOptions options;
  AuditorWorker* owner = nullptr;
  std::unique_ptr<v1::AuditWork::Stub> stub;
  std::unique_ptr<check::ReExecutor> re_executor;
  std::unique_ptr<GrpcOpeningSource> openings;
  absl::Duration lease_duration = absl::Seconds(60);

  absl::Mutex mu;
  bool stop ABSL_GUARDED_BY(mu) = false;
  std::set<std::string> running ABSL_GUARDED_BY(mu);  // current lease ids
  std::vector<std::thread> threads;

  // Sleeps `d` unless stopped first; false when stopped.
  bool SleepUnlessStopped(absl::Duration d) {
    absl::MutexLock lock(&mu);
    mu.AwaitWithTimeout(absl::Condition(&stop), d);
    return !stop;
  }

  void Work() {
    while (true) {
      {
        absl::MutexLock lock(&mu);
        if (stop) return;
      }
      v1::LeaseAuditRequest request;
      request.set_worker_id(options.worker_id);
      v1::LeaseAuditResponse response;
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() +
                           std::chrono::seconds(10));
      const grpc::Status s = stub->Lease(&context, request, &response);
      if (!s.ok() || !response.has_task()) {
        if (!s.ok()) {
          rpc::LogEvent(
              "warn", "auditor", "lease_failed",
              {{"code", int(s.error_code())}, {"message", s.error_message()}});
        }
        if (!SleepUnlessStopped(options.poll_interval)) return;
        continue;
      }
      Run(response.task());
    }
  }

  void Run(const v1::AuditTask& task) {
    {
      absl::MutexLock lock(&mu);
      running.insert(task.lease_id());
      lease_duration = absl::Milliseconds(task.lease_duration_ms());
    }
    store::KeyRing keys;
    if (!task.prover_public_key().empty()) {
      absl::StatusOr<store::Ed25519PublicKey> key =
          store::Ed25519PublicKey::FromRaw(
              store::AsBytes(task.prover_public_key()));
      if (key.ok()) keys.Add(*key);
    }
    if (absl::Status s = openings->AddProver(
            task.prover_id(), task.opening_address(), options.prover_tls);
        !s.ok()) {
      Complete(CompletionOf(task.lease_id(), s));
      return;
    }
    check::AuditPlan plan;
    plan.layers.assign(task.layers().begin(), task.layers().end());
    plan.all_layers = task.all_layers();
    plan.audit_seed = task.audit_seed();
    absl::StatusOr<check::AuditOutcome> outcome = re_executor->Audit(
        task.commitment_envelope(), task.commitment_leaf_index(), plan, keys,
        *openings, absl::Milliseconds(task.opening_timeout_ms()));
    Complete(CompletionOf(task.lease_id(), std::move(outcome)));
  }

  void Complete(const v1::CompleteAuditRequest& request) {
    {
      absl::MutexLock lock(&mu);
      running.erase(request.lease_id());
    }
    v1::CompleteAuditResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(60));
    const grpc::Status s = stub->Complete(&context, request, &response);
    if (s.ok()) {
      owner->completed_.fetch_add(1);
      return;
    }
    owner->refused_.fetch_add(1);
    rpc::LogEvent(
        "warn", "auditor", "completion_refused",
        {{"code", int(s.error_code())}, {"message", s.error_message()}});
  }

  // Renews every running lease each third of the lease duration.
  void Renew() {
    while (true) {
      std::set<std::string> leases;
      absl::Duration every;
      {
        absl::MutexLock lock(&mu);
        every = lease_duration / 3;
        mu.AwaitWithTimeout(absl::Condition(&stop), every);
        if (stop) return;
        leases = running;
      }
      for (const std::string& id : leases) {
        v1::RenewAuditLeaseRequest request;
        request.set_lease_id(id);
        v1::RenewAuditLeaseResponse response;
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() +
                             std::chrono::seconds(5));
        (void)stub->Renew(&context, request, &response);
      }
    }
  }
};

AuditorWorker::AuditorWorker(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

uint64_t AuditorWorker::openings_unreachable() const {
  return impl_->openings->unreachable_attempts();
}

AuditorWorker::~AuditorWorker() { Stop(); }

void AuditorWorker::Stop() {
  {
    absl::MutexLock lock(&impl_->mu);
    if (impl_->stop && impl_->threads.empty()) return;
    impl_->stop = true;
  }
  for (std::thread& t : impl_->threads) t.join();
  impl_->threads.clear();
}

absl::StatusOr<std::unique_ptr<AuditorWorker>> AuditorWorker::Start(
    AuditorWorkerOptions options) {
  if (options.engine == nullptr) {
    return absl::InvalidArgumentError("AuditorWorkerOptions.engine: required");
  }
  if (options.concurrency < 1 || options.concurrency > 256) {
    return absl::InvalidArgumentError(
        "AuditorWorkerOptions.concurrency: want 1..256");
  }
  auto impl = std::make_unique<Impl>();
  Impl& n = *impl;
  n.options = std::move(options);
  LP_ASSIGN_OR_RETURN(
      std::shared_ptr<grpc::Channel> channel,
      rpc::MakeChannel(n.options.verifier_address, n.options.verifier_tls));
  n.stub = v1::AuditWork::NewStub(channel);
  n.re_executor = std::make_unique<check::ReExecutor>(
      *n.options.engine, DigestOf(n.options.engine->model()));
  GrpcOpeningSourceOptions oo;
  oo.max_opening_bytes = n.options.max_opening_bytes;
  n.openings = std::make_unique<GrpcOpeningSource>(oo);
  std::unique_ptr<AuditorWorker> worker(new AuditorWorker(std::move(impl)));
  Impl& w = *worker->impl_;
  w.owner = worker.get();
  for (int i = 0; i < w.options.concurrency; ++i) {
    w.threads.emplace_back([&w] { w.Work(); });
  }
  w.threads.emplace_back([&w] { w.Renew(); });
  rpc::LogEvent("info", "auditor", "started",
                {{"worker", w.options.worker_id},
                 {"verifier", w.options.verifier_address},
                 {"concurrency", w.options.concurrency}});
  return worker;
}

}  // namespace layerproof::verifier
