// The log's Merkle tree: RFC 6962 / RFC 9162 §2.1 hashing, proof generation
// over stored tree nodes, and standalone proof verification.
//
// Hashing: a leaf is SHA-256(0x00 || data), an interior node
// SHA-256(0x01 || left || right), the empty tree SHA-256(""); the tree of n
// leaves splits at the largest power of two below n (RFC 9162 §2.1.1).
//
// Storage model: a log stores the hash of every *perfect* subtree. Node
// (level, index) covers leaves [index * 2^level, (index + 1) * 2^level);
// level 0 holds the leaf hashes. MerkleTreeBuilder yields the nodes each
// append completes, so a store can persist them with the leaf in one write
// batch; RootAt / InclusionProof / ConsistencyProof read O(log n) of them
// through a TreeReader. Every hash they return equals the plain recursive
// MTH of RFC 9162 (RootOfLeaves is that oracle).
//
// Errors: malformed input (an index or size out of range, sizes out of
// order, a proof of the wrong length, a hash that is not 32 bytes of hex) is
// InvalidArgument; a well-formed proof that does not verify is
// FailedPrecondition. `layerproof log` maps them to exit 2 and 1.
//
// Thread safety: the free functions are pure (their reader's safety aside).
// InMemoryTree and MerkleTreeBuilder are not thread-safe; const methods may
// run concurrently with each other but not with Append.
#ifndef LAYERPROOF_STORE_MERKLE_H_
#define LAYERPROOF_STORE_MERKLE_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/crypto.h"

namespace layerproof::store {

// ---------------------------------------------------------------------------
// Hashing (RFC 9162 §2.1.1)

Sha256Hash LeafHash(Bytes leaf);
inline Sha256Hash LeafHash(std::string_view leaf) {
  return LeafHash(AsBytes(leaf));
}
Sha256Hash NodeHash(const Sha256Hash& left, const Sha256Hash& right);
// MTH({}) = SHA-256 of the empty string.
Sha256Hash EmptyRoot();

// MTH(D[n]) by the plain recursion of RFC 9162 §2.1.1, over leaf data or
// over leaf hashes: the independent oracle for tests and `log root`.
Sha256Hash RootOfLeaves(std::span<const std::string> leaves);
Sha256Hash RootOfLeafHashes(std::span<const Sha256Hash> leaf_hashes);

// ---------------------------------------------------------------------------
// Stored trees and proof generation

// The hash of a perfect subtree: node (level, index) covers leaves
// [index << level, (index + 1) << level).
struct PerfectNode {
  int level = 0;
  uint64_t index = 0;
  Sha256Hash hash{};

  friend bool operator==(const PerfectNode&, const PerfectNode&) = default;
};

// Read access to the perfect nodes of a stored tree.
class TreeReader {
 public:
  virtual ~TreeReader() = default;
  // The hash of node (level, index), 0 <= level < 64. A node the reader does
  // not hold (its range is not complete in the stored tree) is an error,
  // OutOfRange for InMemoryTree; storage errors pass through.
  virtual absl::StatusOr<Sha256Hash> Node(int level, uint64_t index) const = 0;
};

// The root, inclusion proof (PATH, RFC 9162 §2.1.3.1) and consistency proof
// (PROOF, §2.1.4.1) of the tree formed by the first `size` leaves of `tree`.
// Preconditions checked (InvalidArgument): index < size; old_size <=
// new_size. The sizes must not exceed the leaves `tree` holds; if they do,
// the reader's error for the missing node is returned. Proofs list hashes
// bottom-up, as the RFC does. ConsistencyProof returns an empty proof when
// old_size is 0 or equals new_size (the conventions VerifyConsistency
// accepts). Each reads O(log size) nodes.
absl::StatusOr<Sha256Hash> RootAt(const TreeReader& tree, uint64_t size);
absl::StatusOr<std::vector<Sha256Hash>> InclusionProof(const TreeReader& tree,
                                                       uint64_t index,
                                                       uint64_t size);
absl::StatusOr<std::vector<Sha256Hash>> ConsistencyProof(const TreeReader& tree,
                                                         uint64_t old_size,
                                                         uint64_t new_size);

// The right edge of a growing tree (a compact range over [0, size)): one
// perfect-subtree hash per set bit of size, so O(log n) memory. Copyable:
// a copy is an independent snapshot of the edge.
class MerkleTreeBuilder {
 public:
  MerkleTreeBuilder() = default;  // the empty tree

