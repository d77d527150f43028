// The one conversion between absl::Status and grpc::Status at the gRPC
// boundary (STYLE "Errors"). Abseil and gRPC status codes are numerically
// the same (both follow google.rpc.Code), so the code carries over
// unchanged; the message, which may quote a peer's bytes, crosses the
// boundary made Printable (kernels/printable.h) both ways: no raw bytes go
// to a client, and none from a hostile server reach our logs or terminal.
// Thread safety: pure functions.
#ifndef LAYERPROOF_RPC_GRPC_STATUS_H_
#define LAYERPROOF_RPC_GRPC_STATUS_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"
#include "kernels/printable.h"

namespace layerproof::rpc {

inline grpc::Status ToGrpcStatus(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()),
                      kernels::Printable(std::string_view(s.message().data(),
                                                          s.message().size())));
}

inline absl::Status FromGrpcStatus(const grpc::Status& s) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      kernels::Printable(s.error_message()));
}

}  // namespace layerproof::rpc

#endif  // LAYERPROOF_RPC_GRPC_STATUS_H_
