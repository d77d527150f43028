#include "rpc/peer_limiter.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "rpc/roles.h"
#include "store/internal/str_cat.h"

namespace layerproof::rpc {

using store::internal::Cat;

struct PeerLease::State {
  struct Peer {
    double tokens = 0;
    absl::Time refilled;
    int in_flight = 0;
  };
  explicit State(PeerLimits l) : limits(l) {}

  // Tokens back since the last refill, capped at the burst.
  void Refill(Peer& p, absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    const double earned =
        absl::ToDoubleSeconds(std::max(absl::ZeroDuration(), now - p.refilled)) *
        limits.calls_per_second;
    p.tokens = std::min(limits.burst, p.tokens + earned);
    p.refilled = now;
  }

  // Drops peers with nothing in flight and a full bucket (they would be
  // created again exactly as they are); true when room was made.
  bool EvictIdle(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    const size_t before = peers.size();
    for (auto it = peers.begin(); it != peers.end();) {
      Refill(it->second, now);
      if (it->second.in_flight == 0 && it->second.tokens >= limits.burst) {
        it = peers.erase(it);
      } else {
        ++it;
      }
    }
    return peers.size() < before;
  }

  const PeerLimits limits;
  mutable absl::Mutex mu;
  std::map<std::string, Peer, std::less<>> peers ABSL_GUARDED_BY(mu);
};

PeerLease& PeerLease::operator=(PeerLease&& other) noexcept {
  if (this != &other) {
    PeerLease dropped(std::move(state_), std::move(peer_));
    state_ = std::move(other.state_);
    peer_ = std::move(other.peer_);
    other.state_.reset();
  }
  return *this;
}

PeerLease::~PeerLease() {
  if (state_ == nullptr) return;
  absl::MutexLock lock(&state_->mu);
  auto it = state_->peers.find(peer_);
  if (it != state_->peers.end() && it->second.in_flight > 0) {
    --it->second.in_flight;
  }
}

absl::StatusOr<std::unique_ptr<PeerLimiter>> PeerLimiter::Create(
    PeerLimits limits) {
  if (!(limits.calls_per_second > 0) || !(limits.burst >= 1) ||
      limits.max_in_flight < 1 || limits.max_peers < 1) {
    return absl::InvalidArgumentError(
        Cat("PeerLimits: want calls_per_second > 0, burst >= 1, "
            "max_in_flight >= 1 and max_peers >= 1"));
  }
  return std::unique_ptr<PeerLimiter>(new PeerLimiter(limits));
}

PeerLimiter::PeerLimiter(PeerLimits limits)
    : state_(std::make_shared<PeerLease::State>(limits)) {}

std::string PeerLimiter::PeerKey(std::string_view peer) {
  const bool ip = peer.rfind("ipv4:", 0) == 0 || peer.rfind("ipv6:", 0) == 0;
  const size_t colon = peer.rfind(':');
  if (!ip || colon <= 5) return std::string(peer);
  return std::string(peer.substr(0, colon));
}

absl::StatusOr<PeerLease> PeerLimiter::Admit(
    const grpc::ServerContextBase& context, std::string_view method) {
  if (!Authorizer::PeerCommonName(context).empty()) return PeerLease();
  return AdmitPeer(PeerKey(context.peer()), method, absl::Now());
}

absl::StatusOr<PeerLease> PeerLimiter::AdmitPeer(const std::string& peer,
                                                 std::string_view method,
                                                 absl::Time now) {
  PeerLease::State& s = *state_;
  absl::MutexLock lock(&s.mu);
  auto it = s.peers.find(peer);
  if (it == s.peers.end()) {
    if (s.peers.size() >= s.limits.max_peers && !s.EvictIdle(now)) {
      return absl::ResourceExhaustedError(
          Cat(method, ": ", s.peers.size(),
              " unauthenticated peers are busy, the most this node tracks; "
              "retry later"));
    }
    it = s.peers.emplace(peer, PeerLease::State::Peer{s.limits.burst, now, 0})
             .first;
  }
  PeerLease::State::Peer& p = it->second;
  s.Refill(p, now);
  if (p.in_flight >= s.limits.max_in_flight) {
    return absl::ResourceExhaustedError(
        Cat(method, ": peer ", peer, " has ", p.in_flight,
            " calls in flight, the most one unauthenticated peer may; retry "
            "when one finishes"));
  }
  if (p.tokens < 1) {
    return absl::ResourceExhaustedError(
        Cat(method, ": peer ", peer, " is over ",
            static_cast<int64_t>(s.limits.calls_per_second),
            " calls per second (an unauthenticated peer's limit); retry "
            "later"));
  }
  p.tokens -= 1;
  ++p.in_flight;
  return PeerLease(state_, peer);
}

size_t PeerLimiter::peers() const {
  absl::MutexLock lock(&state_->mu);
  return state_->peers.size();
}

}  // namespace layerproof::rpc
