#include "check/bundle_check.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "check/bytes.h"
#include "check/internal/bundle_parts.h"
#include "check/log_proofs.h"
#include "google/protobuf/stubs/logging.h"
#include "kernels/printable.h"
#include "kernels/status.h"
#include "layerproof/v1/audit.pb.h"
#include "layerproof/v1/inference.pb.h"
#include "store/checkpoint.h"
#include "store/commitment.h"
#include "store/envelope.h"
#include "store/merkle.h"
#include "store/status.h"

namespace layerproof::check {
namespace internal::bundle_check {

std::string Outcome(v1::VerdictOutcome o) {
  return v1::VerdictOutcome_IsValid(o) ? v1::VerdictOutcome_Name(o)
                                       : absl::StrCat("outcome ", int(o));
}

// "FAIL_MISMATCH at layer 2 (expected <hex>, got <hex>)", or the outcome.
std::string Describe(const v1::Verdict& v) {
  std::string s = Outcome(v.outcome());
  if (v.outcome() == v1::FAIL_MISMATCH) {
    absl::StrAppend(&s, " at layer ", v.mismatch().layer(), " (expected ",
                    Hex(v.mismatch().expected()), ", got ",
                    Hex(v.mismatch().got()), ")");
  }
  return s;
}

std::string Layers(const google::protobuf::RepeatedField<uint32_t>& layers) {
  if (layers.size() <= kMaxListedLayers) {
    return absl::StrCat("[", absl::StrJoin(layers, ","), "]");
  }
  return absl::StrCat(
      "[",
      absl::StrJoin(layers.begin(), layers.begin() + kMaxListedLayers, ","),
      ", ... (", layers.size() - kMaxListedLayers, " more)]");
}

std::string BoundedDetail(std::string detail) {
  // Details quote the bundle's bytes (ids, names, messages): escaped first.
  if (!kernels::IsPrintable(detail)) {
    detail = kernels::Printable(detail, detail.size());
  }
  if (detail.size() <= kMaxDetailBytes) return detail;
  const size_t dropped_from = [&] {
    size_t n = kMaxDetailBytes;
    // Never split a UTF-8 sequence: back up over continuation bytes.
    while (n > 0 && (static_cast<unsigned char>(detail[n]) & 0xc0) == 0x80) {
      --n;
    }
    return n;
  }();
  const size_t more = detail.size() - dropped_from;
  detail.resize(dropped_from);
  absl::StrAppend(&detail, " ... (", more, " more bytes)");
  return detail;
}

namespace {

// A commitment with 1025 layer hashes is ~40 KiB and a verdict ~5 KiB; the
// limit only bounds the work hostile input can cause.
constexpr size_t kMaxEnvelopeBytes = 16 << 20;

constexpr const char* kCheckNames[] = {
    "bundle_format",     "verdict_signature",    "checkpoint_signature",
    "log_origin",        "commitment_signature", "commitment_inclusion",
    "verdict_inclusion", "verdict_binding",      "model_digest",
    "opening_binding",   "re_execution",
};
constexpr int kNumChecks = sizeof(kCheckNames) / sizeof(kCheckNames[0]);

// The payload of a serialised Envelope, without checking its signatures.
std::optional<std::string> UnverifiedPayload(const std::string& envelope) {
  if (envelope.size() > kMaxEnvelopeBytes) return std::nullopt;
  v1::Envelope e;
  if (!e.ParseFromString(envelope)) return std::nullopt;
  return std::move(*e.mutable_payload());
}

Parts Dissect(v1::EvidenceBundle bundle) {
  // Hostile bytes are expected here; each problem is a check's result, so
  // protobuf's own log lines (e.g. invalid UTF-8) would only be noise.
  google::protobuf::LogSilencer silence;
  Parts p;
  p.bundle = std::move(bundle);
  if (std::optional<std::string> payload =
          UnverifiedPayload(p.bundle.verdict_envelope())) {
    absl::StatusOr<v1::Verdict> v = store::ParseVerdict(*payload);
    if (v.ok()) p.verdict = *std::move(v);
  }
  if (std::optional<std::string> payload =
          UnverifiedPayload(p.bundle.commitment_envelope())) {
    v1::Commitment raw;
    if (raw.ParseFromString(*payload)) {
      p.commitment_request_id = raw.request_id();
    }
    absl::StatusOr<v1::Commitment> c = store::ParseCommitment(*payload);
    if (c.ok()) p.commitment = *std::move(c);
  }
  p.commitment_leaf_hash =
      DigestBytes(store::LeafHash(p.bundle.commitment_envelope()));
  return p;
}
// --- the checks, in order -------------------------------------------------

BundleCheckResult CheckFormat(const Parts& p) {
  const v1::EvidenceBundle& b = p.bundle;
  std::vector<std::string> problems;
  if (b.log_origin().empty()) problems.push_back("log_origin: empty");
  if (b.commitment_envelope().empty() && !UnloggedPromise(p.verdict)) {
    problems.push_back("commitment_envelope: empty");
  }
  if (b.verdict_envelope().empty()) {
    problems.push_back("verdict_envelope: empty");
  }
  if (!b.has_verdict_inclusion()) {
    problems.push_back("verdict_inclusion: absent");
  }
  if (p.verdict.has_value()) {
    const v1::Verdict& v = *p.verdict;
    if (v.has_commitment_leaf_index() && !b.has_commitment_inclusion()) {
      problems.push_back(
          "commitment_inclusion: absent, but the verdict names a logged "
          "commitment");
    }
    if (!v.has_commitment_leaf_index() && b.has_commitment_inclusion()) {
      problems.push_back(
          "commitment_inclusion: present, but the verdict names a commitment "
          "refused at submission");
    }
    if ((v.outcome() == v1::PASS || v.outcome() == v1::FAIL_MISMATCH) &&
        !b.has_opening()) {
      problems.push_back(absl::StrCat("opening: absent, but a ",
                                      Outcome(v.outcome()),
                                      " verdict was reached from one"));
    }
  }
  if (!b.has_opening() && b.opened_layers_size() > 0) {
    problems.push_back("opened_layers: present without an opening header");
  }
  for (int i = 1; i < b.opened_layers_size(); ++i) {
    if (b.opened_layers(i).layer() <= b.opened_layers(i - 1).layer()) {
      problems.push_back(absl::StrCat("opened_layers[", i, "].layer: got ",
                                      b.opened_layers(i).layer(), ", want > ",
                                      b.opened_layers(i - 1).layer(),
                                      " (strictly ascending)"));
      break;
    }
  }
  if (!problems.empty()) {
    return Fail(absl::StrCat("EvidenceBundle.", absl::StrJoin(problems, "; ")));
  }
  std::string detail = absl::StrCat("format_version ", b.format_version());
  if (b.has_opening()) {
    absl::StrAppend(&detail, "; an opening of ", b.opened_layers_size(),
                    " layer(s)");
  } else {
    absl::StrAppend(&detail, "; no opening");
  }
  return Pass(detail);
}

BundleCheckResult CheckVerdictSignature(const Parts& p,
                                        const BundleTrust& trust) {
  store::KeyRing ring;
  ring.Add(trust.log_key);
  google::protobuf::LogSilencer silence;
  absl::StatusOr<store::VerifiedEnvelope> verified =
      store::VerifyEnvelope(p.bundle.verdict_envelope(), ring,
                            store::kVerdictPayloadType, kMaxEnvelopeBytes);
  if (!verified.ok()) {
    return Fail(absl::StrCat(absl::IsPermissionDenied(verified.status())
                                 ? "signed by a key other than the log key: "
                                 : "does not verify under the log key: ",
                             verified.status().message()));
  }
  absl::StatusOr<v1::Verdict> v = store::ParseVerdict(verified->payload);
  if (!v.ok()) {
    return Fail(absl::StrCat("the signed payload is not a valid verdict: ",
                             v.status().message()));
  }
  return Pass(absl::StrCat(
      "signed by the log key ",
      Hex(DigestBytes(trust.log_key.KeyId())).substr(0, 16), "...; verifier \"",
      v->verifier_id(), "\", ", Outcome(v->outcome())));
}

BundleCheckResult CheckCheckpointSignature(Parts& p, const BundleTrust& trust) {
  if (!p.verdict.has_value()) {
    return NotApplicable(
        "not checked: no parseable verdict names the log's key "
        "(Verdict.verifier_id)");
  }
  const v1::EvidenceBundle& b = p.bundle;
  if (!b.has_verdict_inclusion()) {
    return NotApplicable("not checked: the bundle has no verdict_inclusion");
  }
  const std::string& note = b.verdict_inclusion().checkpoint();
  const std::string& name = p.verdict->verifier_id();
  if (b.has_commitment_inclusion() &&
      b.commitment_inclusion().checkpoint() != note) {
    return Fail(
        "commitment_inclusion.checkpoint differs from "
        "verdict_inclusion.checkpoint (both must be the same signed note)");
  }
  store::CheckpointVerifier verifier(name, trust.log_key);
  absl::StatusOr<store::Checkpoint> c = verifier.Verify(note);
  if (!c.ok()) {
    return Fail(absl::StrCat(
        "verdict_inclusion.checkpoint: ", c.status().message(), " (key name \"",
        name, "\", the verdict's verifier_id, with the log key)"));
  }
  p.checkpoint = *std::move(c);
  return Pass(absl::StrCat(
      "signed note by \"", name, "\" with the log key; tree size ",
      p.checkpoint->size, ", root ", Hex(DigestBytes(p.checkpoint->root))));
}

BundleCheckResult CheckOrigin(const Parts& p, const BundleTrust& trust) {
  if (!p.checkpoint.has_value() || !p.verdict.has_value()) {
    return NotApplicable("not checked: no checkpoint signed by the log key");
  }
  // The verifier names its log "layerproof/<verifier_id>"
  // (verifier/verifier_node.h); the bundle's own log_origin field is never
  // trusted alone.
  const bool pinned = !trust.expected_origin.empty();
  const std::string expected =
      pinned ? trust.expected_origin
             : absl::StrCat("layerproof/", p.verdict->verifier_id());
  const std::string& origin = p.checkpoint->origin;
  std::vector<std::string> problems;
  if (origin != p.bundle.log_origin()) {
    problems.push_back(absl::StrCat("the checkpoint's origin is \"", origin,
                                    "\", the bundle's log_origin \"",
                                    p.bundle.log_origin(), "\""));
  }
  if (origin != expected) {
    problems.push_back(absl::StrCat(
        "the checkpoint's origin is \"", origin, "\", want \"", expected,
        pinned ? "\" (--log-origin)"
               : "\" (\"layerproof/\" + the verdict's verifier_id; "
                 "--log-origin overrides)"));
  }
  if (!problems.empty()) return Fail(absl::StrJoin(problems, "; "));
  return Pass(absl::StrCat("\"", origin, "\"",
                           pinned ? " (as --log-origin requires)"
                                  : " (\"layerproof/\" + the verdict's "
                                    "verifier_id, as the verifier names its "
                                    "log)"));
}

BundleCheckResult CheckCommitmentSignature(const Parts& p,
                                           const BundleTrust& trust) {
  if (UnloggedPromise(p.verdict)) return CheckUnloggedPromise(p, trust);
  store::KeyRing ring;
  for (const store::Ed25519PublicKey& k : trust.prover_keys) ring.Add(k);
  google::protobuf::LogSilencer silence;
  absl::StatusOr<store::VerifiedEnvelope> verified =
      store::VerifyEnvelope(p.bundle.commitment_envelope(), ring,
                            store::kCommitmentPayloadType, kMaxEnvelopeBytes);
  absl::Status status = verified.status();
  std::string signer;
  if (verified.ok()) {
    absl::StatusOr<v1::Commitment> c =
        store::ParseCommitment(verified->payload);
    if (!c.ok()) {
      status = absl::InvalidArgumentError(
          absl::StrCat("the signed payload is not a valid commitment: ",
                       c.status().message()));
    } else {
      signer = absl::StrCat("prover \"", c->prover_id(), "\"");
      for (const store::Sha256Hash& id : verified->key_ids) {
        absl::StrAppend(&signer, ", key ", Hex(DigestBytes(id)).substr(0, 16),
                        "...");
      }
    }
  }
  const bool says_bad_signature =
      p.verdict.has_value() && p.verdict->outcome() == v1::FAIL_SIGNATURE;
  if (says_bad_signature) {
    if (status.ok()) {
      return Fail(absl::StrCat("verifies (", signer,
                               ") under the given prover keys, yet the "
                               "verdict is FAIL_SIGNATURE"));
    }
    // Not evidence against the prover: the right key may not have been
    // given. re_execution never re-derives FAIL_SIGNATURE.
    return Pass(absl::StrCat(
        "does not verify under the given prover keys, which does not "
        "contradict the FAIL_SIGNATURE verdict but is no evidence against "
        "the prover either (its key may not be among them): ",
        status.message()));
  }
  if (!status.ok()) {
    return Fail(absl::StrCat(absl::IsPermissionDenied(status)
                                 ? "not signed by a given prover key: "
                                 : "does not verify: ",
                             status.message()));
  }
  return Pass(absl::StrCat("signed by ", signer));
}

// Verifies `incl` for the leaf with `leaf_hash` against the checkpoint.
BundleCheckResult CheckInclusion(const Parts& p, const v1::LogInclusion& incl,
                                 const std::string& leaf_hash) {
  if (!p.checkpoint.has_value()) {
    return NotApplicable("not checked: no checkpoint signed by the log key");
  }
  if (incl.tree_size() != p.checkpoint->size) {
    return Fail(absl::StrCat("tree_size: got ", incl.tree_size(), ", want ",
                             p.checkpoint->size, " (the checkpoint's)"));
  }
  store::Sha256Hash leaf{};
  std::memcpy(leaf.data(), leaf_hash.data(), leaf.size());
  const absl::Status s = check::CheckLeafHashInclusionIn(
      *p.checkpoint, incl.leaf_index(), incl.inclusion_proof(), leaf,
      "LogInclusion");
  if (!s.ok()) return Fail(std::string(s.message()));
  return Pass(absl::StrCat("leaf ", incl.leaf_index(), " of ", incl.tree_size(),
                           " (leaf hash ", Hex(leaf_hash), ")"));
}

BundleCheckResult CheckCommitmentInclusion(const Parts& p) {
  if (p.verdict.has_value() && RefusedAtSubmission(*p.verdict)) {
    return NotApplicable(
        "the commitment was refused at submission: it is not in the log "
        "(the verdict's commitment_leaf_hash names it)");
  }
  if (UnloggedPromise(p.verdict)) {
    return NotApplicable(
        "FAIL_UNLOGGED: the promised commitment is not in the log");
  }
  if (!p.bundle.has_commitment_inclusion()) {
    return Fail("EvidenceBundle.commitment_inclusion: absent");
  }
  return CheckInclusion(p, p.bundle.commitment_inclusion(),
                        p.commitment_leaf_hash);
}

BundleCheckResult CheckVerdictInclusion(const Parts& p) {
  if (!p.bundle.has_verdict_inclusion()) {
    return Fail("EvidenceBundle.verdict_inclusion: absent");
  }
  return CheckInclusion(
      p, p.bundle.verdict_inclusion(),
      DigestBytes(store::LeafHash(p.bundle.verdict_envelope())));
}

BundleCheckResult CheckBinding(const Parts& p) {
  if (!p.verdict.has_value()) {
    return NotApplicable("not checked: no parseable verdict");
  }
  if (UnloggedPromise(p.verdict)) {
    return NotApplicable(
        "FAIL_UNLOGGED: no commitment to bind; commitment_signature checked "
        "that the promise names the verdict's request and leaf");
  }
  const v1::Verdict& v = *p.verdict;
  const v1::EvidenceBundle& b = p.bundle;
  std::vector<std::string> problems;
  if (!p.commitment_request_id.has_value()) {
    problems.push_back("the commitment envelope does not parse");
  } else if (*p.commitment_request_id != v.request_id()) {
    problems.push_back(absl::StrCat("Verdict.request_id ", Hex(v.request_id()),
                                    ", the commitment's ",
                                    Hex(*p.commitment_request_id)));
  }
  if (v.commitment_leaf_hash() != p.commitment_leaf_hash) {
    problems.push_back(absl::StrCat(
        "Verdict.commitment_leaf_hash ", Hex(v.commitment_leaf_hash()),
        ", the commitment envelope's leaf hash ", Hex(p.commitment_leaf_hash)));
  }
  if (v.has_commitment_leaf_index() && b.has_commitment_inclusion()) {
    if (v.commitment_leaf_index() != b.commitment_inclusion().leaf_index()) {
      problems.push_back(absl::StrCat("Verdict.commitment_leaf_index ",
                                      v.commitment_leaf_index(),
                                      ", commitment_inclusion.leaf_index ",
                                      b.commitment_inclusion().leaf_index()));
    }
    if (b.has_verdict_inclusion() &&
        b.verdict_inclusion().leaf_index() <= v.commitment_leaf_index()) {
      problems.push_back(
          absl::StrCat("the verdict (leaf ", b.verdict_inclusion().leaf_index(),
                       ") is logged before the commitment it audits (leaf ",
                       v.commitment_leaf_index(), ")"));
    }
  }
  if (!problems.empty()) return Fail(absl::StrJoin(problems, "; "));
  return Pass(absl::StrCat(
      "request ", Hex(v.request_id()),
      v.has_commitment_leaf_index()
          ? absl::StrCat(", commitment leaf ", v.commitment_leaf_index())
          : std::string(", refused at submission"),
      ", leaf hash ", Hex(v.commitment_leaf_hash())));
}

BundleCheckResult CheckModelDigest(const Parts& p,
                                   std::string_view model_digest) {
  if (UnloggedPromise(p.verdict)) {
    return NotApplicable("FAIL_UNLOGGED: no commitment names a model");
  }
  if (p.verdict.has_value() && p.verdict->outcome() == v1::FAIL_SIGNATURE) {
    return NotApplicable(
        "the verdict is FAIL_SIGNATURE: the commitment is not authenticated, "
        "so the model it names means nothing");
  }
  if (p.verdict.has_value() && p.verdict->outcome() == v1::FAIL_MODEL) {
    return NotApplicable(absl::StrCat(
        "the verdict is FAIL_MODEL: re_execution re-derives it against the "
        "model given here (digest ",
        Hex(model_digest),
        "), which confirms only that the commitment is not for that model; "
        "it is evidence against the prover only if that is the model the "
        "prover was required to serve"));
  }
  if (!p.commitment.has_value()) {
    return NotApplicable("not checked: no valid commitment");
  }
  if (p.commitment->model_digest() != model_digest) {
    return Fail(absl::StrCat("the commitment names model ",
                             Hex(p.commitment->model_digest()),
                             ", the local model is ", Hex(model_digest)));
  }
  return Pass(Hex(model_digest));
}

BundleCheckResult CheckOpeningBinding(const Parts& p) {
  const v1::EvidenceBundle& b = p.bundle;
  if (!b.has_opening()) {
    if (p.verdict.has_value() && (p.verdict->outcome() == v1::PASS ||
                                  p.verdict->outcome() == v1::FAIL_MISMATCH)) {
      return Fail(absl::StrCat("absent, but the ",
                               Outcome(p.verdict->outcome()),
                               " verdict was reached from one"));
    }
    return NotApplicable(absl::StrCat(
        "the bundle holds no opening (the audit stopped before opening",
        p.verdict.has_value()
            ? absl::StrCat(": ", Outcome(p.verdict->outcome()))
            : std::string(),
        ")"));
  }
  const v1::OpeningHeader& h = b.opening();
  if (h.commitment_envelope() != b.commitment_envelope()) {
    return Fail(
        "OpeningHeader.commitment_envelope differs from the bundle's "
        "commitment_envelope: the opening is of another commitment");
  }
  const bool same_layers =
      h.layers_size() == b.opened_layers_size() &&
      std::equal(
          h.layers().begin(), h.layers().end(), b.opened_layers().begin(),
          [](uint32_t k, const v1::OpenedLayer& o) { return k == o.layer(); });
  if (!same_layers) {
    google::protobuf::RepeatedField<uint32_t> opened;
    for (const v1::OpenedLayer& o : b.opened_layers()) opened.Add(o.layer());
    return Fail(absl::StrCat("opened_layers ", Layers(opened),
                             ", OpeningHeader.layers ", Layers(h.layers())));
  }
  if (h.hidden_size() != 0 && h.positions() > kMaxEvidenceBundleBytes /
                                                  sizeof(float) /
                                                  h.hidden_size()) {
    return Fail(absl::StrCat("OpeningHeader: positions ", h.positions(),
                             " x hidden_size ", h.hidden_size(),
                             " is larger than any bundle"));
  }
  const uint64_t want =
      uint64_t{h.positions()} * uint64_t{h.hidden_size()} * sizeof(float);
  for (const v1::OpenedLayer& o : b.opened_layers()) {
    if (o.data().size() != want) {
      return Fail(absl::StrCat("opened_layers h^", o.layer(), ": ",
                               o.data().size(), " bytes, want ", want,
                               " (positions x hidden_size x 4)"));
    }
  }
  return Pass(absl::StrCat("the header names this commitment's envelope; ",
                           "layers ", Layers(h.layers()), " of ", h.positions(),
                           " positions"));
}

}  // namespace

BundleVerification RunChecks(
    v1::EvidenceBundle bundle, const kernels::model::Engine& engine,
    std::string_view model_digest, const BundleTrust& trust,
    const std::function<void(int done, int total, std::string_view step)>&
        progress) {
  Parts p = Dissect(std::move(bundle));

  BundleVerification out;
  if (p.verdict.has_value()) out.verdict = *p.verdict;
  if (p.commitment.has_value()) out.commitment = *p.commitment;
  if (p.bundle.has_verdict_inclusion()) {
    out.verdict_leaf_index = p.bundle.verdict_inclusion().leaf_index();
  }
  int done = 0;
  auto run = [&](auto&& check) {
    const char* name = kCheckNames[done];
    if (progress) progress(done, kNumChecks, name);
    BundleCheckResult r = check();
    r.check = name;
    r.detail = BoundedDetail(std::move(r.detail));
    out.checks.push_back(std::move(r));
    ++done;
  };
  run([&] { return CheckFormat(p); });
  run([&] { return CheckVerdictSignature(p, trust); });
  run([&] { return CheckCheckpointSignature(p, trust); });
  run([&] { return CheckOrigin(p, trust); });
  run([&] { return CheckCommitmentSignature(p, trust); });
  run([&] { return CheckCommitmentInclusion(p); });
  run([&] { return CheckVerdictInclusion(p); });
  run([&] { return CheckBinding(p); });
  run([&] { return CheckModelDigest(p, model_digest); });
  run([&] { return CheckOpeningBinding(p); });
  run([&] { return CheckReExecution(p, engine, model_digest, trust); });
  if (progress) progress(kNumChecks, kNumChecks, "done");
  out.verdict_rederived = out.checks.back().state == State::kPass;
  return out;
}

}  // namespace internal::bundle_check

std::string_view BundleCheckStateName(BundleCheckResult::State state) {
  using State = BundleCheckResult::State;
  switch (state) {
    case State::kPass:
      return "pass";
    case State::kFail:
      return "fail";
    case State::kNotApplicable:
      return "n/a";
  }
  return "?";
}

bool BundleVerification::ok() const {
  return std::none_of(checks.begin(), checks.end(),
                      [](const BundleCheckResult& c) {
                        return c.state == BundleCheckResult::State::kFail;
                      });
}

absl::StatusOr<v1::EvidenceBundle> ParseEvidenceBundle(
    std::string_view bundle_bytes) {
  absl::StatusOr<v1::EvidenceBundle> result =
      [&]() -> absl::StatusOr<v1::EvidenceBundle> {
    if (bundle_bytes.size() > kMaxEvidenceBundleBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("EvidenceBundle: ", bundle_bytes.size(),
                       " bytes, want <= ", kMaxEvidenceBundleBytes));
    }
    v1::EvidenceBundle bundle;
    google::protobuf::LogSilencer silence;  // the Status names the problem
    if (!bundle.ParseFromArray(bundle_bytes.data(),
                               static_cast<int>(bundle_bytes.size()))) {
      return absl::InvalidArgumentError(
          "EvidenceBundle: malformed (not a serialised "
          "layerproof.v1.EvidenceBundle)");
    }
    if (bundle.format_version() != kEvidenceFormatVersion) {
      return absl::InvalidArgumentError(absl::StrCat(
          "EvidenceBundle.format_version: got ", bundle.format_version(),
          ", want ", kEvidenceFormatVersion));
    }
    return bundle;
  }();
  if (!result.ok())
    return ::layerproof::store::PrintableStatus(result.status());
  return result;
}

absl::StatusOr<BundleVerification> VerifyEvidenceBundle(
    std::string_view bundle_bytes, const kernels::model::Engine& engine,
    std::string_view model_digest, const BundleTrust& trust,
    const std::function<void(int done, int total, std::string_view step)>&
        progress) {
  LP_ASSIGN_OR_RETURN(v1::EvidenceBundle bundle,
                      ParseEvidenceBundle(bundle_bytes));
  return VerifyEvidenceBundle(std::move(bundle), engine, model_digest, trust,
                              progress);
}

absl::StatusOr<BundleVerification> VerifyEvidenceBundle(
    v1::EvidenceBundle bundle, const kernels::model::Engine& engine,
    std::string_view model_digest, const BundleTrust& trust,
    const std::function<void(int done, int total, std::string_view step)>&
        progress) {
  return internal::bundle_check::RunChecks(std::move(bundle), engine,
                                           model_digest, trust, progress);
}

}  // namespace layerproof::check
