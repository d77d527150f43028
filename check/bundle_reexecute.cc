// The "re_execution" check of an evidence bundle (check/bundle_check.h,
// docs/formats.md): re-runs the recorded audit on this machine's engine from
// the bundle's opening and compares the re-derived verdict with the claimed
// one.
#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "check/opening_header.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "google/protobuf/stubs/logging.h"
#include "store/envelope.h"
#include "check/internal/bundle_parts.h"
#include "check/bytes.h"
#include "check/re_executor.h"

namespace layerproof::check::internal::bundle_check {
namespace {

// Serves the bundle's opening to the ReExecutor, validating it as
// GrpcOpeningSource validates a stream (opening_client.h).
class BundleOpeningSource : public OpeningSource {
 public:
  explicit BundleOpeningSource(const v1::EvidenceBundle& bundle)
      : bundle_(bundle) {}

  absl::StatusOr<Opening> Open(std::string_view, std::string_view,
                               const std::vector<uint32_t>& layers,
                               uint64_t positions, uint64_t hidden_size,
                               absl::Time) override {
    static_assert(std::endian::native == std::endian::little,
                  "opened layers are little-endian fp32");
    opened_ = true;
    if (!bundle_.has_opening()) {
      return OpeningUnavailableToVerifier("the bundle holds no opening");
    }
    const v1::OpeningHeader& h = bundle_.opening();
    if (absl::Status shape =
            check::CheckOpeningHeaderShape(h, layers, positions, hidden_size);
        !shape.ok()) {
      return Malformed(std::string(shape.message()));
    }
    const uint64_t bytes = positions * hidden_size * sizeof(float);
    Opening out;
    out.header = h;
    for (const v1::OpenedLayer& o : bundle_.opened_layers()) {
      if (!std::binary_search(layers.begin(), layers.end(), o.layer())) {
        return Malformed(
            absl::StrCat("rows of h^", o.layer(), ", which was not requested"));
      }
      if (out.layers.count(o.layer()) > 0) {
        return Malformed(absl::StrCat("h^", o.layer(), " twice"));
      }
      if (o.data().size() != bytes) {
        return Malformed(absl::StrCat("h^", o.layer(), ": ", o.data().size(),
                                      " bytes, want ", bytes,
                                      " (positions x hidden_size x 4)"));
      }
      std::vector<float>& rows = out.layers[o.layer()];
      rows.resize(positions * hidden_size);
      if (bytes > 0) std::memcpy(rows.data(), o.data().data(), bytes);
    }
    for (uint32_t k : layers) {
      if (out.layers.count(k) == 0) {
        return Malformed(absl::StrCat("h^", k, " missing"));
      }
    }
    return out;
  }

  bool opened() const { return opened_; }

 private:
  static absl::Status Malformed(std::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("opening malformed: ", std::string(why)));
  }

  const v1::EvidenceBundle& bundle_;
  bool opened_ = false;
};

// The plan the audit ran (re_executor.cc): a sampled plan opens h^(l-1) for
// each drawn l > 1 and always h^L, so an opening that lists no layers was
// an all_layers audit. A verdict that stopped at the opening records no
// audited_layers; its plan is then recovered from the opened k values.
AuditPlan PlanOf(const v1::Verdict& v, const v1::EvidenceBundle& b,
                 uint32_t num_layers) {
  AuditPlan plan;
  plan.audit_seed = v.audit_seed();
  if (b.has_opening() && b.opening().layers_size() == 0) {
    plan.all_layers = true;
    return plan;
  }
  if (v.audited_layers_size() > 0 || !b.has_opening()) {
    plan.layers.assign(v.audited_layers().begin(), v.audited_layers().end());
    return plan;
  }
  for (uint32_t k : b.opening().layers()) {
    if (k < num_layers) plan.layers.push_back(k + 1);
  }
  return plan;
}

// How `got` (re-derived) differs from `claimed`, or "" when it does not.
std::string VerdictDifference(const v1::Verdict& claimed,
                              const v1::Verdict& got) {
  std::vector<std::string> d;
  if (claimed.outcome() != got.outcome() ||
      (claimed.outcome() == v1::FAIL_MISMATCH &&
       (claimed.mismatch().layer() != got.mismatch().layer() ||
        claimed.mismatch().expected() != got.mismatch().expected() ||
        claimed.mismatch().got() != got.mismatch().got()))) {
    d.push_back(absl::StrCat("the bundle's verdict is ", Describe(claimed),
                             "; re-execution here gives ", Describe(got),
                             got.detail().empty() ? "" : ": ", got.detail()));
  }
  if (claimed.request_id() != got.request_id()) {
    d.push_back(absl::StrCat("request id ", Hex(claimed.request_id()),
                             ", re-derived ", Hex(got.request_id())));
  }
  if (claimed.commitment_leaf_hash() != got.commitment_leaf_hash()) {
    d.push_back("commitment_leaf_hash differs from the re-derived one");
  }
  if (!std::equal(claimed.audited_layers().begin(),
                  claimed.audited_layers().end(), got.audited_layers().begin(),
                  got.audited_layers().end())) {
    d.push_back(absl::StrCat("audited_layers ",
                             Layers(claimed.audited_layers()), ", re-derived ",
                             Layers(got.audited_layers())));
  }
  if (claimed.head_checked() != got.head_checked()) {
    d.push_back(absl::StrCat("head_checked ", claimed.head_checked(),
                             ", re-derived ", got.head_checked()));
  }
  return absl::StrJoin(d, "; ");
}
}  // namespace

