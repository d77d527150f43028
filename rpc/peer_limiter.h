// Per-peer bounds for the calls open to unauthenticated callers (issue 13,
// "bounded work everywhere"): Inference.Generate on a prover without mTLS,
// and the verifier's open reads (Log.Get*, Audit.GetVerdict, ListVerdicts,
// PresentPromise). Each peer (the caller's IP address; the port is not
// part of it, so new connections do not reset the count) gets
//   - a token bucket: `calls_per_second` sustained, `burst` at once;
//   - at most `max_in_flight` calls admitted and not yet finished (a lease
//     is held until the call finishes, so queued work counts too).
// Past either: RESOURCE_EXHAUSTED naming the method, the peer and the
// bound, and nothing is done. The table of peers is bounded too
// (`max_peers`; idle peers whose bucket has refilled are dropped first), so
// a flood of addresses cannot grow it. A caller with a verified client
// certificate is accountable by name and is not limited here (its roles
// bound what it may do).
//
// Why hand-written: gRPC C++ has no per-peer admission control (its
// resource quota bounds the whole server), and Debian packages no rate
// limiter library for C++; this is ~150 lines over absl::Mutex.
// Thread safety: Admit may be called from any thread; a PeerLease may be
// destroyed on any thread.
#ifndef LAYERPROOF_RPC_PEER_LIMITER_H_
#define LAYERPROOF_RPC_PEER_LIMITER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/server_context.h"

namespace layerproof::rpc {

struct PeerLimits {
  double calls_per_second = 500;
  double burst = 1000;
  int max_in_flight = 256;
  size_t max_peers = 10000;
};

class PeerLimiter;

// An admitted call; releases its in-flight slot when destroyed.
class PeerLease {
 public:
  PeerLease() = default;
  PeerLease(PeerLease&& other) noexcept { *this = std::move(other); }
  PeerLease& operator=(PeerLease&& other) noexcept;
  PeerLease(const PeerLease&) = delete;
  PeerLease& operator=(const PeerLease&) = delete;
  ~PeerLease();

 private:
  friend class PeerLimiter;
  struct State;
  PeerLease(std::shared_ptr<State> state, std::string peer)
      : state_(std::move(state)), peer_(std::move(peer)) {}
  std::shared_ptr<State> state_;
  std::string peer_;
};

class PeerLimiter {
 public:
  // InvalidArgument for a non-positive rate, burst, in-flight or peer bound.
  static absl::StatusOr<std::unique_ptr<PeerLimiter>> Create(PeerLimits limits);

  // Admits one call of `method` (e.g. "Inference.Generate") from the
  // caller of `context`, or RESOURCE_EXHAUSTED. Authenticated callers get
  // an empty lease at once.
  absl::StatusOr<PeerLease> Admit(const grpc::ServerContextBase& context,
                                  std::string_view method);
  // The same for a caller named `peer` (a test's, or an address), with
  // the clock at `now`.
  absl::StatusOr<PeerLease> AdmitPeer(const std::string& peer,
                                      std::string_view method, absl::Time now);

  // Peers tracked now (tests, metrics).
  size_t peers() const;

  // The peer key of a gRPC peer string: "ipv4:10.0.0.1:5000" ->
  // "ipv4:10.0.0.1", "ipv6:[::1]:5000" -> "ipv6:[::1]"; anything else as
  // it is.
  static std::string PeerKey(std::string_view grpc_peer);

 private:
  explicit PeerLimiter(PeerLimits limits);
  std::shared_ptr<PeerLease::State> state_;
};

}  // namespace layerproof::rpc

#endif  // LAYERPROOF_RPC_PEER_LIMITER_H_
