// Fuzzes the Verdict record (store/envelope.h ParseVerdict) as clients,
// bundles and reports parse a verified verdict, and the SubmissionPromise
// (ParseSubmissionPromise), the other record a client receives. A record
// that parses is canonical: its deterministic re-encoding is the input.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "store/commitment.h"
#include "store/envelope.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_proto.h"

namespace store = layerproof::store;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto verdict = store::ParseVerdict(bytes);
  LP_FUZZ_CHECK_PRINTABLE(verdict.status());
  if (verdict.ok()) {
    LP_FUZZ_CHECK(layerproof::fuzz::Deterministic(*verdict) == bytes);
    LP_FUZZ_CHECK(store::ValidateVerdict(*verdict).ok());
  }
  auto promise = store::ParseSubmissionPromise(bytes);
  LP_FUZZ_CHECK_PRINTABLE(promise.status());
  if (promise.ok()) {
    LP_FUZZ_CHECK(layerproof::fuzz::Deterministic(*promise) == bytes);
    const int64_t due = store::PromiseDueUnixNanos(*promise);
    LP_FUZZ_CHECK(due > promise->promised_at_unix_nanos() &&
                  due <= promise->log_by_unix_nanos());
  }
  return 0;
}
