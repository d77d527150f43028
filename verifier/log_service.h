// The verifier's Log service (log.proto; DESIGN §5, §7) over the gRPC
// callback API: Submit (prover role, through the Submitter's pool, never on
// a reactor thread) and the open reads: GetCheckpoint, GetInclusionProof
// (by index or leaf hash; tree_size 0 = the latest checkpoint's),
// GetConsistencyProof and GetEntries (1..1000, and at most 16 MiB of
// entries per response; fewer are returned past that). The reads are
// bounded point lookups, answered on the reactor thread.
//
// GetInclusionProof's LogInclusion carries the latest checkpoint when its
// size is the proof's tree size, and no checkpoint otherwise (the log keeps
// only the latest note; the caller holds the one it asks about).
//
// Thread safety: as a gRPC service, every handler may run concurrently.
#ifndef LAYERPROOF_VERIFIER_LOG_SERVICE_H_
#define LAYERPROOF_VERIFIER_LOG_SERVICE_H_

#include <memory>

#include "layerproof/v1/log.grpc.pb.h"
#include "rpc/peer_limiter.h"
#include "rpc/roles.h"
#include "verifier/internal/db_handles.h"
#include "verifier/submission.h"

namespace layerproof::verifier {

inline constexpr size_t kMaxEntriesResponseBytes = 16 << 20;

class LogService final : public v1::Log::CallbackService {
 public:
  // `submitter`, `authorizer` and `peers` must outlive the service. The
  // reads are open to anyone, each admitted by `peers`. Without
  // `serves_submit`, Submit answers UNIMPLEMENTED (the instance for a
  // listener that only serves reads; VerifierNode::split_services).
  LogService(std::shared_ptr<internal::DbHandles> dbs, Submitter& submitter,
             const rpc::Authorizer& authorizer, rpc::PeerLimiter& peers,
             bool serves_submit = true)
      : dbs_(std::move(dbs)),
        submitter_(submitter),
        authorizer_(authorizer),
        peers_(peers),
        serves_submit_(serves_submit) {}

  grpc::ServerUnaryReactor* Submit(grpc::CallbackServerContext* context,
                                   const v1::SubmitRequest* request,
                                   v1::SubmitResponse* response) override;
  grpc::ServerUnaryReactor* GetCheckpoint(
      grpc::CallbackServerContext* context,
      const v1::GetCheckpointRequest* request,
      v1::GetCheckpointResponse* response) override;
  grpc::ServerUnaryReactor* GetInclusionProof(
      grpc::CallbackServerContext* context,
      const v1::GetInclusionProofRequest* request,
      v1::GetInclusionProofResponse* response) override;
  grpc::ServerUnaryReactor* GetConsistencyProof(
      grpc::CallbackServerContext* context,
      const v1::GetConsistencyProofRequest* request,
      v1::GetConsistencyProofResponse* response) override;
  grpc::ServerUnaryReactor* GetEntries(
      grpc::CallbackServerContext* context,
      const v1::GetEntriesRequest* request,
      v1::GetEntriesResponse* response) override;

 private:
  std::shared_ptr<internal::DbHandles> dbs_;
  Submitter& submitter_;
  const rpc::Authorizer& authorizer_;
  rpc::PeerLimiter& peers_;
  const bool serves_submit_;
};

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_LOG_SERVICE_H_
