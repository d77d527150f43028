#include "check/re_executor.h"

#include <algorithm>
#include <set>
#include <span>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "kernels/golden.h"
#include "kernels/model/layer_hash.h"
#include "store/commitment.h"
#include "store/crypto.h"
#include "store/merkle.h"
#include "store/status.h"
#include "check/bytes.h"
#include "check/internal/opening_checks.h"

namespace layerproof::check {
namespace {

using check::DigestBytes;

// A logged envelope is far smaller (a commitment with 1025 layer hashes is
// ~40 KiB); the log enforced its own limit when it accepted it.
constexpr size_t kMaxAuditedEnvelopeBytes = 16 << 20;
constexpr size_t kAuditSeedBytes = 32;
// The markers a stop-rule mismatch appends to the output (never token ids,
// which are >= 0): generation had to go on; the finish reason differs.
constexpr int32_t kHadToGoOn = -1;
constexpr int32_t kOtherFinishReason = -2;
// ... or the committed stop ids are not the model's, though the request
// named none (Commitment.stop_ids_from_model).
constexpr int32_t kOtherStopIds = -3;
// Marks OpeningUnavailableToVerifier errors (an absl payload, which no
// status received over gRPC carries).
constexpr char kVerifierSidePayload[] =
    "type.googleapis.com/layerproof.verifier.OpeningUnavailableToVerifier";

absl::Status ValidatePlan(const AuditPlan& plan, uint32_t num_layers) {
  if (plan.audit_seed.size() != kAuditSeedBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("AuditPlan.audit_seed: got ", plan.audit_seed.size(),
                     " bytes, want ", kAuditSeedBytes));
  }
  if (plan.all_layers) return absl::OkStatus();
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    const uint32_t lo = i == 0 ? 1 : plan.layers[i - 1] + 1;
    if (plan.layers[i] < lo || plan.layers[i] > num_layers) {
      return absl::InvalidArgumentError(absl::StrCat(
          "AuditPlan.layers[", i, "]: got ", plan.layers[i], ", want ", lo,
          "..", num_layers, " (strictly ascending)"));
    }
  }
  return absl::OkStatus();
}

// The request id of an envelope whose signature did not verify, read
// without trusting it, so the FAIL_SIGNATURE verdict can name the request;
// empty when the bytes do not parse.
std::string UnverifiedRequestId(std::string_view envelope) {
  v1::Envelope e;
  v1::Commitment c;
  if (!e.ParseFromArray(envelope.data(), static_cast<int>(envelope.size())) ||
      !c.ParseFromString(e.payload())) {
    return "";
  }
  return c.request_id();
}

// The k values to open for `plan` (protocol: h^(l-1) for every drawn block
// l > 1, whose input it is, and h^L for the head); none with all_layers.
std::vector<uint32_t> OpenedLayers(const AuditPlan& plan, uint32_t num_layers) {
  if (plan.all_layers) return {};
  std::set<uint32_t> k;
  for (uint32_t l : plan.layers) {
    if (l > 1) k.insert(l - 1);
  }
  k.insert(num_layers);
  return {k.begin(), k.end()};
}

// Feeds every tapped layer into a salted LayerHasher and keeps h^L rows.
class HashingTap : public kernels::model::LayerTap {
 public:
  HashingTap(int64_t num_layers, int64_t width, std::span<const uint8_t> key)
      : num_layers_(num_layers) {
    for (int64_t l = 0; l <= num_layers; ++l)
      hashers_.emplace_back(l, width, key);
  }
  void OnLayerRows(kernels::model::SequenceId, int64_t layer, int64_t,
                   const float* rows, int64_t n, int64_t width) override {
    hashers_[static_cast<size_t>(layer)].AddRows(rows, n);
    if (layer == num_layers_) last_.insert(last_.end(), rows, rows + n * width);
  }
  kernels::Sha256Digest Finish(int64_t layer) {
    return hashers_[static_cast<size_t>(layer)].Finish();
  }
  std::vector<float>& last() { return last_; }

 private:
  int64_t num_layers_;
  std::vector<kernels::model::LayerHasher> hashers_;
  std::vector<float> last_;
};

