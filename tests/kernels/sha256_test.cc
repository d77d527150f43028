// Known-answer tests for kernels/sha256.h.
//
// Vectors: FIPS 180-2, Appendix B (B.1 "abc", B.2 the 448-bit two-block
// message, B.3 one million 'a'), the same examples NIST publishes for
// FIPS 180-4 (csrc.nist.gov, "SHA256.pdf" example values); the empty
// message is Len = 0 of NIST CAVP SHA256ShortMsg.rsp.

#include "kernels/sha256.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace layerproof::kernels {
namespace {

std::string HashHex(std::string_view s) {
  return HexDigest(Sha256::Hash(s.data(), s.size()));
}

TEST(Sha256Test, Fips180Abc) {
  EXPECT_EQ(HashHex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Test, Fips180TwoBlockMessage) {
  EXPECT_EQ(HashHex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256Test, Fips180OneMillionA) {
  const std::string a(1000000, 'a');
  EXPECT_EQ(HashHex(a),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // The same message fed in uneven pieces through the incremental API.
  Sha256 h;
  for (size_t done = 0, piece = 1; done < a.size(); piece = piece * 7 % 997) {
    const size_t n = std::min(piece, a.size() - done);
    h.Update(a.data() + done, n);
    done += n;
  }
  EXPECT_EQ(HexDigest(h.Final()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Test, CavpEmptyMessage) {
  EXPECT_EQ(HashHex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// Every split point of messages around the one- and two-block padding
// boundaries (55, 56, 63, 64 bytes...) must give the one-shot digest.
TEST(Sha256Test, IncrementalMatchesOneShotAtEverySplit) {
  std::string msg;
  for (int i = 0; i < 130; ++i) msg.push_back(static_cast<char>('!' + i % 90));
  for (size_t len = 0; len <= msg.size(); ++len) {
    const std::string_view m(msg.data(), len);
    const Sha256Digest want = Sha256::Hash(m.data(), m.size());
    for (size_t split = 0; split <= len; ++split) {
      Sha256 h;
      h.Update(m.substr(0, split));
      h.Update(m.substr(split));
      EXPECT_EQ(h.Final(), want) << "len " << len << " split " << split;
    }
  }
  // And the FIPS two-block message split everywhere, against its KAT.
  const std::string_view two_block =
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  for (size_t split = 0; split <= two_block.size(); ++split) {
    Sha256 h;
    h.Update(two_block.substr(0, split));
    h.Update(two_block.substr(split));
    EXPECT_EQ(
        HexDigest(h.Final()),
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        << "split " << split;
  }
}

TEST(Sha256Test, ByteAtATime) {
  const std::string_view abc = "abc";
  Sha256 h;
  for (char c : abc) h.Update(&c, 1);
  EXPECT_EQ(HexDigest(h.Final()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace layerproof::kernels

namespace layerproof::kernels {
namespace {

// The SHA-extension path must give the portable code's digests for every
// length and every split of the input (block boundaries, buffered tails).
TEST(Sha256Test, AcceleratedPathMatchesPortable) {
  if (!Sha256::AcceleratedAvailable()) {
    GTEST_SKIP() << "this CPU has no SHA extensions";
  }
  std::vector<uint8_t> data(4096 + 77);
  uint32_t x = 12345;
  for (uint8_t& b : data)
    b = static_cast<uint8_t>((x = x * 1103515245u + 12345u) >> 24);
  for (size_t len :
       {size_t{0}, size_t{1}, size_t{55}, size_t{56}, size_t{63}, size_t{64},
        size_t{65}, size_t{127}, size_t{128}, size_t{1000}, data.size()}) {
    for (size_t split :
         {size_t{0}, size_t{1}, size_t{63}, size_t{64}, len / 2, len}) {
      if (split > len) continue;
      Sha256 portable(/*accelerated=*/false), fast;
      portable.Update(data.data(), split);
      portable.Update(data.data() + split, len - split);
      fast.Update(data.data(), split);
      fast.Update(data.data() + split, len - split);
      EXPECT_EQ(HexDigest(fast.Final()), HexDigest(portable.Final()))
          << "length " << len << " split " << split;
    }
  }
  // FIPS 180 "abc" through the accelerated path.
  Sha256 abc;
  abc.Update("abc");
  EXPECT_EQ(HexDigest(abc.Final()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace layerproof::kernels
