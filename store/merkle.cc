#include "store/merkle.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/status.h"
#include "store/status.h"

namespace layerproof::store {
namespace {

constexpr uint8_t kLeafPrefix = 0x00;
constexpr uint8_t kNodePrefix = 0x01;

// The largest power of two strictly below n (n >= 2): RFC 9162's split k.
uint64_t SplitPoint(uint64_t n) { return std::bit_floor(n - 1); }

std::string Hex(const Sha256Hash& h) { return HexEncode(h); }

// |PATH(index, D[size])| for index < size: the levels where the paths to
// `index` and to the last leaf differ (the "inner" part, siblings of perfect
// subtrees) plus one hash per perfect subtree on the right edge above them
// that lies left of the path (the "border" part).
uint64_t InclusionProofLength(uint64_t index, uint64_t size) {
  const int inner = std::bit_width(index ^ (size - 1));
  const int border = inner < 64 ? std::popcount(index >> inner) : 0;
  return static_cast<uint64_t>(inner + border);
}

// |PROOF(old_size, D[new_size])| for 0 < old_size < new_size: an inclusion
// path of old_size's last perfect subtree in the tree of new_size counted in
// units of that subtree, plus the subtree itself unless it is the whole old
// tree (old_size a power of two), whose root the verifier already has.
uint64_t ConsistencyProofLength(uint64_t old_size, uint64_t new_size) {
  const int level = std::countr_zero(old_size);
  const uint64_t index = (old_size - 1) >> level;
  const uint64_t size = ((new_size - 1) >> level) + 1;
  const bool whole = std::has_single_bit(old_size);
  return InclusionProofLength(index, size) + (whole ? 0 : 1);
}

// MTH(D[begin:end]) from stored perfect nodes. Precondition (every subtree
// of the MTH recursion satisfies it): begin < end, and begin is a multiple
// of a power of two >= end - begin. The range then splits, left to right,
// into aligned perfect subtrees of strictly decreasing size, one per set bit
// of end - begin, and MTH folds them from the right.
absl::StatusOr<Sha256Hash> SubtreeHash(const TreeReader& tree, uint64_t begin,
                                       uint64_t end) {
  assert(begin < end);
  std::array<Sha256Hash, 64> pieces;
  int count = 0;
  while (begin < end) {
    const int level = std::bit_width(end - begin) - 1;
    assert(begin % (uint64_t{1} << level) == 0);
    LP_ASSIGN_OR_RETURN(pieces[count], tree.Node(level, begin >> level));
    ++count;
    begin += uint64_t{1} << level;
  }
  Sha256Hash hash = pieces[count - 1];
  for (int i = count - 2; i >= 0; --i) hash = NodeHash(pieces[i], hash);
  return hash;
}

// The hashes of `ranges` (listed top-down) in proof order: bottom-up.
absl::StatusOr<std::vector<Sha256Hash>> HashRangesBottomUp(
    const TreeReader& tree,
    const std::vector<std::pair<uint64_t, uint64_t>>& ranges) {
  std::vector<Sha256Hash> proof;
  proof.reserve(ranges.size());
  for (auto it = ranges.rbegin(); it != ranges.rend(); ++it) {
    LP_ASSIGN_OR_RETURN(Sha256Hash hash,
                        SubtreeHash(tree, it->first, it->second));
    proof.push_back(hash);
  }
  return proof;
}

absl::Status NotVerified(const char* what, const Sha256Hash& got,
                         const Sha256Hash& want) {
  return absl::FailedPreconditionError(absl::StrCat(
      what, " does not verify: it yields ", Hex(got), ", want ", Hex(want)));
}

}  // namespace

// ---------------------------------------------------------------------------
// Hashing

Sha256Hash LeafHash(Bytes leaf) {
  Sha256Hasher hasher;
  hasher.Update(Bytes(&kLeafPrefix, 1));
  hasher.Update(leaf);
  return hasher.Final();
}

Sha256Hash NodeHash(const Sha256Hash& left, const Sha256Hash& right) {
  std::array<uint8_t, 1 + 2 * 32> buf;
  buf[0] = kNodePrefix;
  std::memcpy(buf.data() + 1, left.data(), 32);
  std::memcpy(buf.data() + 33, right.data(), 32);
  return Sha256Hasher::Digest(Bytes(buf));
}

Sha256Hash EmptyRoot() { return Sha256Hasher::Digest(Bytes()); }

Sha256Hash RootOfLeafHashes(std::span<const Sha256Hash> leaf_hashes) {
  const size_t n = leaf_hashes.size();
  if (n == 0) return EmptyRoot();
  if (n == 1) return leaf_hashes[0];
  const size_t k = SplitPoint(n);
  return NodeHash(RootOfLeafHashes(leaf_hashes.first(k)),
                  RootOfLeafHashes(leaf_hashes.subspan(k)));
}

Sha256Hash RootOfLeaves(std::span<const std::string> leaves) {
  std::vector<Sha256Hash> hashes;
  hashes.reserve(leaves.size());
  for (const std::string& leaf : leaves) hashes.push_back(LeafHash(leaf));
  return RootOfLeafHashes(hashes);
}

// ---------------------------------------------------------------------------
// Proof generation

absl::StatusOr<Sha256Hash> RootAt(const TreeReader& tree, uint64_t size) {
  if (size == 0) return EmptyRoot();
  return SubtreeHash(tree, 0, size);
}

absl::StatusOr<std::vector<Sha256Hash>> InclusionProof(const TreeReader& tree,
                                                       uint64_t index,
                                                       uint64_t size) {
  if (index >= size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inclusion proof: index ", index, " is not below size ", size));
  }
  // PATH(m, D[n]) (RFC 9162 §2.1.3.1) unrolled: descend from the root toward
  // the leaf, noting each sibling subtree; the proof lists them bottom-up.
  std::vector<std::pair<uint64_t, uint64_t>> siblings;
  uint64_t begin = 0, end = size;
  while (end - begin > 1) {
    const uint64_t mid = begin + SplitPoint(end - begin);
    if (index < mid) {
      siblings.emplace_back(mid, end);
      end = mid;
    } else {
      siblings.emplace_back(begin, mid);
      begin = mid;
    }
  }
  return HashRangesBottomUp(tree, siblings);
}

absl::StatusOr<std::vector<Sha256Hash>> ConsistencyProof(const TreeReader& tree,
                                                         uint64_t old_size,
                                                         uint64_t new_size) {
  if (old_size > new_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("consistency proof: old size ", old_size,
                     " exceeds new size ", new_size));
  }
  if (old_size == 0 || old_size == new_size) return std::vector<Sha256Hash>{};
  // SUBPROOF(m, D[n], b) (RFC 9162 §2.1.4.1) unrolled, with absolute leaf
  // offsets: [begin, end) is the current subtree and m = old_size - begin.
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  uint64_t begin = 0, end = new_size;
  bool whole_old_tree = true;  // b: the subtree is the whole old tree
  while (old_size != end) {    // m != n
    const uint64_t mid = begin + SplitPoint(end - begin);
    if (old_size <= mid) {  // m <= k
      ranges.emplace_back(mid, end);
      end = mid;
    } else {
      ranges.emplace_back(begin, mid);
      begin = mid;
      whole_old_tree = false;
    }
  }
  // m == n: the old tree's last subtree, unless the verifier has it already.
  if (!whole_old_tree) ranges.emplace_back(begin, end);
  return HashRangesBottomUp(tree, ranges);
}

