// Tests for kernels/philox.h.
//
// Known answers: the three "philox4x32 10" lines of Random123's
// tests/kat_vectors (https://github.com/DEShawResearch/random123), quoted
// verbatim; columns: name, rounds, counter[4], key[2], expected[4]:
//
//   philox4x32 10 00000000 00000000 00000000 00000000 00000000 00000000
//                 6627e8d5 e169c58d bc57ac4c 9b00dbd8
//   philox4x32 10 ffffffff ffffffff ffffffff ffffffff ffffffff ffffffff
//                 408f276d 41c83b0e a20bc7c6 6d5451fd
//   philox4x32 10 243f6a88 85a308d3 13198a2e 03707344 a4093822 299f31d0
//                 d16cfe09 94fdcceb 5001e420 24126ea1

#include "kernels/philox.h"

#include <gtest/gtest.h>

#include <set>

namespace layerproof::kernels {
namespace {

struct KnownAnswer {
  PhiloxCounter counter;
  PhiloxKey key;
  PhiloxCounter expected;
};

TEST(PhiloxTest, Random123KnownAnswers) {
  const KnownAnswer kats[] = {
      {{0x00000000, 0x00000000, 0x00000000, 0x00000000},
       {0x00000000, 0x00000000},
       {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const KnownAnswer& kat : kats) {
    EXPECT_EQ(Philox4x32(kat.counter, kat.key), kat.expected)
        << std::hex << "counter[0] " << kat.counter[0];
  }
}

// A bijection per key: distinct counters give distinct blocks. Walks each
// counter word separately so a word that the rounds ignored would show.
TEST(PhiloxTest, DistinctAcrossCounters) {
  const PhiloxKey key = {0x12345678, 0x9abcdef0};
  std::set<PhiloxCounter> seen;
  int n = 0;
  for (int word = 0; word < 4; ++word) {
    for (uint32_t i = 1; i <= 1000; ++i) {
      PhiloxCounter c = {0, 0, 0, 0};
      c[word] = i;
      seen.insert(Philox4x32(c, key));
      ++n;
    }
  }
  seen.insert(Philox4x32({0, 0, 0, 0}, key));
  EXPECT_EQ(seen.size(), static_cast<size_t>(n + 1));
}

TEST(PhiloxTest, DistinctAcrossKeys) {
  const PhiloxCounter counter = {7, 0, 0, 0};
  std::set<PhiloxCounter> seen;
  int n = 0;
  for (int word = 0; word < 2; ++word) {
    for (uint32_t i = 1; i <= 1000; ++i) {
      PhiloxKey key = {0, 0};
      key[word] = i;
      seen.insert(Philox4x32(counter, key));
      ++n;
    }
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(n));
}

TEST(PhiloxTest, UniformFloatIsExactInUnitInterval) {
  EXPECT_EQ(UniformFloat(0), 0.0f);
  EXPECT_EQ(UniformFloat(0xFF), 0.0f);  // low 8 bits are dropped
  EXPECT_EQ(UniformFloat(0x100), 0x1p-24f);
  EXPECT_EQ(UniformFloat(0x80000000u), 0.5f);
  EXPECT_EQ(UniformFloat(0xFFFFFFFFu), 1.0f - 0x1p-24f);
}

}  // namespace
}  // namespace layerproof::kernels
