// The verifier's gRPC services answer most calls on the reactor thread:
// FinishNow ends such a call. Thread safety: call from the handler.
#ifndef LAYERPROOF_VERIFIER_INTERNAL_FINISH_NOW_H_
#define LAYERPROOF_VERIFIER_INTERNAL_FINISH_NOW_H_

#include "absl/status/status.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/server_callback.h"
#include "rpc/grpc_status.h"

namespace layerproof::verifier::internal {

// Finishes the call's default reactor with `status` and returns it.
inline grpc::ServerUnaryReactor* FinishNow(grpc::CallbackServerContext* context,
                                           const absl::Status& status) {
  // Lifetime: gRPC owns the default reactor; it ends after this Finish.
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(rpc::ToGrpcStatus(status));
  return reactor;
}

}  // namespace layerproof::verifier::internal

#endif  // LAYERPROOF_VERIFIER_INTERNAL_FINISH_NOW_H_
