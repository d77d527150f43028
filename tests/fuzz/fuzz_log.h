// The fixed log of the proof fuzz targets and their seeds: kFuzzLogSize
// leaves "leaf-0", "leaf-1", ... in an in-memory tree, and checkpoints of
// any of its sizes signed by the fixed verifier key (fuzz_keys.h).
#ifndef LAYERPROOF_TESTS_FUZZ_FUZZ_LOG_H_
#define LAYERPROOF_TESTS_FUZZ_FUZZ_LOG_H_

#include <cstdint>
#include <cstdlib>
#include <string>

#include "store/checkpoint.h"
#include "store/merkle.h"
#include "tests/fuzz/fuzz_keys.h"

namespace layerproof::fuzz {

inline constexpr uint64_t kFuzzLogSize = 37;

inline std::string FuzzLeaf(uint64_t index) {
  return "leaf-" + std::to_string(index);
}

inline const store::InMemoryTree& FuzzTree() {
  static const store::InMemoryTree* tree = [] {
    auto* t = new store::InMemoryTree;
    for (uint64_t i = 0; i < kFuzzLogSize; ++i) t->Append(FuzzLeaf(i));
    return t;
  }();
  return *tree;
}

// The checkpoint of the first `size` leaves (size <= kFuzzLogSize).
inline store::Checkpoint FuzzCheckpoint(uint64_t size) {
  auto root = store::RootAt(FuzzTree(), size);
  if (!root.ok()) std::abort();
  store::Checkpoint c;
  c.origin = kLogOrigin;
  c.size = size;
  c.root = *root;
  return c;
}

}  // namespace layerproof::fuzz

#endif  // LAYERPROOF_TESTS_FUZZ_FUZZ_LOG_H_
