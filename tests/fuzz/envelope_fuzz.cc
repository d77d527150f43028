// Fuzzes signed envelopes (store/envelope.h VerifyEnvelope) as the log and
// the clients receive them: under a key ring holding the fixed prover and
// verifier keys, for each record type; a payload that verified is parsed
// as that record. An envelope that verifies is the canonical encoding of
// what it parses to (one byte string per signed record).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "layerproof/v1/records.pb.h"
#include "store/envelope.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_keys.h"
#include "tests/fuzz/fuzz_proto.h"

namespace store = layerproof::store;
namespace v1 = layerproof::v1;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const store::KeyRing* keys = [] {
    auto* ring = new store::KeyRing;
    ring->Add(layerproof::fuzz::ProverKey().public_key());
    ring->Add(layerproof::fuzz::VerifierKey().public_key());
    return ring;
  }();
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (std::string_view type :
       {store::kCommitmentPayloadType, store::kVerdictPayloadType,
        store::kSubmissionPromisePayloadType}) {
    auto verified = store::VerifyEnvelope(bytes, *keys, type, 1 << 20);
    LP_FUZZ_CHECK_PRINTABLE(verified.status());
    if (!verified.ok()) continue;
    LP_FUZZ_CHECK(verified->payload_type == type);
    LP_FUZZ_CHECK(!verified->key_ids.empty());
    v1::Envelope envelope;
    LP_FUZZ_CHECK(envelope.ParseFromString(std::string(bytes)));
    LP_FUZZ_CHECK(layerproof::fuzz::Deterministic(envelope) == bytes);
    if (type == store::kCommitmentPayloadType) {
      LP_FUZZ_CHECK_PRINTABLE(
          store::ParseCommitment(verified->payload).status());
    } else if (type == store::kVerdictPayloadType) {
      LP_FUZZ_CHECK_PRINTABLE(store::ParseVerdict(verified->payload).status());
    } else {
      LP_FUZZ_CHECK_PRINTABLE(
          store::ParseSubmissionPromise(verified->payload).status());
    }
  }
  return 0;
}