BundleCheckResult CheckReExecution(Parts& p,
                                   const kernels::model::Engine& engine,
                                   std::string_view model_digest,
                                   const BundleTrust& trust) {
  if (!p.verdict.has_value()) {
    return NotApplicable("not checked: no parseable verdict");
  }
  const v1::Verdict& v = *p.verdict;
  const v1::EvidenceBundle& b = p.bundle;
  if (v.outcome() == v1::FAIL_UNLOGGED) {
    return NotApplicable(
        "FAIL_UNLOGGED: nothing was logged to re-execute, and that the log "
        "did not hold the promised leaf has no proof an RFC 6962 log can "
        "give; the verdict is authentic but the verifier's word");
  }
  if (v.outcome() == v1::INCONCLUSIVE) {
    return NotApplicable(
        "INCONCLUSIVE: the verifier closed the audit without a finding (its "
        "own errors, or an opening asked for after the prover's retention); "
        "the verdict is authentic but there is nothing to re-derive");
  }
  if (v.outcome() == v1::FAIL_TIMEOUT) {
    return NotApplicable(
        "FAIL_TIMEOUT: the opening never arrived, so nothing can be "
        "re-executed; the verdict is authentic but not re-derivable offline");
  }
  if (RefusedAtSubmission(v)) {
    return NotApplicable(
        "FAIL_SIGNATURE at submission: the log refused the commitment and "
        "no audit ran; the verdict is authentic but not re-derivable offline");
  }
  if (v.outcome() == v1::FAIL_SIGNATURE) {
    // A signature that fails under the keys given here is no evidence
    // against the prover: the user may lack its key. commitment_signature
    // fails when the commitment does verify under a given key.
    return NotApplicable(
        "FAIL_SIGNATURE is never re-derived offline: a commitment that does "
        "not verify under the prover keys given here is no evidence against "
        "the prover (its key may not be among them); the verdict is the "
        "verifier's word");
  }
  if (v.outcome() == v1::FAIL_OPENING && !b.has_opening()) {
    return NotApplicable(
        "FAIL_OPENING without an opening: it was refused, late or malformed "
        "in transit, and the bundle holds none; the verdict is authentic but "
        "not re-derivable offline");
  }
  const uint32_t num_layers =
      static_cast<uint32_t>(engine.model().config().num_layers);
  const AuditPlan plan = PlanOf(v, b, num_layers);
  store::KeyRing ring;
  for (const store::Ed25519PublicKey& k : trust.prover_keys) ring.Add(k);
  BundleOpeningSource source(b);
  ReExecutor re_executor(engine, std::string(model_digest));
  google::protobuf::LogSilencer silence;  // it parses the envelope too
  absl::StatusOr<AuditOutcome> outcome =
      re_executor.Audit(b.commitment_envelope(), v.commitment_leaf_index(),
                        plan, ring, source, absl::InfiniteDuration());
  if (!outcome.ok()) {
    if (IsOpeningUnavailableToVerifier(outcome.status())) {
      return Fail(absl::StrCat(
          "the bundle's verdict is ", Outcome(v.outcome()),
          ", but re-execution here gets past the checks that would give it "
          "and needs an opening, which the bundle does not hold"));
    }
    if (absl::IsInvalidArgument(outcome.status())) {
      return Fail(absl::StrCat("the verdict's audit plan does not fit: ",
                               outcome.status().message()));
    }
    return NotApplicable(absl::StrCat("could not re-execute on this machine: ",
                                      outcome.status().message()));
  }
  const std::string difference = VerdictDifference(v, outcome->verdict);
  if (!difference.empty()) return Fail(difference);
  const v1::Verdict& got = outcome->verdict;
  if (got.outcome() == v1::FAIL_OPENING) {
    // The opening (header with salt and tokens, activations) carries no
    // prover signature: anyone holding the verifier's key could make a
    // "bad opening" and sign a FAIL_OPENING verdict over it. PASS and
    // FAIL_MISMATCH are different: every opened input used there must hash
    // to the prover-signed commitment first.
    return NotApplicable(absl::StrCat(
        "re-execution here also gives FAIL_OPENING (", got.detail(),
        "), but the opening is not signed by the prover, so it could have "
        "been made by whoever holds the verifier's key: a failed opening is "
        "the verifier's word, not re-derived"));
  }
  if (!source.opened()) {
    std::string what = absl::StrCat("re-derived ", Describe(got),
                                    " from the checks before the opening on "
                                    "this machine");
    if (got.outcome() == v1::FAIL_MODEL) {
      absl::StrAppend(
          &what,
          ": this confirms only that the commitment is not for the model "
          "given here (digest ",
          Hex(model_digest),
          "); it is evidence against the prover only if that is the model "
          "the prover was required to serve");
    }
    return Pass(what);
  }
  const std::string planned =
      plan.all_layers ? absl::StrCat("all ", num_layers, " blocks")
                      : absl::StrCat("blocks ", Layers(got.audited_layers()));
  if (got.outcome() == v1::PASS) {
    return Pass(absl::StrCat("re-derived PASS from ", planned,
                             " and the head on this machine"));
  }
  // FAIL_MISMATCH: the audit stops at its first failure, so what follows
  // the failing layer never ran (here or at the verifier).
  const uint32_t layer = got.mismatch().layer();
  return Pass(absl::StrCat(
      "re-derived ", Describe(got), " on this machine; planned ", planned,
      layer > num_layers
          ? ", all of which matched; the head did not"
          : absl::StrCat(", re-executed in order up to the first failure "
                         "(layer ",
                         layer,
                         "): later blocks and the head were not re-derived")));
}

}  // namespace layerproof::check::internal::bundle_check
