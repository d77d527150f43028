// The one conversion between absl::Status and grpc::Status at the gRPC
// boundary (STYLE "Errors"). Abseil and gRPC status codes are numerically
// the same (both follow google.rpc.Code), so the code and message carry over
// unchanged. Thread safety: pure functions.
#ifndef LAYERPROOF_RPC_GRPC_STATUS_H_
#define LAYERPROOF_RPC_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace layerproof::rpc {

inline grpc::Status ToGrpcStatus(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()),
                      std::string(s.message()));
}

inline absl::Status FromGrpcStatus(const grpc::Status& s) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      s.error_message());
}

}  // namespace layerproof::rpc

#endif  // LAYERPROOF_RPC_GRPC_STATUS_H_
