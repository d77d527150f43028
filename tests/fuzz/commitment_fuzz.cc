// Fuzzes the Commitment record (store/envelope.h ParseCommitment, then
// store/commitment.h CheckStopRule), as the verifier and clients parse a
// verified envelope's payload. A commitment that parses is canonical: its
// deterministic re-encoding is the input, byte for byte.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "store/commitment.h"
#include "store/envelope.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_proto.h"

namespace store = layerproof::store;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto commitment = store::ParseCommitment(bytes);
  LP_FUZZ_CHECK_PRINTABLE(commitment.status());
  if (!commitment.ok()) return 0;
  LP_FUZZ_CHECK(layerproof::fuzz::Deterministic(*commitment) == bytes);
  LP_FUZZ_CHECK(store::ValidateCommitment(*commitment).ok());
  // The stop rule over outputs of the committed length, of stop ids and not.
  const uint64_t n = commitment->output_tokens();
  if (n <= 4096) {
    std::vector<int32_t> plain(n, 7);
    std::vector<int32_t> stops(n, commitment->stop_token_ids_size() > 0
                                      ? commitment->stop_token_ids(0)
                                      : 0);
    for (const auto* output : {&plain, &stops}) {
      size_t allowed = 0;
      LP_FUZZ_CHECK_PRINTABLE(
          store::CheckStopRule(*commitment, *output, &allowed));
    }
  }
  return 0;
}
