// Fuzzes inclusion proofs as clients check them (check/log_proofs.h, over
// store/merkle.h VerifyInclusion), in three forms chosen by the first byte:
//   0: a LogInclusion as a receipt or Log.GetInclusionProof carries it (the
//      checkpoint note, sizes and proof hashes), for leaf "leaf-<index>" of
//      the fixed log (fuzz_log.h), checked with CheckInclusion;
//   1: the text forms of `layerproof log` (ParseHash, ParseProof,
//      ParseLeafLines);
//   2: raw VerifyInclusion over the fixed tree: a proof that verifies
//      against the true root and leaf is the tree's own proof.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "check/log_proofs.h"
#include "layerproof/v1/inference.pb.h"
#include "store/merkle.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_keys.h"
#include "tests/fuzz/fuzz_log.h"

namespace check = layerproof::check;
namespace fuzz = layerproof::fuzz;
namespace store = layerproof::store;

namespace {

std::vector<store::Sha256Hash> Hashes(const std::string& bytes) {
  std::vector<store::Sha256Hash> out(bytes.size() / 32);
  for (size_t i = 0; i < out.size(); ++i) {
    std::copy_n(bytes.data() + 32 * i, 32, out[i].begin());
  }
  return out;
}

void Wire(fuzz::FuzzInput& in) {
  layerproof::v1::LogInclusion inclusion;
  if (!inclusion.ParseFromString(in.Rest())) return;
  const check::LogTrust trust{&fuzz::LogVerifier(), fuzz::kLogOrigin};
  const std::string leaf = fuzz::FuzzLeaf(inclusion.leaf_index());
  auto checkpoint = check::CheckInclusion(inclusion, leaf, trust,
                                          "GenerateResponse.receipt.inclusion");
  LP_FUZZ_CHECK_PRINTABLE(checkpoint.status());
  if (!checkpoint.ok()) return;
  // What verified is the fixed log's truth.
  LP_FUZZ_CHECK(checkpoint->size == inclusion.tree_size());
  LP_FUZZ_CHECK(inclusion.leaf_index() < inclusion.tree_size());
  if (checkpoint->size <= fuzz::kFuzzLogSize) {
    LP_FUZZ_CHECK(checkpoint->root ==
                  fuzz::FuzzCheckpoint(checkpoint->size).root);
  }
  LP_FUZZ_CHECK_PRINTABLE(check::CheckLeafHashInclusionIn(
      *checkpoint, inclusion.leaf_index(), inclusion.inclusion_proof(),
      store::LeafHash(leaf), "inclusion"));
}

void Text(fuzz::FuzzInput& in) {
  const std::string text = in.Rest();
  LP_FUZZ_CHECK_PRINTABLE(store::ParseHash(text).status());
  auto proof = store::ParseProof(text);
  LP_FUZZ_CHECK_PRINTABLE(proof.status());
  auto leaves = store::ParseLeafLines(text);
  LP_FUZZ_CHECK_PRINTABLE(leaves.status());
}

void Raw(fuzz::FuzzInput& in) {
  const store::InMemoryTree& tree = fuzz::FuzzTree();
  const uint64_t size = in.U8() % (fuzz::kFuzzLogSize + 1);
  const uint64_t index = in.U8() % (size + 1);  // index == size: invalid
  const bool fuzzed_root = in.U8() & 1;
  const std::string root_bytes = in.Bytes(32);
  const std::vector<store::Sha256Hash> proof = Hashes(in.Rest());
  store::Sha256Hash root = fuzz::FuzzCheckpoint(size).root;
  if (fuzzed_root)
    std::copy(root_bytes.begin(), root_bytes.end(), root.begin());
  const store::Sha256Hash leaf = store::LeafHash(fuzz::FuzzLeaf(index));
  const absl::Status s = store::VerifyInclusion(leaf, index, size, proof, root);
  LP_FUZZ_CHECK_PRINTABLE(s);
  if (s.ok()) {
    auto want = store::InclusionProof(tree, index, size);
    LP_FUZZ_CHECK(want.ok());
    if (root == fuzz::FuzzCheckpoint(size).root) LP_FUZZ_CHECK(*want == proof);
  }
  // Any sizes, any index.
  fuzz::FuzzInput again(reinterpret_cast<const uint8_t*>(root_bytes.data()),
                        root_bytes.size());
  const uint64_t big_index = again.U64(), big_size = again.U64();
  LP_FUZZ_CHECK_PRINTABLE(
      store::VerifyInclusion(leaf, big_index, big_size, proof, root));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput in(data, size);
  switch (in.U8() % 3) {
    case 0:
      Wire(in);
      break;
    case 1:
      Text(in);
      break;
    default:
      Raw(in);
      break;
  }
  return 0;
}
