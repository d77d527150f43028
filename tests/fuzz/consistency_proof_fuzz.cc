// Fuzzes consistency proofs as clients check a newer checkpoint against the
// last one they trust (check/log_proofs.h CheckCheckpointFollows, over
// store/merkle.h VerifyConsistency), in two forms chosen by the first byte:
//   0: the wire: the trusted checkpoint is the fixed log (fuzz_log.h) at a
//      fuzzed size; then a u16-sized signed note (the newer checkpoint,
//      GetCheckpointResponse.checkpoint) and a GetConsistencyProofResponse;
//   1: raw VerifyConsistency between two sizes of the fixed tree: a proof
//      that verifies between the true roots is the tree's own proof.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "check/log_proofs.h"
#include "layerproof/v1/log.pb.h"
#include "store/merkle.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_keys.h"
#include "tests/fuzz/fuzz_log.h"

namespace check = layerproof::check;
namespace fuzz = layerproof::fuzz;
namespace store = layerproof::store;

namespace {

void Wire(fuzz::FuzzInput& in) {
  const store::Checkpoint last =
      fuzz::FuzzCheckpoint(in.U8() % (fuzz::kFuzzLogSize + 1));
  const std::string note = in.Sized();
  layerproof::v1::GetConsistencyProofResponse response;
  if (!response.ParseFromString(in.Rest())) return;
  auto next = fuzz::LogVerifier().Verify(note, fuzz::kLogOrigin);
  LP_FUZZ_CHECK_PRINTABLE(next.status());
  if (!next.ok()) return;
  const absl::Status follows = check::CheckCheckpointFollows(
      last, *next, response.proof(), "GetConsistencyProofResponse.proof");
  LP_FUZZ_CHECK_PRINTABLE(follows);
  if (follows.ok()) {
    LP_FUZZ_CHECK(next->size >= last.size);
    if (next->size == last.size) LP_FUZZ_CHECK(next->root == last.root);
  }
}

void Raw(fuzz::FuzzInput& in) {
  uint64_t old_size = in.U8() % (fuzz::kFuzzLogSize + 1);
  uint64_t new_size = in.U8() % (fuzz::kFuzzLogSize + 1);
  const uint8_t flags = in.U8();
  std::string root_bytes = in.Bytes(32);
  root_bytes.resize(32);
  const std::string rest = in.Rest();
  std::vector<store::Sha256Hash> proof(rest.size() / 32);
  for (size_t i = 0; i < proof.size(); ++i) {
    std::copy_n(rest.data() + 32 * i, 32, proof[i].begin());
  }
  store::Sha256Hash old_root = fuzz::FuzzCheckpoint(old_size).root;
  store::Sha256Hash new_root = fuzz::FuzzCheckpoint(new_size).root;
  const bool true_roots = (flags & 3) == 0;
  if (flags & 1) std::copy_n(root_bytes.data(), 32, old_root.begin());
  if (flags & 2) std::copy_n(root_bytes.data(), 32, new_root.begin());
  const absl::Status s =
      store::VerifyConsistency(old_size, new_size, old_root, new_root, proof);
  LP_FUZZ_CHECK_PRINTABLE(s);
  if (s.ok() && true_roots) {
    auto want = store::ConsistencyProof(fuzz::FuzzTree(), old_size, new_size);
    LP_FUZZ_CHECK(want.ok() && *want == proof);
  }
  // Any sizes.
  fuzz::FuzzInput sizes(reinterpret_cast<const uint8_t*>(root_bytes.data()),
                        root_bytes.size());
  old_size = sizes.U64();
  new_size = sizes.U64();
  LP_FUZZ_CHECK_PRINTABLE(
      store::VerifyConsistency(old_size, new_size, old_root, new_root, proof));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput in(data, size);
  if (in.U8() % 2 == 0) {
    Wire(in);
  } else {
    Raw(in);
  }
  return 0;
}
