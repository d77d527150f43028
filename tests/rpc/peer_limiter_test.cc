// rpc/peer_limiter.h: the token bucket, the in-flight bound, the bounded
// table of peers, and peer keys without ports.
#include "rpc/peer_limiter.h"

#include <vector>

#include "gtest/gtest.h"

namespace layerproof::rpc {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1764460000);

std::unique_ptr<PeerLimiter> Limiter(double rate, double burst, int in_flight,
                                     size_t peers) {
  auto l = PeerLimiter::Create({rate, burst, in_flight, peers});
  EXPECT_TRUE(l.ok()) << l.status();
  return *std::move(l);
}

TEST(PeerLimiter, ABurstThenTheSustainedRate) {
  auto l = Limiter(/*rate=*/2, /*burst=*/3, /*in_flight=*/100, /*peers=*/10);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(l->AdmitPeer("ipv4:10.0.0.1", "M", kT0).ok()) << i;
  }
  absl::StatusOr<PeerLease> over = l->AdmitPeer("ipv4:10.0.0.1", "M", kT0);
  ASSERT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(over.status().message().find("calls per second"),
            std::string::npos);
  // Another peer has its own bucket.
  EXPECT_TRUE(l->AdmitPeer("ipv4:10.0.0.2", "M", kT0).ok());
  // Half a second earns one call at 2/s.
  EXPECT_TRUE(
      l->AdmitPeer("ipv4:10.0.0.1", "M", kT0 + absl::Milliseconds(500)).ok());
  EXPECT_FALSE(
      l->AdmitPeer("ipv4:10.0.0.1", "M", kT0 + absl::Milliseconds(500)).ok());
}

TEST(PeerLimiter, InFlightCallsAreBoundedUntilTheirLeasesGo) {
  auto l = Limiter(1000, 1000, /*in_flight=*/2, 10);
  std::vector<PeerLease> held;
  for (int i = 0; i < 2; ++i) {
    held.push_back(*l->AdmitPeer("ipv4:10.0.0.1", "Inference.Generate", kT0));
  }
  absl::StatusOr<PeerLease> third =
      l->AdmitPeer("ipv4:10.0.0.1", "Inference.Generate", kT0);
  ASSERT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(third.status().message().find("Inference.Generate: peer "
                                          "ipv4:10.0.0.1 has 2 calls in "
                                          "flight"),
            std::string::npos)
      << third.status();
  held.pop_back();  // one call finished
  EXPECT_TRUE(l->AdmitPeer("ipv4:10.0.0.1", "Inference.Generate", kT0).ok());
  // A moved lease releases once.
  PeerLease moved = std::move(held.back());
  held.clear();
  { PeerLease gone = std::move(moved); }
  std::vector<PeerLease> again;
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<PeerLease> l2 =
        l->AdmitPeer("ipv4:10.0.0.1", "Inference.Generate", kT0);
    ASSERT_TRUE(l2.ok()) << i << " " << l2.status();
    again.push_back(*std::move(l2));
  }
  EXPECT_FALSE(l->AdmitPeer("ipv4:10.0.0.1", "Inference.Generate", kT0).ok());
}

TEST(PeerLimiter, TheTableOfPeersIsBounded) {
  auto l = Limiter(1, 1, 10, /*peers=*/2);
  PeerLease a = *l->AdmitPeer("ipv4:10.0.0.1", "M", kT0);
  PeerLease b = *l->AdmitPeer("ipv4:10.0.0.2", "M", kT0);
  absl::StatusOr<PeerLease> c = l->AdmitPeer("ipv4:10.0.0.3", "M", kT0);
  ASSERT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(l->peers(), 2u);
  // Once a peer is idle and its bucket has refilled it is dropped.
  { PeerLease done = std::move(a); }
  EXPECT_TRUE(l->AdmitPeer("ipv4:10.0.0.3", "M", kT0 + absl::Seconds(2)).ok());
  EXPECT_EQ(l->peers(), 2u);
}

TEST(PeerLimiter, PeerKeysDropThePortAndBadLimitsAreRefused) {
  EXPECT_EQ(PeerLimiter::PeerKey("ipv4:10.0.0.1:5000"), "ipv4:10.0.0.1");
  EXPECT_EQ(PeerLimiter::PeerKey("ipv6:[::1]:5000"), "ipv6:[::1]");
  EXPECT_EQ(PeerLimiter::PeerKey("ipv6:%5B::1%5D:5000"), "ipv6:%5B::1%5D");
  EXPECT_EQ(PeerLimiter::PeerKey("unix:/tmp/s"), "unix:/tmp/s");
  EXPECT_FALSE(PeerLimiter::Create({0, 1, 1, 1}).ok());
  EXPECT_FALSE(PeerLimiter::Create({1, 0, 1, 1}).ok());
  EXPECT_FALSE(PeerLimiter::Create({1, 1, 0, 1}).ok());
  EXPECT_FALSE(PeerLimiter::Create({1, 1, 1, 0}).ok());
}

}  // namespace
}  // namespace layerproof::rpc