// ---------------------------------------------------------------------------
// MerkleTreeBuilder and InMemoryTree

absl::StatusOr<MerkleTreeBuilder> MerkleTreeBuilder::Resume(
    const TreeReader& tree, uint64_t size) {
  MerkleTreeBuilder builder;
  uint64_t begin = 0;
  for (int level = 63; level >= 0; --level) {
    const uint64_t width = uint64_t{1} << level;
    if ((size & width) == 0) continue;
    LP_ASSIGN_OR_RETURN(Sha256Hash hash, tree.Node(level, begin >> level));
    builder.edge_.push_back(hash);
    begin += width;
  }
  builder.size_ = size;
  return builder;
}

std::vector<PerfectNode> MerkleTreeBuilder::Append(
    const Sha256Hash& leaf_hash) {
  assert(size_ < (uint64_t{1} << 63));
  std::vector<PerfectNode> completed;
  completed.reserve(1 + std::countr_one(size_));
  PerfectNode node{0, size_, leaf_hash};
  completed.push_back(node);
  // Each trailing 1 bit of the old size is a perfect subtree on the edge
  // that the new node now completes into one a level higher.
  while (node.index & 1) {
    node.hash = NodeHash(edge_.back(), node.hash);
    edge_.pop_back();
    ++node.level;
    node.index >>= 1;
    completed.push_back(node);
  }
  edge_.push_back(node.hash);
  ++size_;
  return completed;
}

