// Tests for store/merkle: RFC 6962 / RFC 9162 hashing, proof generation over
// stored perfect nodes, and verification.
//
// Known-answer sources:
//   - RFC 6962 §2.1.3 (the same example is in RFC 9162 §2.1.5): the 7-leaf
//     tree d0..d6 with nodes a..l, its audit paths for d0, d3, d4 and d6 and
//     the consistency proofs PROOF(3, D[7]) = [c, d, g, l], PROOF(4, D[7]) =
//     [l] and PROOF(6, D[7]) = [i, j, k].
//   - The Certificate Transparency test tree of 8 leaves, as published by
//     transparency-dev/merkle: testonly/constants.go (LeafInputs, NodeHashes,
//     RootHashes) and proof/verify_test.go (inclusionProofs,
//     consistencyProofs), which carry the vectors of
//     certificate-transparency's merkle_tree_test.cc.
// Everything else is checked against an independent oracle: the plain
// recursive MTH / PATH / SUBPROOF of RFC 9162 §2.1, written out below.
#include "store/merkle.h"

#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace layerproof::store {
namespace {

using Proof = std::vector<Sha256Hash>;

Sha256Hash H(std::string_view hex) {
  absl::StatusOr<Sha256Hash> hash = ParseHash(hex);
  EXPECT_TRUE(hash.ok()) << hex;
  return hash.ok() ? *hash : Sha256Hash{};
}

std::string Unhex(std::string_view hex) {
  absl::StatusOr<std::string> bytes = HexDecode(hex);
  EXPECT_TRUE(bytes.ok()) << hex;
  return bytes.ok() ? *bytes : std::string();
}

Sha256Hash Flip(Sha256Hash hash, int bit) {
  hash[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
  return hash;
}

int CeilLog2(uint64_t n) { return n <= 1 ? 0 : std::bit_width(n - 1); }

// --- The oracle: RFC 9162 §2.1 by plain recursion over leaf hashes. ------

using Span = std::span<const Sha256Hash>;

uint64_t Split(uint64_t n) { return std::bit_floor(n - 1); }

// PATH(m, D[n]), §2.1.3.1.
Proof RefPath(uint64_t m, Span d) {
  if (d.size() <= 1) return {};
  const uint64_t k = Split(d.size());
  Proof out;
  if (m < k) {
    out = RefPath(m, d.first(k));
    out.push_back(RootOfLeafHashes(d.subspan(k)));
  } else {
    out = RefPath(m - k, d.subspan(k));
    out.push_back(RootOfLeafHashes(d.first(k)));
  }
  return out;
}

// SUBPROOF(m, D[n], b), §2.1.4.1.
Proof RefSubproof(uint64_t m, Span d, bool b) {
  const uint64_t n = d.size();
  if (m == n) {
    if (b) return {};
    return {RootOfLeafHashes(d)};
  }
  const uint64_t k = Split(n);
  Proof out;
  if (m <= k) {
    out = RefSubproof(m, d.first(k), b);
    out.push_back(RootOfLeafHashes(d.subspan(k)));
  } else {
    out = RefSubproof(m - k, d.subspan(k), false);
    out.push_back(RootOfLeafHashes(d.first(k)));
  }
  return out;
}

// --- Fixtures ------------------------------------------------------------

std::vector<std::string> CtLeaves() {
  std::vector<std::string> leaves;
  for (const char* hex :
       {"", "00", "10", "2021", "3031", "40414243", "5051525354555657",
        "606162636465666768696a6b6c6d6e6f"}) {
    leaves.push_back(Unhex(hex));
  }
  return leaves;
}

// Distinct leaves, so no two subtrees of a test tree share a hash.
std::vector<std::string> DistinctLeaves(int n) {
  std::vector<std::string> leaves;
  for (int i = 0; i < n; ++i) leaves.push_back("leaf " + std::to_string(i));
  return leaves;
}

std::vector<Sha256Hash> LeafHashes(const std::vector<std::string>& leaves) {
  std::vector<Sha256Hash> hashes;
  for (const std::string& leaf : leaves) hashes.push_back(LeafHash(leaf));
  return hashes;
}

void Fill(InMemoryTree& tree, const std::vector<std::string>& leaves) {
  for (const std::string& leaf : leaves) tree.Append(leaf);
}

// --- Known answers -------------------------------------------------------

TEST(MerkleHashTest, EmptyRootAndLeafHashAreRfc6962s) {
  EXPECT_EQ(HexEncode(EmptyRoot()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(HexEncode(LeafHash(std::string_view())),
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d");
  EXPECT_EQ(HexEncode(RootOfLeaves({})), HexEncode(EmptyRoot()));
}

// transparency-dev/merkle testonly/constants.go: RootHashes().
constexpr const char* kCtRoots[] = {
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
};

TEST(MerkleKnownAnswerTest, CtRootsForEverySize) {
  const std::vector<std::string> leaves = CtLeaves();
  InMemoryTree tree;
  for (size_t size = 0; size <= leaves.size(); ++size) {
    EXPECT_EQ(HexEncode(RootOfLeaves(std::span(leaves).first(size))),
              kCtRoots[size])
        << "size " << size;
    EXPECT_EQ(HexEncode(tree.Root()), kCtRoots[size]) << "size " << size;
    if (size < leaves.size()) tree.Append(leaves[size]);
  }
  for (size_t size = 0; size <= leaves.size(); ++size) {
    absl::StatusOr<Sha256Hash> root = RootAt(tree, size);
    ASSERT_TRUE(root.ok()) << root.status();
    EXPECT_EQ(HexEncode(*root), kCtRoots[size]) << "size " << size;
  }
}

TEST(MerkleKnownAnswerTest, CtPerfectNodes) {
  // transparency-dev/merkle testonly/constants.go: NodeHashes().
  const std::vector<std::vector<const char*>> kNodes = {
      {"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
       "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
       "0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7",
       "07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7",
       "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
       "4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658",
       "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
       "46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1"},
      {"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
       "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
       "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
       "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0"},
      {"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
       "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"},
      {"5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"},
  };
  InMemoryTree tree;
  Fill(tree, CtLeaves());
  for (size_t level = 0; level < kNodes.size(); ++level) {
    for (size_t index = 0; index < kNodes[level].size(); ++index) {
      absl::StatusOr<Sha256Hash> node = tree.Node(level, index);
      ASSERT_TRUE(node.ok()) << node.status();
      EXPECT_EQ(HexEncode(*node), kNodes[level][index])
          << "node (" << level << ", " << index << ")";
    }
    EXPECT_EQ(tree.Node(level, kNodes[level].size()).status().code(),
              absl::StatusCode::kOutOfRange);
  }
  EXPECT_EQ(tree.Node(4, 0).status().code(), absl::StatusCode::kOutOfRange);
}

TEST(MerkleKnownAnswerTest, CtProofs) {
  // transparency-dev/merkle proof/verify_test.go; its leaf numbers are
  // 1-based, the indices here 0-based.
  struct Inclusion {
    uint64_t index, size;
    std::vector<const char*> proof;
  };
  const Inclusion kInclusion[] = {
      {0, 1, {}},
      {0,
       8,
       {"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"}},
      {5,
       8,
       {"bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
      {2,
       3,
       {"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"}},
      {1,
       5,
       {"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"}},
  };
  struct Consistency {
    uint64_t old_size, new_size;
    std::vector<const char*> proof;
  };
  const Consistency kConsistency[] = {
      {1, 1, {}},
      {1,
       8,
       {"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"}},
      {6,
       8,
       {"0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
        "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
      {2,
       5,
       {"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"}},
      {6,
       7,
       {"0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
        "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
  };
  const std::vector<std::string> leaves = CtLeaves();
  InMemoryTree tree;
  Fill(tree, leaves);
  auto to_hashes = [](const std::vector<const char*>& hex) {
    Proof proof;
    for (const char* h : hex) proof.push_back(H(h));
    return proof;
  };
  for (const Inclusion& v : kInclusion) {
    SCOPED_TRACE(testing::Message()
                 << "inclusion " << v.index << " in " << v.size);
    const Proof want = to_hashes(v.proof);
    absl::StatusOr<Proof> got = InclusionProof(tree, v.index, v.size);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, want);
    EXPECT_TRUE(VerifyInclusion(LeafHash(leaves[v.index]), v.index, v.size,
                                want, H(kCtRoots[v.size]))
                    .ok());
  }
  for (const Consistency& v : kConsistency) {
    SCOPED_TRACE(testing::Message()
                 << "consistency " << v.old_size << " to " << v.new_size);
    const Proof want = to_hashes(v.proof);
    absl::StatusOr<Proof> got = ConsistencyProof(tree, v.old_size, v.new_size);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, want);
    EXPECT_TRUE(VerifyConsistency(v.old_size, v.new_size,
                                  H(kCtRoots[v.old_size]),
                                  H(kCtRoots[v.new_size]), want)
                    .ok());
  }
}

// RFC 6962 §2.1.3: the 7-leaf tree, its audit paths and consistency proofs,
// compared node for node.
TEST(MerkleKnownAnswerTest, Rfc6962SevenLeafExample) {
  const std::vector<std::string> d = DistinctLeaves(7);
  auto mth = [&](size_t begin, size_t end) {
    return RootOfLeaves(std::span(d).subspan(begin, end - begin));
  };
  const Sha256Hash a = mth(0, 1), b = mth(1, 2), c = mth(2, 3), dd = mth(3, 4),
                   e = mth(4, 5), f = mth(5, 6), j = mth(6, 7);
  const Sha256Hash g = NodeHash(a, b), h = NodeHash(c, dd), i = NodeHash(e, f);
  const Sha256Hash k = NodeHash(g, h), l = NodeHash(i, j);
  const Sha256Hash root = NodeHash(k, l);
  ASSERT_EQ(root, RootOfLeaves(d));
  // The incremental trees of §2.1.3's second figure.
  const Sha256Hash hash0 = NodeHash(g, c), hash1 = k, hash2 = NodeHash(k, i);

  InMemoryTree tree;
  Fill(tree, d);
  auto inclusion = [&](uint64_t index) {
    absl::StatusOr<Proof> proof = InclusionProof(tree, index, 7);
    EXPECT_TRUE(proof.ok()) << proof.status();
    if (proof.ok()) {
      EXPECT_TRUE(
          VerifyInclusion(LeafHash(d[index]), index, 7, *proof, root).ok());
    }
    return proof.ok() ? *proof : Proof();
  };
  EXPECT_EQ(inclusion(0), (Proof{b, h, l}));
  EXPECT_EQ(inclusion(3), (Proof{c, g, l}));
  EXPECT_EQ(inclusion(4), (Proof{f, j, k}));
  EXPECT_EQ(inclusion(6), (Proof{i, k}));

  auto consistency = [&](uint64_t m, const Sha256Hash& old_root) {
    EXPECT_EQ(*RootAt(tree, m), old_root) << "size " << m;
    absl::StatusOr<Proof> proof = ConsistencyProof(tree, m, 7);
    EXPECT_TRUE(proof.ok()) << proof.status();
    if (proof.ok()) {
      EXPECT_TRUE(VerifyConsistency(m, 7, old_root, root, *proof).ok());
    }
    return proof.ok() ? *proof : Proof();
  };
  EXPECT_EQ(consistency(3, hash0), (Proof{c, dd, g, l}));
  EXPECT_EQ(consistency(4, hash1), (Proof{l}));
  EXPECT_EQ(consistency(6, hash2), (Proof{i, j, k}));
}

// --- Exhaustive: every proof of every tree up to 64 leaves ----------------

constexpr int kMaxSize = 64;
constexpr int kAllBitsUpTo = 16;  // above this size, flip 3 bits per hash

std::vector<int> BitsToFlip(uint64_t size) {
  if (size <= kAllBitsUpTo) {
    std::vector<int> all(256);
    for (int bit = 0; bit < 256; ++bit) all[bit] = bit;
    return all;
  }
  return {0, 127, 255};
}

class MerkleExhaustiveTest : public testing::Test {
 protected:
  void SetUp() override {
    leaves_ = DistinctLeaves(kMaxSize + 1);
    hashes_ = LeafHashes(leaves_);
    Fill(tree_, leaves_);
    for (int size = 0; size <= kMaxSize + 1; ++size) {
      roots_.push_back(RootOfLeafHashes(Span(hashes_).first(size)));
    }
  }

  std::vector<std::string> leaves_;
  std::vector<Sha256Hash> hashes_;
  std::vector<Sha256Hash> roots_;  // roots_[n]: MTH of the first n leaves
  InMemoryTree tree_;
};

TEST_F(MerkleExhaustiveTest, InclusionProofsVerifyAndTamperingFails) {
  for (uint64_t n = 1; n <= kMaxSize; ++n) {
    const std::vector<int> bits = BitsToFlip(n);
    for (uint64_t m = 0; m < n; ++m) {
      SCOPED_TRACE(testing::Message() << "index " << m << " size " << n);
      absl::StatusOr<Proof> got = InclusionProof(tree_, m, n);
      ASSERT_TRUE(got.ok()) << got.status();
      const Proof& proof = *got;
      ASSERT_EQ(proof, RefPath(m, Span(hashes_).first(n)));
      EXPECT_LE(proof.size(), static_cast<size_t>(CeilLog2(n)));
      const Sha256Hash& leaf = hashes_[m];
      const Sha256Hash& root = roots_[n];
      ASSERT_TRUE(VerifyInclusion(leaf, m, n, proof, root).ok());

      auto fails = [&](const Sha256Hash& leaf_hash, uint64_t index,
                       uint64_t size, const Proof& p, const Sha256Hash& r) {
        return VerifyInclusion(leaf_hash, index, size, p, r).code();
      };
      constexpr auto kNotVerified = absl::StatusCode::kFailedPrecondition;
      constexpr auto kMalformed = absl::StatusCode::kInvalidArgument;
      for (int bit : bits) {
        for (size_t e = 0; e < proof.size(); ++e) {
          Proof bad = proof;
          bad[e] = Flip(bad[e], bit);
          ASSERT_EQ(fails(leaf, m, n, bad, root), kNotVerified)
              << "element " << e << " bit " << bit;
        }
        ASSERT_EQ(fails(Flip(leaf, bit), m, n, proof, root), kNotVerified);
        ASSERT_EQ(fails(leaf, m, n, proof, Flip(root, bit)), kNotVerified);
      }
      if (!proof.empty()) {
        ASSERT_EQ(
            fails(leaf, m, n, Proof(proof.begin(), proof.end() - 1), root),
            kMalformed);
      }
      Proof longer = proof;
      longer.push_back(root);
      ASSERT_EQ(fails(leaf, m, n, longer, root), kMalformed);
      longer = proof;
      longer.insert(longer.begin(), leaf);
      ASSERT_EQ(fails(leaf, m, n, longer, root), kMalformed);
      // A wrong index or size (with the root of that size): never OK.
      constexpr auto kOk = absl::StatusCode::kOk;
      if (m > 0) {
        EXPECT_NE(fails(leaf, m - 1, n, proof, root), kOk);
      }
      if (m + 1 < n) {
        EXPECT_NE(fails(leaf, m + 1, n, proof, root), kOk);
        EXPECT_NE(fails(leaf, m, n - 1, proof, roots_[n - 1]), kOk);
      }
      EXPECT_NE(fails(leaf, m, n + 1, proof, roots_[n + 1]), kOk);
      ASSERT_EQ(fails(leaf, n, n, proof, root), kMalformed);  // index >= size
    }
  }
}

TEST_F(MerkleExhaustiveTest, ConsistencyProofsVerifyAndTamperingFails) {
  constexpr auto kOk = absl::StatusCode::kOk;
  constexpr auto kNotVerified = absl::StatusCode::kFailedPrecondition;
  constexpr auto kMalformed = absl::StatusCode::kInvalidArgument;
  auto fails = [](uint64_t m, uint64_t n, const Sha256Hash& r1,
                  const Sha256Hash& r2, const Proof& p) {
    return VerifyConsistency(m, n, r1, r2, p).code();
  };
  for (uint64_t n = 0; n <= kMaxSize; ++n) {
    const std::vector<int> bits = BitsToFlip(n);
    for (uint64_t m = 0; m <= n; ++m) {
      SCOPED_TRACE(testing::Message() << "old " << m << " new " << n);
      absl::StatusOr<Proof> got = ConsistencyProof(tree_, m, n);
      ASSERT_TRUE(got.ok()) << got.status();
      const Proof& proof = *got;
      const Sha256Hash& r1 = roots_[m];
      const Sha256Hash& r2 = roots_[n];
      ASSERT_EQ(fails(m, n, r1, r2, proof), kOk);
      const bool trivial = m == 0 || m == n;
      if (trivial) {
        ASSERT_TRUE(proof.empty());
      } else {
        ASSERT_EQ(proof, RefSubproof(m, Span(hashes_).first(n), true));
      }
      EXPECT_LE(proof.size(), static_cast<size_t>(CeilLog2(n) + 1));

      for (int bit : bits) {
        for (size_t e = 0; e < proof.size(); ++e) {
          Proof bad = proof;
          bad[e] = Flip(bad[e], bit);
          ASSERT_EQ(fails(m, n, r1, r2, bad), kNotVerified)
              << "element " << e << " bit " << bit;
        }
        ASSERT_EQ(fails(m, n, Flip(r1, bit), r2, proof), kNotVerified);
        // With m == 0 every new root is consistent with the empty tree.
        if (m > 0) {
          ASSERT_EQ(fails(m, n, r1, Flip(r2, bit), proof), kNotVerified);
        }
      }
      Proof longer = proof;
      longer.push_back(r2);
      ASSERT_EQ(fails(m, n, r1, r2, longer), kMalformed);
      longer = proof;
      longer.insert(longer.begin(), r1);
      ASSERT_EQ(fails(m, n, r1, r2, longer), kMalformed);
      ASSERT_EQ(fails(m + 1, m, r1, r2, proof), kMalformed);  // out of order
      if (trivial) continue;
      // Only non-trivial proofs bind the sizes: (0, n) and (n, n) are
      // consistent with an empty proof whatever the sizes.
      ASSERT_EQ(fails(m, n, r1, r2, Proof(proof.begin(), proof.end() - 1)),
                kMalformed);
      ASSERT_EQ(fails(m, n, r1, r2, Proof()), kMalformed);
      ASSERT_NE(fails(m, n, r2, r1, proof), kOk) << "swapped roots";
      EXPECT_NE(fails(m - 1, n, roots_[m - 1], r2, proof), kOk);
      EXPECT_NE(fails(m + 1, n, roots_[m + 1], r2, proof), kOk);
      EXPECT_NE(fails(m, n - 1, r1, roots_[n - 1], proof), kOk);
      EXPECT_NE(fails(m, n + 1, r1, roots_[n + 1], proof), kOk);
    }
  }
}

// --- The builder and stored trees ---------------------------------------

TEST(MerkleTreeBuilderTest, EmitsEveryPerfectNodeOnceWithItsMth) {
  constexpr int kSize = 200;
  const std::vector<Sha256Hash> hashes = LeafHashes(DistinctLeaves(kSize));
  MerkleTreeBuilder builder;
  InMemoryTree tree;
  std::vector<size_t> per_level(64, 0);
  for (uint64_t n = 0; n < kSize; ++n) {
    ASSERT_EQ(builder.Root(), RootOfLeafHashes(Span(hashes).first(n)));
    const std::vector<PerfectNode> nodes = builder.Append(hashes[n]);
    tree.AppendLeafHash(hashes[n]);
    // Appending leaf n completes one node per trailing 1 bit of n, plus
    // the leaf itself.
    ASSERT_EQ(nodes.size(), 1u + std::countr_one(n));
    for (const PerfectNode& node : nodes) {
      const uint64_t begin = node.index << node.level;
      const uint64_t width = uint64_t{1} << node.level;
      EXPECT_EQ(begin + width, n + 1) << "the node ends at the new leaf";
      EXPECT_EQ(node.index, per_level[node.level]++) << "emitted in order";
      EXPECT_EQ(node.hash,
                RootOfLeafHashes(Span(hashes).subspan(begin, width)));
      EXPECT_EQ(*tree.Node(node.level, node.index), node.hash);
    }
  }
  EXPECT_EQ(builder.size(), static_cast<uint64_t>(kSize));
  for (uint64_t size = 0; size <= kSize; ++size) {
    absl::StatusOr<Sha256Hash> root = RootAt(tree, size);
    ASSERT_TRUE(root.ok()) << root.status();
    EXPECT_EQ(*root, RootOfLeafHashes(Span(hashes).first(size)))
        << "size " << size;
  }
}

TEST(MerkleTreeBuilderTest, ResumeContinuesTheSameTree) {
  constexpr int kSize = 70;
  const std::vector<Sha256Hash> hashes = LeafHashes(DistinctLeaves(kSize));
  InMemoryTree tree;
  for (const Sha256Hash& h : hashes) tree.AppendLeafHash(h);
  for (uint64_t size = 0; size < kSize; ++size) {
    absl::StatusOr<MerkleTreeBuilder> resumed =
        MerkleTreeBuilder::Resume(tree, size);
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    EXPECT_EQ(resumed->size(), size);
    EXPECT_EQ(resumed->Root(), RootOfLeafHashes(Span(hashes).first(size)));
    for (const PerfectNode& node : resumed->Append(hashes[size])) {
      EXPECT_EQ(*tree.Node(node.level, node.index), node.hash);
    }
    EXPECT_EQ(resumed->Root(), RootOfLeafHashes(Span(hashes).first(size + 1)));
  }
  // A size beyond the stored tree needs nodes it does not hold.
  EXPECT_EQ(MerkleTreeBuilder::Resume(tree, kSize + 2).status().code(),
            absl::StatusCode::kOutOfRange);
}

TEST(MerkleProofGenerationTest, RejectsBadArguments) {
  InMemoryTree tree;
  Fill(tree, DistinctLeaves(5));
  EXPECT_EQ(InclusionProof(tree, 5, 5).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(InclusionProof(tree, 0, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ConsistencyProof(tree, 4, 3).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Sizes beyond the stored tree: the reader's error.
  EXPECT_EQ(InclusionProof(tree, 0, 8).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ConsistencyProof(tree, 3, 6).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(RootAt(tree, 6).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(tree.Node(-1, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tree.Node(64, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// --- Verification edge cases --------------------------------------------

TEST(MerkleVerifyTest, InclusionEdgeCases) {
  const Sha256Hash leaf = LeafHash(std::string_view("x"));
  // A one-leaf tree: the root is the leaf hash, the proof empty.
  EXPECT_TRUE(VerifyInclusion(leaf, 0, 1, {}, leaf).ok());
  EXPECT_EQ(VerifyInclusion(leaf, 0, 1, {}, EmptyRoot()).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(VerifyInclusion(leaf, 0, 0, {}, EmptyRoot()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(VerifyInclusion(leaf, 1, 1, {}, leaf).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(VerifyInclusion(leaf, UINT64_MAX, 1, {}, leaf).code(),
            absl::StatusCode::kInvalidArgument);
  const Proof one = {leaf};
  EXPECT_EQ(VerifyInclusion(leaf, 0, 1, one, leaf).code(),
            absl::StatusCode::kInvalidArgument);
  // The largest sizes: 64 hashes for leaf 0 of 2^64 - 1 leaves.
  const Proof long_proof(64, leaf);
  EXPECT_EQ(VerifyInclusion(leaf, 0, UINT64_MAX, long_proof, leaf).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(VerifyInclusion(leaf, UINT64_MAX - 1, UINT64_MAX, long_proof, leaf)
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(MerkleVerifyTest, ConsistencyEdgeCases) {
  const Sha256Hash r1 = LeafHash(std::string_view("1"));
  const Sha256Hash r2 = LeafHash(std::string_view("2"));
  const Proof empty, one = {r1};
  // Equal sizes: an empty proof and equal roots.
  EXPECT_TRUE(VerifyConsistency(0, 0, EmptyRoot(), EmptyRoot(), empty).ok());
  EXPECT_TRUE(VerifyConsistency(5, 5, r1, r1, empty).ok());
  EXPECT_EQ(VerifyConsistency(5, 5, r1, r2, empty).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(VerifyConsistency(5, 5, r1, r1, one).code(),
            absl::StatusCode::kInvalidArgument);
  // From the empty tree: an empty proof and the empty root.
  EXPECT_TRUE(VerifyConsistency(0, 9, EmptyRoot(), r2, empty).ok());
  EXPECT_EQ(VerifyConsistency(0, 9, r1, r2, empty).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(VerifyConsistency(0, 9, EmptyRoot(), r2, one).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(VerifyConsistency(0, 0, r1, r1, empty).code(),
            absl::StatusCode::kFailedPrecondition);
  // Sizes out of order; RFC 9162 §2.1.4.2 step 1 (an empty proof).
  EXPECT_EQ(VerifyConsistency(2, 1, r1, r2, one).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(VerifyConsistency(1, 2, r1, r2, empty).code(),
            absl::StatusCode::kInvalidArgument);
  // The largest sizes do not overflow.
  const Proof long_proof(65, r1);
  EXPECT_EQ(VerifyConsistency(UINT64_MAX - 1, UINT64_MAX, r1, r2, Proof(64, r1))
                .code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      VerifyConsistency(UINT64_MAX - 1, UINT64_MAX, r1, r2, long_proof).code(),
      absl::StatusCode::kInvalidArgument);
}

// --- Text forms ------------------------------------------------------------

TEST(MerkleTextTest, ParseHash) {
  const std::string hex = kCtRoots[8];
  ASSERT_TRUE(ParseHash(hex).ok());
  EXPECT_EQ(HexEncode(*ParseHash(hex)), hex);
  std::string upper = hex;
  for (char& c : upper) c = static_cast<char>(std::toupper(c));
  EXPECT_EQ(*ParseHash(upper), *ParseHash(hex));
  EXPECT_EQ(ParseHash("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseHash(hex.substr(2)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseHash(hex + "00").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseHash("g" + hex.substr(1)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(MerkleTextTest, ParseProof) {
  const std::string a = kCtRoots[1], b = kCtRoots[2];
  EXPECT_TRUE(ParseProof("")->empty());
  EXPECT_EQ(*ParseProof(a), (Proof{H(a)}));
  EXPECT_EQ(*ParseProof(a + "," + b), (Proof{H(a), H(b)}));
  const absl::Status trailing = ParseProof(a + ",").status();
  EXPECT_EQ(trailing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(trailing.message().find("item 1"), std::string_view::npos)
      << trailing;
  EXPECT_EQ(ParseProof("," + a).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseProof(a + " ").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(MerkleTextTest, ParseLeafLines) {
  using Leaves = std::vector<std::string>;
  EXPECT_EQ(*ParseLeafLines(""), Leaves{});
  EXPECT_EQ(*ParseLeafLines("\n"), Leaves{""});
  EXPECT_EQ(*ParseLeafLines("00\n10"), (Leaves{Unhex("00"), Unhex("10")}));
  EXPECT_EQ(*ParseLeafLines("00\n10\n"), (Leaves{Unhex("00"), Unhex("10")}));
  EXPECT_EQ(*ParseLeafLines("00\r\n\r\n10\r\n"),
            (Leaves{Unhex("00"), "", Unhex("10")}));
  EXPECT_EQ(*ParseLeafLines("AbCd\n"), Leaves{Unhex("abcd")});
  const absl::Status odd = ParseLeafLines("00\n\n123\n").status();
  EXPECT_EQ(odd.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(odd.message().find("line 3"), std::string_view::npos) << odd;
  EXPECT_EQ(ParseLeafLines("zz").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseLeafLines(" 00").status().code(),
            absl::StatusCode::kInvalidArgument);
}

// The leaves file format round-trips to the CT roots.
TEST(MerkleTextTest, CtLeavesFileGivesCtRoot) {
  const std::string file =
      "\n00\n10\n2021\n3031\n40414243\n5051525354555657\n"
      "606162636465666768696a6b6c6d6e6f\n";
  absl::StatusOr<std::vector<std::string>> leaves = ParseLeafLines(file);
  ASSERT_TRUE(leaves.ok()) << leaves.status();
  EXPECT_EQ(*leaves, CtLeaves());
  EXPECT_EQ(HexEncode(RootOfLeaves(*leaves)), kCtRoots[8]);
}

// --- The `layerproof log` commands, through the built binary --------------

// The layerproof binary of this build tree: tests/store/<this test> ->
// cli/layerproof. Empty when it is not there (e.g. not built yet).
std::string FindLayerproof() {
  std::error_code ec;
  const std::filesystem::path self =
      std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const std::filesystem::path binary =
      self.parent_path().parent_path().parent_path() / "cli" / "layerproof";
  return std::filesystem::exists(binary, ec) ? binary.string() : "";
}

int RunCli(const std::string& binary, const std::string& args) {
  const std::string command = binary + " " + args + " >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(LogCommandsTest, ExitCodes) {
  const std::string binary = FindLayerproof();
  if (binary.empty()) GTEST_SKIP() << "cli/layerproof is not built";
  const std::vector<std::string> leaves = CtLeaves();
  InMemoryTree tree;
  Fill(tree, leaves);
  auto join = [](const Proof& proof) {
    std::string out;
    for (const Sha256Hash& h : proof) {
      if (!out.empty()) out += ",";
      out += HexEncode(h);
    }
    return out;
  };
  const std::string proof = join(*InclusionProof(tree, 5, 8));
  const std::string leaf = HexEncode(LeafHash(leaves[5]));
  const std::string inclusion = "log verify-inclusion --leaf-hash " + leaf +
                                " --size 8 --root " + kCtRoots[8] +
                                " --proof " + proof + " --index ";
  EXPECT_EQ(RunCli(binary, inclusion + "5"), 0);
  EXPECT_EQ(RunCli(binary, inclusion + "4"), 1);
  EXPECT_EQ(RunCli(binary, inclusion + "8"), 2);
  EXPECT_EQ(RunCli(binary, inclusion + "-1"), 2);
  EXPECT_EQ(
      RunCli(binary, "log verify-inclusion --leaf-hash " + leaf +
                         " --index 0 --size 1 --root " + leaf + " --proof ''"),
      0);

  const std::string consistency =
      "log verify-consistency --old-size 6 --new-size 8 --old-root " +
      std::string(kCtRoots[6]) + " --new-root " + kCtRoots[8] + " --proof ";
  const std::string cproof = join(*ConsistencyProof(tree, 6, 8));
  EXPECT_EQ(RunCli(binary, consistency + cproof), 0);
  std::string tampered = cproof;
  tampered[0] = tampered[0] == '0' ? '1' : '0';
  EXPECT_EQ(RunCli(binary, consistency + tampered), 1);
  EXPECT_EQ(RunCli(binary, consistency + "''"), 2);
  EXPECT_EQ(RunCli(binary, consistency + cproof + ",xyz"), 2);

  const std::string path = testing::TempDir() + "/merkle_test_leaves.txt";
  {
    std::ofstream out(path);
    out << "\n00\n10\n2021\n3031\n40414243\n5051525354555657\n"
           "606162636465666768696a6b6c6d6e6f\n";
  }
  const std::string root_out = testing::TempDir() + "/merkle_test_root.txt";
  EXPECT_EQ(
      std::system((binary + " log root --leaves-file " + path + " >" + root_out)
                      .c_str()),
      0);
  std::ifstream in(root_out);
  std::string printed;
  std::getline(in, printed);
  EXPECT_EQ(printed, kCtRoots[8]);
  EXPECT_EQ(RunCli(binary, "log root --leaves-file /nonexistent/leaves"), 2);
  EXPECT_EQ(RunCli(binary, "log no-such-subcommand"), 2);
  EXPECT_EQ(RunCli(binary, "log"), 2);
}

}  // namespace
}  // namespace layerproof::store
