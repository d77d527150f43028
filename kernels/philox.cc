// Philox4x32-10 as specified by Salmon, Moraes, Dror and Shaw, "Parallel
// random numbers: as easy as 1, 2, 3" (SC'11), and implemented by Random123
// (philox.h): ten rounds, the key bumped by the Weyl constants between
// rounds. Checked against Random123's kat_vectors in
// tests/kernels/philox_test.cc.

#include "kernels/philox.h"

namespace layerproof::kernels {
namespace {

constexpr uint32_t kMultiplier0 = 0xD2511F53;  // PHILOX_M4x32_0
constexpr uint32_t kMultiplier1 = 0xCD9E8D57;  // PHILOX_M4x32_1
constexpr uint32_t kWeyl0 = 0x9E3779B9;        // golden ratio, PHILOX_W32_0
constexpr uint32_t kWeyl1 = 0xBB67AE85;        // sqrt(3) - 1, PHILOX_W32_1

constexpr PhiloxCounter Round(const PhiloxCounter& c, const PhiloxKey& key) {
  const uint64_t p0 = uint64_t{kMultiplier0} * c[0];
  const uint64_t p1 = uint64_t{kMultiplier1} * c[2];
  const auto hi0 = static_cast<uint32_t>(p0 >> 32);
  const auto lo0 = static_cast<uint32_t>(p0);
  const auto hi1 = static_cast<uint32_t>(p1 >> 32);
  const auto lo1 = static_cast<uint32_t>(p1);
  return {hi1 ^ c[1] ^ key[0], lo1, hi0 ^ c[3] ^ key[1], lo0};
}

}  // namespace

PhiloxCounter Philox4x32(PhiloxCounter counter, PhiloxKey key) {
  counter = Round(counter, key);
  for (int round = 1; round < 10; ++round) {
    key[0] += kWeyl0;
    key[1] += kWeyl1;
    counter = Round(counter, key);
  }
  return counter;
}

}  // namespace layerproof::kernels
