// The audit policy (DESIGN §6): which logged commitments are audited and
// which blocks each audit re-executes, drawn from fresh randomness after the
// commitment is logged so that the prover cannot know in advance.
//
// The draw is a pure function of a 32-byte audit seed, which the verdict
// records, so anyone can re-derive the decision and the layers from it
// (docs/protocol.md "Audit draw"):
//   u       = u64le(audit_seed[0..8])
//   audited = u < rate · 2^64          (rate 1: always; rate 0: never)
//   layers  = a partial Fisher–Yates shuffle of [1..L] whose i-th swap
//             index is drawn from SHA-256(audit_seed ‖ u32le(i)), the first
//             s entries, sorted ascending (exact rule in audit_policy.cc).
// A seed that is not 32 bytes never audits.
// Thread safety: pure functions, except FreshAuditSeed (thread-safe).
#ifndef LAYERPROOF_VERIFIER_AUDIT_POLICY_H_
#define LAYERPROOF_VERIFIER_AUDIT_POLICY_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace layerproof::verifier {

struct AuditPolicy {
  // The fraction of logged commitments audited, in [0, 1].
  double rate = 0.1;
  // s, the blocks re-executed per audit, >= 1 (capped at L). The head is
  // always checked; the embedding when block 1 is drawn.
  uint32_t layers_per_audit = 1;
};

struct AuditDraw {
  bool audit = false;
  std::vector<uint32_t>
      layers;  // ascending, distinct, in 1..L; empty when !audit
};

// InvalidArgument naming the field for rate outside [0, 1] or s = 0.
absl::Status ValidateAuditPolicy(const AuditPolicy& policy);

// The draw for `audit_seed` (32 bytes) on a model of `num_layers` blocks.
AuditDraw DrawAudit(const std::string& audit_seed, const AuditPolicy& policy,
                    uint32_t num_layers);

// 32 bytes from the operating system's CSPRNG (OpenSSL RAND_bytes).
absl::StatusOr<std::string> FreshAuditSeed();

// Where the policy's audit seeds come from, one call per logged
// commitment, with the commitment's prover id. A real verifier uses
// FreshAuditSeed only: a seed a prover can predict tells it which of its
// requests escape audit.
using AuditSeedSource =
    std::function<absl::StatusOr<std::string>(std::string_view prover_id)>;

// A reproducible source, for tests and `layerproof demo --audit-seed`: the
// n-th seed (n = 0, 1, ...) for a prover is SHA-256(key ‖ prover_id ‖ 0 ‖
// u64le(n)), a counter per prover, so which draws a prover's commitments
// get does not depend on how its requests interleave with other provers'.
// Thread-safe.
AuditSeedSource SeededAuditSeeds(std::string key);

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_AUDIT_POLICY_H_