Sha256Hash MerkleTreeBuilder::Root() const {
  if (edge_.empty()) return EmptyRoot();
  Sha256Hash hash = edge_.back();
  for (size_t i = edge_.size() - 1; i-- > 0;) hash = NodeHash(edge_[i], hash);
  return hash;
}

uint64_t InMemoryTree::Append(Bytes leaf_data) {
  return AppendLeafHash(LeafHash(leaf_data));
}

uint64_t InMemoryTree::AppendLeafHash(const Sha256Hash& leaf_hash) {
  const uint64_t index = builder_.size();
  for (const PerfectNode& node : builder_.Append(leaf_hash)) {
    if (levels_.size() <= static_cast<size_t>(node.level)) {
      levels_.resize(node.level + 1);
    }
    assert(levels_[node.level].size() == node.index);
    levels_[node.level].push_back(node.hash);
  }
  return index;
}

absl::StatusOr<Sha256Hash> InMemoryTree::Node(int level, uint64_t index) const {
  if (level < 0 || level >= 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("tree node level ", level, " is outside 0 .. 63"));
  }
  if (static_cast<size_t>(level) >= levels_.size() ||
      index >= levels_[level].size()) {
    return absl::OutOfRangeError(absl::StrCat("tree node (", level, ", ", index,
                                              ") is not complete at size ",
                                              size()));
  }
  return levels_[level][index];
}

// ---------------------------------------------------------------------------
// Verification