  // The builder of a stored tree of `size` leaves: reads the popcount(size)
  // nodes of its right edge from `tree` (after a restart).
  static absl::StatusOr<MerkleTreeBuilder> Resume(const TreeReader& tree,
                                                  uint64_t size);

  uint64_t size() const { return size_; }

  // Appends leaf `size()` by its leaf hash and returns the perfect nodes that
  // now exist and did not before, bottom-up: (0, old size) = the leaf hash
  // itself, then one node per level that the append completes. Precondition
  // (programmer invariant): size() < 2^63.
  std::vector<PerfectNode> Append(const Sha256Hash& leaf_hash);

  // MTH of the current tree; EmptyRoot() when empty.
  Sha256Hash Root() const;

 private:
  uint64_t size_ = 0;
  // Perfect-subtree hashes of the right edge, largest (leftmost) first.
  std::vector<Sha256Hash> edge_;
};

// A tree held in memory: every perfect node, one vector per level. Used by
// tests and the in-memory log.
class InMemoryTree : public TreeReader {
 public:
  InMemoryTree() = default;
  InMemoryTree(const InMemoryTree&) = delete;
  InMemoryTree& operator=(const InMemoryTree&) = delete;

  // Appends a leaf by its data or its leaf hash; returns its index.
  uint64_t Append(Bytes leaf_data);
  uint64_t Append(std::string_view leaf_data) {
    return Append(AsBytes(leaf_data));
  }
  uint64_t AppendLeafHash(const Sha256Hash& leaf_hash);

  uint64_t size() const { return builder_.size(); }
  Sha256Hash Root() const { return builder_.Root(); }

  // OutOfRange for a node that is not complete in this tree.
  absl::StatusOr<Sha256Hash> Node(int level, uint64_t index) const override;

 private:
  MerkleTreeBuilder builder_;
  std::vector<std::vector<Sha256Hash>> levels_;
};

// ---------------------------------------------------------------------------
// Verification (needs only hashes)

// RFC 9162 §2.1.3.2. OK when `proof` proves the leaf with `leaf_hash` is leaf
// `index` of the tree of `size` leaves with `root`. InvalidArgument when
// index >= size or proof has a length no PATH(index, D[size]) has;
// FailedPrecondition when a well-formed proof does not verify.
absl::Status VerifyInclusion(const Sha256Hash& leaf_hash, uint64_t index,
                             uint64_t size, std::span<const Sha256Hash> proof,
                             const Sha256Hash& root);

// RFC 9162 §2.1.4.2. OK when `proof` proves the tree of old_size leaves with
// old_root is a prefix of the tree of new_size leaves with new_root.
// InvalidArgument when old_size > new_size or the proof length is not that
// of PROOF(old_size, D[new_size]); FailedPrecondition when a well-formed
// proof does not verify. Edge cases the RFC leaves out (0 < old < new):
//   - old_size == new_size: the proof must be empty and the roots equal;
//   - old_size == 0: the proof must be empty and old_root == EmptyRoot()
//     (new_root is then unconstrained: every tree extends the empty one).
absl::Status VerifyConsistency(uint64_t old_size, uint64_t new_size,
                               const Sha256Hash& old_root,
                               const Sha256Hash& new_root,
                               std::span<const Sha256Hash> proof);

// ---------------------------------------------------------------------------
// Text forms (the `layerproof log` commands)

// 64 hex digits (either case). InvalidArgument naming the problem.
absl::StatusOr<Sha256Hash> ParseHash(std::string_view hex);
// Comma-separated hashes; "" is the empty proof. InvalidArgument naming the
// item (0-based) on a bad one.
absl::StatusOr<std::vector<Sha256Hash>> ParseProof(std::string_view text);
// A leaves file: one leaf per line, each the hex of the leaf's data. Lines
// end in "\n" (a "\r" before it is dropped); a final newline is optional
// and does not start another leaf; an empty line is an empty leaf, so ""
// has no leaves and "\n" has one empty leaf. InvalidArgument naming the
// 1-based line on bad hex.
absl::StatusOr<std::vector<std::string>> ParseLeafLines(std::string_view text);

}  // namespace layerproof::store

#endif  // LAYERPROOF_STORE_MERKLE_H_