// What one audit knows once its opening checked out.
struct Replay {
  const v1::Commitment& c;
  const Opening& opening;
  std::string key;              // DigestKey(salt, request_id)
  std::vector<int32_t> tokens;  // prompt ++ output[0..n-2]: the positions
};

void Decide(v1::Verdict& v, v1::VerdictOutcome outcome, std::string_view why) {
  v.set_outcome(outcome);
  v.set_detail(VerdictDetail(why));
}

void DecideMismatch(v1::Verdict& v, uint32_t layer, const std::string& expected,
                    const std::string& got, std::string_view why) {
  Decide(v, v1::FAIL_MISMATCH, why);
  v.mutable_mismatch()->set_layer(layer);
  v.mutable_mismatch()->set_expected(expected);
  v.mutable_mismatch()->set_got(got);
}

// The committed stop rule (re_executor.h): true when the output stops
// where the rule says; otherwise records FAIL_MISMATCH{head_layer} with
// `got` the digest of what the output had to be. When the request named no
// stop ids the rule is the model's (`model_eos`), whatever was committed.
bool CheckStop(const Replay& r, const std::vector<int32_t>& model_eos,
               uint32_t head_layer, v1::Verdict& v) {
  const v1::OpeningHeader& h = r.opening.header;
  const std::span<const int32_t> output(h.output_token_ids().data(),
                                        h.output_token_ids_size());
  v1::Commitment rule_of_model;
  const v1::Commitment* ruled = &r.c;
  const bool own_ids_differ =
      r.c.stop_ids_from_model() &&
      !std::equal(r.c.stop_token_ids().begin(), r.c.stop_token_ids().end(),
                  model_eos.begin(), model_eos.end());
  if (own_ids_differ) {
    rule_of_model = r.c;
    rule_of_model.mutable_stop_token_ids()->Assign(model_eos.begin(),
                                                   model_eos.end());
    ruled = &rule_of_model;
  }
  size_t allowed = output.size();
  absl::Status rule = store::CheckStopRule(*ruled, output, &allowed);
  if (rule.ok() && !own_ids_differ) return true;
  if (rule.ok()) {
    std::vector<int32_t> had_to_be(output.begin(), output.end());
    had_to_be.push_back(kOtherStopIds);
    DecideMismatch(
        v, head_layer, r.c.output_digest(),
        DigestBytes(store::TokenDigest(store::AsBytes(r.key), had_to_be)),
        absl::StrCat("head: stop rule: Commitment.stop_token_ids: ",
                     r.c.stop_token_ids_size(),
                     " ids that are not the model's end-of-sequence ids, "
                     "though stop_ids_from_model"));
    return false;
  }
  std::vector<int32_t> had_to_be;
  std::string what;
  if (allowed < output.size()) {
    had_to_be.assign(output.begin(), output.begin() + allowed);
    what = absl::StrCat("generation had to stop after ", allowed, " of ",
                        output.size(), " tokens");
  } else if (allowed > output.size()) {
    had_to_be.assign(output.begin(), output.end());
    had_to_be.push_back(kHadToGoOn);
    what = absl::StrCat("generation had to go on after ", output.size(),
                        " tokens");
  } else {
    had_to_be.assign(output.begin(), output.end());
    had_to_be.push_back(kOtherFinishReason);
    what = "the tokens stop where they must, with another finish reason";
  }
  DecideMismatch(
      v, head_layer, r.c.output_digest(),
      DigestBytes(store::TokenDigest(store::AsBytes(r.key), had_to_be)),
      absl::StrCat("head: stop rule: ", std::string(rule.message()), " (", what,
                   ")"));
  return false;
}