absl::Status VerifyInclusion(const Sha256Hash& leaf_hash, uint64_t index,
                             uint64_t size, std::span<const Sha256Hash> proof,
                             const Sha256Hash& root) {
  // Step 1.
  if (index >= size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inclusion proof: index ", index, " is not below size ", size));
  }
  const uint64_t want_length = InclusionProofLength(index, size);
  if (proof.size() != want_length) {
    return absl::InvalidArgumentError(
        absl::StrCat("inclusion proof of index ", index, " in size ", size,
                     " has ", proof.size(), " hashes, want ", want_length));
  }
  // Steps 2-4.
  uint64_t fn = index;
  uint64_t sn = size - 1;
  Sha256Hash r = leaf_hash;
  for (const Sha256Hash& p : proof) {
    if (sn == 0) {  // unreachable after the length check; kept per the RFC
      return absl::InvalidArgumentError("inclusion proof is too long");
    }
    if ((fn & 1) != 0 || fn == sn) {
      r = NodeHash(p, r);
      while ((fn & 1) == 0 && fn != 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else {
      r = NodeHash(r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  // Step 5.
  if (sn != 0)
    return absl::InvalidArgumentError("inclusion proof is too short");
  if (r != root) return NotVerified("inclusion proof", r, root);
  return absl::OkStatus();
}

absl::Status VerifyConsistency(uint64_t old_size, uint64_t new_size,
                               const Sha256Hash& old_root,
                               const Sha256Hash& new_root,
                               std::span<const Sha256Hash> proof) {
  if (old_size > new_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("consistency proof: old size ", old_size,
                     " exceeds new size ", new_size));
  }
  if (old_size == 0 || old_size == new_size) {
    if (!proof.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("consistency proof from size ", old_size, " to ",
                       new_size, " has ", proof.size(), " hashes, want 0"));
    }
    if (old_size == 0 && old_root != EmptyRoot()) {
      return NotVerified("consistency proof from the empty tree", old_root,
                         EmptyRoot());
    }
    if (old_size == new_size && old_root != new_root) {
      return NotVerified("consistency proof between equal sizes", new_root,
                         old_root);
    }
    return absl::OkStatus();
  }
  // 0 < old_size < new_size. Step 1 (an empty proof) is a length error.
  const uint64_t want_length = ConsistencyProofLength(old_size, new_size);
  if (proof.size() != want_length) {
    return absl::InvalidArgumentError(
        absl::StrCat("consistency proof from size ", old_size, " to ", new_size,
                     " has ", proof.size(), " hashes, want ", want_length));
  }
  // Step 2: the path starts with the old root when old_size is a power of 2.
  std::vector<Sha256Hash> path;
  path.reserve(proof.size() + 1);
  if (std::has_single_bit(old_size)) path.push_back(old_root);
  path.insert(path.end(), proof.begin(), proof.end());
  // Steps 3-5.
  uint64_t fn = old_size - 1;
  uint64_t sn = new_size - 1;
  while ((fn & 1) != 0) {
    fn >>= 1;
    sn >>= 1;
  }
  Sha256Hash fr = path[0];
  Sha256Hash sr = path[0];
  // Step 6.
  for (size_t i = 1; i < path.size(); ++i) {
    const Sha256Hash& c = path[i];
    if (sn == 0) {  // unreachable after the length check; kept per the RFC
      return absl::InvalidArgumentError("consistency proof is too long");
    }
    if ((fn & 1) != 0 || fn == sn) {
      fr = NodeHash(c, fr);
      sr = NodeHash(c, sr);
      while ((fn & 1) == 0 && fn != 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else {
      sr = NodeHash(sr, c);
    }
    fn >>= 1;
    sn >>= 1;
  }
  // Step 7.
  if (sn != 0) {
    return absl::InvalidArgumentError("consistency proof is too short");
  }
  if (fr != old_root) {
    return NotVerified("consistency proof (old root)", fr, old_root);
  }
  if (sr != new_root) {
    return NotVerified("consistency proof (new root)", sr, new_root);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Text forms

absl::StatusOr<Sha256Hash> ParseHash(std::string_view hex) {
  return PrintableStatus([&]() -> absl::StatusOr<Sha256Hash> {
    if (hex.size() != 64) {
      return absl::InvalidArgumentError(absl::StrCat(
          "got ", hex.size(), " characters, want 64 hex digits (a SHA-256)"));
    }
    absl::StatusOr<std::string> bytes = HexDecode(hex);
    if (!bytes.ok() || bytes->size() != 32) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", std::string(hex), "\" is not 64 hex digits"));
    }
    Sha256Hash hash;
    std::memcpy(hash.data(), bytes->data(), 32);
    return hash;
  }());
}

absl::StatusOr<std::vector<Sha256Hash>> ParseProof(std::string_view text) {
  return PrintableStatus([&]() -> absl::StatusOr<std::vector<Sha256Hash>> {
    std::vector<Sha256Hash> proof;
    if (text.empty()) return proof;
    size_t start = 0;
    while (true) {
      const size_t comma = text.find(',', start);
      const std::string_view item = text.substr(
          start, comma == std::string_view::npos ? std::string_view::npos
                                                 : comma - start);
      absl::StatusOr<Sha256Hash> hash = ParseHash(item);
      if (!hash.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "proof item ", proof.size(), ": ", hash.status().message()));
      }
      proof.push_back(*hash);
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    return proof;
  }());
}

absl::StatusOr<std::vector<std::string>> ParseLeafLines(std::string_view text) {
  return PrintableStatus([&]() -> absl::StatusOr<std::vector<std::string>> {
    std::vector<std::string> leaves;
    size_t start = 0;
    while (start < text.size()) {
      size_t newline = text.find('\n', start);
      if (newline == std::string_view::npos) newline = text.size();
      std::string_view line = text.substr(start, newline - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty()) {
        leaves.emplace_back();  // an empty leaf
      } else {
        absl::StatusOr<std::string> data = HexDecode(line);
        if (!data.ok()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "line ", leaves.size() + 1, ": \"",
              std::string(line.substr(0, 80)), line.size() > 80 ? "..." : "",
              "\" is not hex (", data.status().message(), ")"));
        }
        leaves.push_back(*std::move(data));
      }
      start = newline + 1;
    }
    return leaves;
  }());
}

}  // namespace layerproof::store
