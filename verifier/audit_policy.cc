// The audit draw (audit_policy.h). Everything a third party needs to
// re-derive a draw from the audit seed recorded in a verdict:
//
//   u        = the first 8 bytes of audit_seed as a little-endian u64.
//   audited  = rate >= 1, or u < floor(rate · 2^64) for 0 <= rate < 1
//              (rate · 2^64 is computed exactly: a double times a power of
//              two; so rate 0 never audits and rate 1 always does).
//   s        = min(layers_per_audit, L).
//   layers   : start from perm = [1, 2, …, L]; for i = 0 … s-1:
//                r_i = the first 8 bytes, little-endian, of
//                      SHA-256(audit_seed ‖ u32le(i))      (36 bytes hashed)
//                j   = i + (r_i mod (L - i))
//                swap(perm[i], perm[j])
//              then the drawn layers are perm[0..s), sorted ascending.
//
// The modulo bias of r_i mod (L - i) is at most (L - i) / 2^64 <= 2^-54
// for L <= 1024 (records.proto's limit): negligible.
// A seed that is not 32 bytes never audits (the draw is defined for 32-byte
// seeds only; FreshAuditSeed makes them).
#include "verifier/audit_policy.h"

#include <openssl/rand.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "store/crypto.h"

namespace layerproof::verifier {
namespace {

constexpr size_t kAuditSeedBytes = 32;

uint64_t U64Le(const uint8_t* p) {
  uint64_t v = 0;
  for (int b = 7; b >= 0; --b) v = (v << 8) | p[b];
  return v;
}

// floor(rate · 2^64) for 0 <= rate < 1. ldexp by 64 only changes the
// exponent, so the product is exact, and it is < 2^64, so the conversion
// (which truncates, i.e. floors a non-negative value) is defined.
uint64_t Threshold(double rate) {
  return static_cast<uint64_t>(std::ldexp(rate, 64));
}

bool Audited(uint64_t u, double rate) {
  if (!(rate > 0.0)) return false;  // also NaN
  if (rate >= 1.0) return true;
  return u < Threshold(rate);
}

// r_i of the header comment.
uint64_t SwapDraw(const std::string& audit_seed, uint32_t i) {
  store::Sha256Hasher h;
  h.Update(audit_seed);
  const uint8_t counter[4] = {
      static_cast<uint8_t>(i), static_cast<uint8_t>(i >> 8),
      static_cast<uint8_t>(i >> 16), static_cast<uint8_t>(i >> 24)};
  h.Update(store::Bytes(counter, sizeof(counter)));
  const store::Sha256Hash d = h.Final();
  return U64Le(d.data());
}

}  // namespace

absl::Status ValidateAuditPolicy(const AuditPolicy& policy) {
  if (!(policy.rate >= 0.0 && policy.rate <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "AuditPolicy.rate: got ", policy.rate, ", want in [0, 1]"));
  }
  if (policy.layers_per_audit < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("AuditPolicy.layers_per_audit: got ",
                     policy.layers_per_audit, ", want >= 1"));
  }
  return absl::OkStatus();
}

AuditDraw DrawAudit(const std::string& audit_seed, const AuditPolicy& policy,
                    uint32_t num_layers) {
  AuditDraw draw;
  if (audit_seed.size() != kAuditSeedBytes || num_layers == 0) return draw;
  const uint64_t u = U64Le(reinterpret_cast<const uint8_t*>(audit_seed.data()));
  if (!Audited(u, policy.rate)) return draw;
  draw.audit = true;
  const uint32_t s = std::min(policy.layers_per_audit, num_layers);
  std::vector<uint32_t> perm(num_layers);
  std::iota(perm.begin(), perm.end(), 1u);
  for (uint32_t i = 0; i < s; ++i) {
    const uint64_t r = SwapDraw(audit_seed, i);
    const uint32_t j = i + static_cast<uint32_t>(r % (num_layers - i));
    std::swap(perm[i], perm[j]);
  }
  draw.layers.assign(perm.begin(), perm.begin() + s);
  std::sort(draw.layers.begin(), draw.layers.end());
  return draw;
}

AuditSeedSource SeededAuditSeeds(std::string key) {
  struct State {
    absl::Mutex mu;
    std::map<std::string, uint64_t, std::less<>> next ABSL_GUARDED_BY(mu);
  };
  auto state = std::make_shared<State>();
  return [key = std::move(key),
          state](std::string_view prover_id) -> absl::StatusOr<std::string> {
    uint64_t n = 0;
    {
      absl::MutexLock lock(&state->mu);
      n = state->next[std::string(prover_id)]++;
    }
    std::string message = key;
    message.append(prover_id);
    message.push_back('\0');
    for (int i = 0; i < 8; ++i) message.push_back(char((n >> (8 * i)) & 0xFF));
    const store::Sha256Hash h = store::Sha256Hasher::Digest(message);
    return std::string(h.begin(), h.end());
  };
}

absl::StatusOr<std::string> FreshAuditSeed() {
  std::string seed(kAuditSeedBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(seed.data()),
                 static_cast<int>(seed.size())) != 1) {
    return absl::InternalError("RAND_bytes failed to draw an audit seed");
  }
  return seed;
}

}  // namespace layerproof::verifier
