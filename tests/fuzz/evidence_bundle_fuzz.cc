// Fuzzes evidence bundles as `layerproof verify-bundle` reads them
// (check/bundle_check.h): ParseEvidenceBundle, then VerifyEvidenceBundle
// with the fixed verifier and prover keys (fuzz_keys.h) over the tiny
// synthetic model (fuzz_model.h). Every check's detail is printable.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "check/bundle_check.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_keys.h"
#include "tests/fuzz/fuzz_model.h"

namespace check = layerproof::check;
namespace fuzz = layerproof::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::FuzzModel& model = fuzz::TheFuzzModel();
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto bundle = check::ParseEvidenceBundle(bytes);
  LP_FUZZ_CHECK_PRINTABLE(bundle.status());
  if (!bundle.ok()) return 0;
  check::BundleTrust trust;
  trust.log_key = fuzz::VerifierKey().public_key();
  trust.prover_keys = {fuzz::ProverKey().public_key()};
  auto verification = check::VerifyEvidenceBundle(
      *std::move(bundle), *model.engine, model.digest, trust);
  LP_FUZZ_CHECK_PRINTABLE(verification.status());
  if (!verification.ok()) return 0;
  for (const check::BundleCheckResult& c : verification->checks) {
    LP_FUZZ_CHECK(layerproof::kernels::IsPrintable(c.detail));
  }
  return 0;
}