// Recomputes the output tokens from h^L (`h_last`, all positions) and
// compares them with the opening's; true when they all match. On a
// difference, records FAIL_MISMATCH{L+1} in `v`.
absl::StatusOr<bool> CheckHead(const kernels::model::Engine& engine,
                               const Replay& r,
                               const std::vector<float>& h_last,
                               v1::Verdict& v) {
  const kernels::model::ModelConfig& cfg = engine.model().config();
  const int64_t width = cfg.hidden_size;
  const int64_t vocab = cfg.vocab_size;
  const int64_t prompt = r.opening.header.prompt_token_ids_size();
  const int64_t n = r.opening.header.output_token_ids_size();
  // Rows P-1 .. P+n-2 of h^L predict output[0..n-1].
  std::vector<float> logits(static_cast<size_t>(n * vocab));
  LP_RETURN_IF_ERROR(store::ToAbslStatus(
      engine.RunHead(h_last.data() + (prompt - 1) * width, n, logits.data())));
  kernels::SamplingParams params;
  params.temperature = r.c.sampling().temperature();
  params.top_k = r.c.sampling().top_k();
  params.top_p = r.c.sampling().top_p();
  params.seed = r.opening.header.seed();
  std::vector<int32_t> recomputed(static_cast<size_t>(n));
  bool same = true;
  for (int64_t j = 0; j < n; ++j) {
    kernels::StatusOr<int32_t> t =
        engine.Sample(logits.data() + j * vocab, params, prompt + j);
    LP_RETURN_IF_ERROR(store::ToAbslStatus(t.status()));
    recomputed[static_cast<size_t>(j)] = *t;
    if (*t != r.opening.header.output_token_ids(static_cast<int>(j))) {
      same = false;
    }
  }
  v.set_head_checked(true);
  if (!same) {
    int64_t first = 0;
    while (recomputed[static_cast<size_t>(first)] ==
           r.opening.header.output_token_ids(static_cast<int>(first))) {
      ++first;
    }
    DecideMismatch(
        v, static_cast<uint32_t>(cfg.num_layers) + 1, r.c.output_digest(),
        DigestBytes(store::TokenDigest(store::AsBytes(r.key), recomputed)),
        absl::StrCat("head: the sampler did not reproduce output token ", first,
                     " of ", n));
    return false;
  }
  return CheckStop(r, cfg.eos_token_ids, static_cast<uint32_t>(cfg.num_layers) + 1,
                   v);
}

// Step 5 and 6 for a sampled plan: h^0 when block 1 is drawn, each drawn
// block from its opened (or recomputed) input, then the head.
absl::Status ReExecuteDrawn(const kernels::model::Engine& engine,
                            const Replay& r, const std::vector<uint32_t>& drawn,
                            v1::Verdict& v) {
  const int64_t width = engine.model().config().hidden_size;
  const int64_t positions = static_cast<int64_t>(r.tokens.size());
  const auto key = store::AsBytes(r.key);
  std::vector<float> h0;
  std::vector<float> out(static_cast<size_t>(positions * width));
  for (uint32_t l : drawn) {
    const float* input = nullptr;
    if (l == 1) {
      h0.resize(static_cast<size_t>(positions * width));
      LP_RETURN_IF_ERROR(store::ToAbslStatus(
          engine.Embed(r.tokens.data(), positions, h0.data())));
      const std::string got = DigestBytes(
          kernels::model::HashLayerRows(0, h0.data(), positions, width, key));
      if (got != r.c.layer_hashes(0)) {
        DecideMismatch(v, 0, r.c.layer_hashes(0), got,
                       "embedding: recomputed h^0 does not hash to H_0");
        return absl::OkStatus();
      }
      input = h0.data();
    } else {
      input = r.opening.layers.at(l - 1).data();
    }
    LP_RETURN_IF_ERROR(
        store::ToAbslStatus(engine.RunBlock(l, input, positions, out.data())));
    const std::string got = DigestBytes(
        kernels::model::HashLayerRows(l, out.data(), positions, width, key));
    if (got != r.c.layer_hashes(static_cast<int>(l))) {
      DecideMismatch(v, l, r.c.layer_hashes(static_cast<int>(l)), got,
                     absl::StrCat("block ", l, ": recomputed h^", l, " from h^",
                                  l - 1, " does not hash to H_", l));
      return absl::OkStatus();
    }
  }
  const uint32_t num_layers =
      static_cast<uint32_t>(engine.model().config().num_layers);
  LP_ASSIGN_OR_RETURN(bool head_ok,
                      CheckHead(engine, r, r.opening.layers.at(num_layers), v));
  if (head_ok) Decide(v, v1::PASS, "");
  return absl::OkStatus();
}

