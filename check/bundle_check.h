// Offline verification of an evidence bundle (audit.proto EvidenceBundle,
// docs/formats.md): what `layerproof verify-bundle` runs. With nothing but
// the bundle's bytes, the model (an engine over it and its digest) and the
// public keys of the log and of the provers, it re-checks every signature
// and inclusion proof in the bundle and re-derives the verdict by
// re-executing the audited layers and the head on this machine's hardware
// (check::ReExecutor, bit for bit). A bundle for a FAIL_MISMATCH of a
// cheating prover therefore verifies: the evidence confirms the verdict.
//
// What re-derivation rests on: the only prover-signed part of a bundle is
// the commitment. PASS and FAIL_MISMATCH are re-derived from opened inputs
// (tokens, seed, activations) that must each hash to the commitment's
// salted digests / layer hashes before they are used, so the prover's
// signature authenticates them. The opening itself is not signed, so a
// FAIL_OPENING is never re-derived (anyone with the verifier's key could
// fabricate a bad opening); neither is a FAIL_SIGNATURE (a signature that
// fails under the keys given is no evidence against the prover).
//
// Checks, in this order (each is reported with its name, a state and a
// detail of at most ~4 KiB; every check runs, so one report names every
// problem):
//   bundle_format         format_version 1 and the fields the verdict needs
//   verdict_signature     the verdict envelope verifies under the log key
//   checkpoint_signature  both inclusions carry the same checkpoint, signed
//                         by the log key under key name Verdict.verifier_id
//   log_origin            the checkpoint's origin is the bundle's log_origin
//                         and BundleTrust::expected_origin, which defaults
//                         to "layerproof/" + Verdict.verifier_id
//   commitment_signature  the commitment envelope verifies under a prover key
//                         (for a FAIL_SIGNATURE verdict: fails when it DOES
//                         verify, which contradicts the verdict)
//   commitment_inclusion  the commitment's leaf is in the checkpoint's tree
//   verdict_inclusion     the verdict's leaf is in the checkpoint's tree
//   verdict_binding       the verdict names this commitment: request id,
//                         leaf hash, leaf index, and is logged after it
//   model_digest          the commitment's model digest is the local model's
//   opening_binding       the opening is of this commitment's envelope, and
//                         its layers are the ones the header lists
//   re_execution          ReExecutor on this machine re-derives the verdict:
//                         outcome, mismatch {layer, expected, got},
//                         audited_layers and head_checked are equal
// A check that cannot apply to this verdict is kNotApplicable with a detail
// saying why (e.g. re_execution for FAIL_TIMEOUT: nothing was opened).
// When a check needs a part of the bundle that an earlier check found
// unusable, it is kNotApplicable ("not checked: ...") and the earlier
// failure already makes ok() false.
//
// Verdicts that are never re-derived offline: FAIL_TIMEOUT, FAIL_OPENING
// (with or without an opening; with one, re_execution still fails when
// re-execution here gives another verdict), and FAIL_SIGNATURE (at
// submission or at audit). Their bundles can still be ok() (every check
// that applies passes) with verdict_rederived false: authentic, the
// verifier's word, but not confirmed by re-execution. `layerproof
// verify-bundle` exits 3 for them. A re-derived FAIL_MODEL confirms only
// that the commitment is not for the model given here.
//
// Limits: a log fork (a second tree signed by the same key) is not
// detected without a trusted checkpoint or witness cosignatures.
//
// Hostile input never reaches an assert: sizes are limited before
// anything is parsed or allocated, and every problem is named.
//
// Thread safety: VerifyEvidenceBundle is reentrant; `engine` is used
// through its const methods only. While it parses the bundle's hostile
// bytes it holds a google::protobuf::LogSilencer (protobuf's own log lines,
// e.g. on invalid UTF-8, would duplicate the checks' details), which
// silences protobuf's non-fatal logging process-wide for that time.
#ifndef LAYERPROOF_CHECK_BUNDLE_CHECK_H_
#define LAYERPROOF_CHECK_BUNDLE_CHECK_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/model/engine.h"
#include "layerproof/v1/audit.pb.h"
#include "layerproof/v1/records.pb.h"
#include "store/crypto.h"

namespace layerproof::check {

// The largest bundle accepted: an opening of at most 1 GiB of activations
// (GrpcOpeningSourceOptions::max_opening_bytes) plus 64 MiB for the rest.
// The EvidenceBundle format this code writes (verifier/evidence.cc) and
// reads (bundle_format check).
inline constexpr uint32_t kEvidenceFormatVersion = 1;

inline constexpr size_t kMaxEvidenceBundleBytes =
    (size_t{1} << 30) + (size_t{64} << 20);

// Whom the verification trusts.
struct BundleTrust {
  // The log's (the verifier's) key: it signs verdicts and checkpoints.
  store::Ed25519PublicKey log_key;
  // The provers' keys; a commitment must be signed by one of them.
  std::vector<store::Ed25519PublicKey> prover_keys;
  // The log's origin line the checkpoint must name; empty: "layerproof/"
  // + the verdict's verifier_id (how the verifier names its log). The
  // bundle's log_origin must name it too.
  std::string expected_origin;
};

struct BundleCheckResult {
  std::string check;  // one of the names above
  enum class State { kPass, kFail, kNotApplicable } state;
  std::string detail;
};

// "pass", "fail" or "n/a".
std::string_view BundleCheckStateName(BundleCheckResult::State state);

struct BundleVerification {
  std::vector<BundleCheckResult> checks;
  // No check failed.
  bool ok() const;
  // re_execution passed: the verdict was re-derived on this machine.
  // Never true for FAIL_TIMEOUT, FAIL_OPENING or FAIL_SIGNATURE.
  bool verdict_rederived = false;
  // As the bundle claims them, when their envelopes parse (default
  // messages otherwise); authentic only when their signature checks pass.
  v1::Verdict verdict;
  v1::Commitment commitment;
  // Where the verdict sits in the log, from its inclusion (0 if absent).
  uint64_t verdict_leaf_index = 0;
};

// Parses a serialised EvidenceBundle. InvalidArgument (naming what is
// wrong) when it is larger than kMaxEvidenceBundleBytes, does not parse, or
// has a format_version other than 1. Checks nothing else.
absl::StatusOr<v1::EvidenceBundle> ParseEvidenceBundle(
    std::string_view bundle_bytes);

// Verifies the serialised EvidenceBundle `bundle_bytes` with `engine` (its
// model is the local model; it should accept the model's whole
// max_positions) whose model digest is `model_digest` (32 bytes), under
// `trust`. `progress`, when set, is called on the calling thread before each
// check (done = checks finished, total = checks, step = the check's name)
// and once at the end with done == total.
// InvalidArgument (naming what is wrong) when ParseEvidenceBundle fails;
// everything else is a check's result.
absl::StatusOr<BundleVerification> VerifyEvidenceBundle(
    std::string_view bundle_bytes, const kernels::model::Engine& engine,
    std::string_view model_digest, const BundleTrust& trust,
    const std::function<void(int done, int total, std::string_view step)>&
        progress = {});
// The same for a bundle ParseEvidenceBundle already returned (a caller
// that parses first, to refuse a malformed bundle before loading a model,
// need not parse it twice).
absl::StatusOr<BundleVerification> VerifyEvidenceBundle(
    v1::EvidenceBundle bundle, const kernels::model::Engine& engine,
    std::string_view model_digest, const BundleTrust& trust,
    const std::function<void(int done, int total, std::string_view step)>&
        progress = {});

}  // namespace layerproof::check

#endif  // LAYERPROOF_CHECK_BUNDLE_CHECK_H_
