// Fuzzes C2SP checkpoint notes (store/checkpoint.h): the signed note as a
// client or witness verifies it (CheckpointVerifier::Verify, with and
// without the origin), the body alone (ParseCheckpointBody) and strict
// base64. A note that verifies has the body of the checkpoint it returns.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "store/checkpoint.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_keys.h"

namespace store = layerproof::store;
using layerproof::fuzz::kLogOrigin;
using layerproof::fuzz::LogVerifier;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (std::string_view origin :
       {std::string_view(), std::string_view(kLogOrigin)}) {
    auto checkpoint = LogVerifier().Verify(text, origin);
    LP_FUZZ_CHECK_PRINTABLE(checkpoint.status());
    if (checkpoint.ok()) {
      LP_FUZZ_CHECK(text.starts_with(store::CheckpointBody(*checkpoint)));
      LP_FUZZ_CHECK(origin.empty() || checkpoint->origin == origin);
    }
  }
  auto body = store::ParseCheckpointBody(text);
  LP_FUZZ_CHECK_PRINTABLE(body.status());
  if (body.ok()) {
    auto again = store::ParseCheckpointBody(store::CheckpointBody(*body));
    LP_FUZZ_CHECK(again.ok() && again->origin == body->origin &&
                  again->size == body->size && again->root == body->root &&
                  again->extensions == body->extensions);
  }
  auto decoded = store::Base64Decode(text);
  LP_FUZZ_CHECK_PRINTABLE(decoded.status());
  if (decoded.ok()) {
    LP_FUZZ_CHECK(store::Base64Encode(store::AsBytes(*decoded)) == text);
  }
  return 0;
}