// All layers (fault localisation): h^0..h^L recomputed from the tokens, the
// first differing hash reported, then the head.
absl::Status ReExecuteAll(const kernels::model::Engine& engine, const Replay& r,
                          v1::Verdict& v) {
  const kernels::model::ModelConfig& cfg = engine.model().config();
  HashingTap tap(cfg.num_layers, cfg.hidden_size, store::AsBytes(r.key));
  LP_RETURN_IF_ERROR(store::ToAbslStatus(
      engine.Forward(r.tokens, &tap, /*seq=*/0, /*logits=*/nullptr)));
  for (int64_t l = 0; l <= cfg.num_layers; ++l) {
    const std::string got = DigestBytes(tap.Finish(l));
    if (got != r.c.layer_hashes(static_cast<int>(l))) {
      DecideMismatch(v, static_cast<uint32_t>(l),
                     r.c.layer_hashes(static_cast<int>(l)), got,
                     absl::StrCat("all layers: h^", l,
                                  " recomputed from the tokens does not hash "
                                  "to H_",
                                  l, "; every earlier layer matched"));
      return absl::OkStatus();
    }
  }
  LP_ASSIGN_OR_RETURN(bool head_ok, CheckHead(engine, r, tap.last(), v));
  if (head_ok) Decide(v, v1::PASS, "");
  return absl::OkStatus();
}

}  // namespace

absl::Status OpeningUnavailableToVerifier(std::string_view message) {
  absl::Status s = absl::FailedPreconditionError(
      absl::string_view(message.data(), message.size()));
  s.SetPayload(kVerifierSidePayload, absl::Cord("verifier"));
  return s;
}

bool IsOpeningUnavailableToVerifier(const absl::Status& status) {
  return !status.ok() && status.GetPayload(kVerifierSidePayload).has_value();
}

ReExecutor::ReExecutor(const kernels::model::Engine& engine,
                       std::string model_digest)
    : engine_(engine), model_digest_(std::move(model_digest)) {}

