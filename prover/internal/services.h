// The prover's gRPC services (DESIGN §7): Inference (Generate, unary and
// streamed, and ModelInfo) and Opening (Open, GetCommitment), on gRPC's
// callback API. Handlers validate, hand the work on (the engine thread via
// InferencePipeline, the opening worker pool for replays) and finish from
// there; nothing long runs on a reactor thread.
//
// Thread safety: the services are called by gRPC from any thread; what
// they share (ServiceContext) is immutable or thread-safe.
#ifndef LAYERPROOF_PROVER_INTERNAL_SERVICES_H_
#define LAYERPROOF_PROVER_INTERNAL_SERVICES_H_

#include <cstdint>
#include <memory>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kernels/model/engine.h"
#include "layerproof/v1/inference.grpc.pb.h"
#include "layerproof/v1/opening.grpc.pb.h"
#include "prover/inference_pipeline.h"
#include "prover/internal/prover_faults.h"
#include "prover/journal.h"
#include "prover/prover_metrics.h"
#include "prover/validation.h"
#include "rpc/peer_limiter.h"
#include "rpc/roles.h"
#include "rpc/task_pool.h"
#include "text/model_text.h"

namespace layerproof::prover::internal {

// The journal as the services see it: gone (null) once the node shut down.
class JournalHandle {
 public:
  explicit JournalHandle(std::shared_ptr<ProverJournal> journal)
      : journal_(std::move(journal)) {}
  std::shared_ptr<ProverJournal> Get() const {
    absl::MutexLock lock(&mu_);
    return journal_;
  }
  void Close() {
    std::shared_ptr<ProverJournal> closing;
    {
      absl::MutexLock lock(&mu_);
      closing.swap(journal_);
    }
  }

 private:
  mutable absl::Mutex mu_;
  std::shared_ptr<ProverJournal> journal_ ABSL_GUARDED_BY(mu_);
};

struct ServiceContext {
  InferencePipeline* pipeline = nullptr;
  const kernels::model::Engine* engine = nullptr;
  const text::ModelText* text = nullptr;  // may be null
  GenerateLimits limits;
  v1::ModelInfoResponse model_info;
  JournalHandle* journal = nullptr;
  rpc::TaskPool* opening_pool = nullptr;
  std::unique_ptr<rpc::Authorizer> authorizer;
  std::unique_ptr<rpc::PeerLimiter> peer_limiter;
  uint64_t max_opening_bytes = 0;
  absl::Duration max_opening_time = absl::InfiniteDuration();
  ProverFaults* faults = nullptr;    // tests only
  ProverMetrics* metrics = nullptr;  // may be null
};

// Who may call Inference.Generate(Stream), and how often: a caller with a
// verified client certificate (mTLS) needs role `client`; any other caller
// is admitted per peer address (context.peer_limiter). The lease is held
// until the call finishes.
absl::StatusOr<rpc::PeerLease> AdmitGenerate(
    const ServiceContext& context, const grpc::ServerContextBase& call,
    std::string_view method);

class InferenceService final : public v1::Inference::CallbackService {
 public:
  explicit InferenceService(const ServiceContext& context)
      : context_(context) {}

  grpc::ServerUnaryReactor* Generate(grpc::CallbackServerContext* context,
                                     const v1::GenerateRequest* request,
                                     v1::GenerateResponse* response) override;
  grpc::ServerWriteReactor<v1::GenerateEvent>* GenerateStream(
      grpc::CallbackServerContext* context,
      const v1::GenerateRequest* request) override;
  grpc::ServerUnaryReactor* ModelInfo(grpc::CallbackServerContext* context,
                                      const v1::ModelInfoRequest* request,
                                      v1::ModelInfoResponse* response) override;

 private:
  const ServiceContext& context_;
};

class OpeningService final : public v1::Opening::CallbackService {
 public:
  explicit OpeningService(const ServiceContext& context) : context_(context) {}

  grpc::ServerWriteReactor<v1::OpenChunk>* Open(
      grpc::CallbackServerContext* context,
      const v1::OpenRequest* request) override;
  grpc::ServerUnaryReactor* GetCommitment(
      grpc::CallbackServerContext* context,
      const v1::GetCommitmentRequest* request,
      v1::GetCommitmentResponse* response) override;

 private:
  const ServiceContext& context_;
};

}  // namespace layerproof::prover::internal

#endif  // LAYERPROOF_PROVER_INTERNAL_SERVICES_H_