absl::StatusOr<AuditOutcome> ReExecutor::Audit(
    std::string_view envelope, uint64_t leaf_index, const AuditPlan& plan,
    const store::KeyRing& keys, OpeningSource& source,
    absl::Duration opening_timeout) const {
  const kernels::model::ModelConfig& cfg = engine_.model().config();
  const uint32_t num_layers = static_cast<uint32_t>(cfg.num_layers);
  LP_RETURN_IF_ERROR(ValidatePlan(plan, num_layers));

  AuditOutcome out;
  v1::Verdict& v = out.verdict;
  v.set_commitment_leaf_index(leaf_index);
  v.set_commitment_leaf_hash(DigestBytes(store::LeafHash(envelope)));
  v.set_audit_seed(plan.audit_seed);

  // 1. The signature, by a registered prover, over a valid commitment.
  absl::StatusOr<store::VerifiedEnvelope> verified = store::VerifyEnvelope(
      envelope, keys, store::kCommitmentPayloadType, kMaxAuditedEnvelopeBytes);
  if (!verified.ok()) {
    v.set_request_id(UnverifiedRequestId(envelope));
    Decide(
        v, v1::FAIL_SIGNATURE,
        absl::StrCat("envelope: ", std::string(verified.status().message())));
    return out;
  }
  absl::StatusOr<v1::Commitment> parsed =
      store::ParseCommitment(verified->payload);
  if (!parsed.ok()) {
    v.set_request_id(UnverifiedRequestId(envelope));
    Decide(v, v1::FAIL_SIGNATURE,
           absl::StrCat("signed payload is not a valid commitment: ",
                        std::string(parsed.status().message())));
    return out;
  }
  const v1::Commitment& c = *parsed;
  v.set_request_id(c.request_id());

  // 2. The model this verifier runs.
  const uint64_t positions =
      uint64_t{c.prompt_tokens()} + c.output_tokens() - 1;
  std::string model_problem;
  if (c.model_digest() != model_digest_) {
    model_problem =
        "Commitment.model_digest: differs from this verifier's model";
  } else if (c.spec_version() != static_cast<uint32_t>(kernels::kSpecVersion)) {
    model_problem =
        absl::StrCat("Commitment.spec_version: got ", c.spec_version(),
                     ", want ", kernels::kSpecVersion);
  } else if (c.num_layers() != num_layers) {
    model_problem = absl::StrCat("Commitment.num_layers: got ", c.num_layers(),
                                 ", want ", num_layers);
  } else if (c.hidden_size() != static_cast<uint64_t>(cfg.hidden_size)) {
    model_problem = absl::StrCat("Commitment.hidden_size: got ",
                                 c.hidden_size(), ", want ", cfg.hidden_size);
  } else if (c.max_context() > static_cast<uint64_t>(cfg.max_positions)) {
    model_problem = absl::StrCat(
        "Commitment.max_context: got ", c.max_context(),
        ", want <= ", cfg.max_positions, " (the model's max_positions)");
  } else if (positions > static_cast<uint64_t>(cfg.max_positions)) {
    model_problem = absl::StrCat("Commitment: ", positions,
                                 " positions, want <= ", cfg.max_positions,
                                 " (the model's max_positions)");
  }
  if (!model_problem.empty()) {
    Decide(v, v1::FAIL_MODEL, model_problem);
    return out;
  }
  if (positions > static_cast<uint64_t>(engine_.max_context())) {
    return absl::FailedPreconditionError(
        absl::StrCat("the commitment has ", positions,
                     " positions but this verifier's engine max_context is ",
                     engine_.max_context(), "; raise it to audit"));
  }

  // 3. The opening, by its deadline.
  const std::vector<uint32_t> opened = OpenedLayers(plan, num_layers);
  const absl::Time deadline = absl::Now() + opening_timeout;
  absl::StatusOr<Opening> opening =
      source.Open(c.prover_id(), c.request_id(), opened, positions,
                  c.hidden_size(), deadline);
  if (IsOpeningUnavailableToVerifier(opening.status()) ||
      absl::IsUnavailable(opening.status())) {
    // Not the prover's fault: no verdict, the audit stays pending.
    const std::string why =
        absl::StrCat("opening from prover \"", c.prover_id(),
                     "\": ", std::string(opening.status().message()));
    return IsOpeningUnavailableToVerifier(opening.status())
               ? OpeningUnavailableToVerifier(why)
               : absl::UnavailableError(why);
  }
  if (absl::IsDeadlineExceeded(opening.status()) ||
      (opening.ok() && absl::Now() > deadline)) {
    Decide(v, v1::FAIL_TIMEOUT,
           absl::StrCat("opening: not complete within ",
                        absl::FormatDuration(opening_timeout)));
    return out;
  }
  if (!opening.ok()) {
    // The source's message is in the verifier's words (OpeningSource::Open).
    Decide(v, v1::FAIL_OPENING, std::string(opening.status().message()));
    return out;
  }
  out.opening = std::move(*opening);
  const Opening& o = *out.opening;

  // 4. The opening is the commitment's.
  if (absl::Status s =
          internal::CheckOpening(o, c, envelope, opened, cfg.vocab_size);
      !s.ok()) {
    Decide(v, v1::FAIL_OPENING,
           absl::StrCat("opening: ", std::string(s.message())));
    return out;
  }

  // 5, 6. Re-execution.
  Replay r{c,
           o,
           store::DigestKey(store::AsBytes(o.header.salt()),
                            store::AsBytes(c.request_id())),
           {}};
  r.tokens.assign(o.header.prompt_token_ids().begin(),
                  o.header.prompt_token_ids().end());
  r.tokens.insert(r.tokens.end(), o.header.output_token_ids().begin(),
                  o.header.output_token_ids().end() - 1);
  if (plan.all_layers) {
    for (uint32_t l = 1; l <= num_layers; ++l) v.add_audited_layers(l);
    LP_RETURN_IF_ERROR(ReExecuteAll(engine_, r, v));
  } else {
    for (uint32_t l : plan.layers) v.add_audited_layers(l);
    LP_RETURN_IF_ERROR(ReExecuteDrawn(engine_, r, plan.layers, v));
  }
  return out;
}

std::string VerdictDetail(std::string_view text) {
  std::string out(text.substr(0, store::kMaxVerdictDetailBytes));
  for (char& ch : out) {
    if (ch < 0x20 || ch > 0x7e) ch = '?';
  }
  return out;
}

}  // namespace layerproof::check
