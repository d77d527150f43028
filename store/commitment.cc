#include "store/commitment.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "kernels/ref/sampling.h"
#include "kernels/status.h"
#include "store/status.h"

namespace layerproof::store {
namespace {

// Domain tags, each ending in one zero byte (sizeof counts the literal's
// terminating NUL, which is that byte).
constexpr char kTokensTag[] = "layerproof.tokens.v1";
constexpr char kSeedTag[] = "layerproof.seed.v1";
constexpr char kNonceSeedTag[] = "layerproof.nonce-seed.v1";

void UpdateLe(Sha256Hasher& h, uint64_t v, int bytes) {
  uint8_t b[8];
  for (int i = 0; i < bytes; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
  h.Update(Bytes(b, static_cast<size_t>(bytes)));
}

void UpdateSalted(Sha256Hasher& h, std::string_view tag_with_nul, Bytes salt) {
  h.Update(tag_with_nul);
  UpdateLe(h, static_cast<uint32_t>(salt.size()), 4);
  h.Update(salt);
}

absl::Status Invalid(absl::string_view field, absl::string_view got,
                     absl::string_view want) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": got ", got, ", want ", want));
}

absl::Status CheckSize(absl::string_view field, const std::string& value,
                       size_t want) {
  if (value.size() == want) return absl::OkStatus();
  return Invalid(field, absl::StrCat(value.size(), " bytes"),
                 absl::StrCat(want));
}

// 1..kMaxNodeIdChars printable ASCII characters without spaces.
absl::Status CheckNodeId(absl::string_view field, absl::string_view id) {
  if (id.empty() || id.size() > kMaxNodeIdChars) {
    return Invalid(field, absl::StrCat(id.size(), " characters"),
                   absl::StrCat("1..", kMaxNodeIdChars));
  }
  for (size_t i = 0; i < id.size(); ++i) {
    const auto c = static_cast<unsigned char>(id[i]);
    if (c < 0x21 || c > 0x7e) {
      return Invalid(field,
                     absl::StrCat("byte 0x", absl::Hex(c, absl::kZeroPad2),
                                  " at offset ", i),
                     "printable ASCII without spaces (0x21..0x7e)");
    }
  }
  return absl::OkStatus();
}

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      n = 1, cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      n = 2, cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i <= n) return false;
    for (size_t k = 1; k <= n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    // Overlong forms, surrogates and code points past U+10FFFF.
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    i += n + 1;
  }
  return true;
}

absl::Status CheckSampling(const v1::SamplingParams& p) {
  kernels::SamplingParams k;
  k.temperature = p.temperature();
  k.top_k = p.top_k();
  k.top_p = p.top_p();
  return ToAbslStatus(
      kernels::ValidateSamplingParams(k, "Commitment.sampling"));
}

absl::Status ValidateStopRuleFields(const v1::Commitment& c);

}  // namespace

Sha256Hash TokenDigest(Bytes salt, std::span<const int32_t> ids) {
  Sha256Hasher h;
  UpdateSalted(h, std::string_view(kTokensTag, sizeof(kTokensTag)), salt);
  UpdateLe(h, ids.size(), 8);
  for (int32_t id : ids) UpdateLe(h, static_cast<uint32_t>(id), 4);
  return h.Final();
}

Sha256Hash SeedDigest(Bytes salt, uint64_t seed) {
  Sha256Hasher h;
  UpdateSalted(h, std::string_view(kSeedTag, sizeof(kSeedTag)), salt);
  UpdateLe(h, seed, 8);
  return h.Final();
}

std::string DigestKey(Bytes salt, Bytes request_id) {
  std::string key(reinterpret_cast<const char*>(salt.data()), salt.size());
  key.append(reinterpret_cast<const char*>(request_id.data()),
             request_id.size());
  return key;
}

uint64_t SeedFromNonce(Bytes nonce) {
  Sha256Hasher h;
  UpdateSalted(h, std::string_view(kNonceSeedTag, sizeof(kNonceSeedTag)),
               nonce);
  const Sha256Hash d = h.Final();
  uint64_t seed = 0;
  for (int i = 0; i < 8; ++i) seed |= uint64_t{d[i]} << (8 * i);
  return seed;
}

absl::Status ValidateCommitment(const v1::Commitment& c) {
  LP_RETURN_IF_ERROR(
      CheckSize("Commitment.request_id", c.request_id(), kRequestIdBytes));
  LP_RETURN_IF_ERROR(CheckNodeId("Commitment.prover_id", c.prover_id()));
  LP_RETURN_IF_ERROR(
      CheckSize("Commitment.model_digest", c.model_digest(), kDigestBytes));
  if (c.spec_version() < 1) {
    return Invalid("Commitment.spec_version", absl::StrCat(c.spec_version()),
                   ">= 1");
  }
  LP_RETURN_IF_ERROR(
      CheckSize("Commitment.prompt_digest", c.prompt_digest(), kDigestBytes));
  if (c.prompt_tokens() < 1) {
    return Invalid("Commitment.prompt_tokens", absl::StrCat(c.prompt_tokens()),
                   ">= 1");
  }
  LP_RETURN_IF_ERROR(
      CheckSize("Commitment.output_digest", c.output_digest(), kDigestBytes));
  if (c.output_tokens() < 1) {
    return Invalid("Commitment.output_tokens", absl::StrCat(c.output_tokens()),
                   ">= 1");
  }
  const uint64_t tokens =
      uint64_t{c.prompt_tokens()} + uint64_t{c.output_tokens()};
  if (tokens > kMaxCommittedTokens) {
    return Invalid("Commitment.prompt_tokens + output_tokens",
                   absl::StrCat(tokens),
                   absl::StrCat("<= ", kMaxCommittedTokens));
  }
  if (!c.has_sampling()) {
    return Invalid("Commitment.sampling", "nothing", "the sampling parameters");
  }
  LP_RETURN_IF_ERROR(CheckSampling(c.sampling()));
  LP_RETURN_IF_ERROR(
      CheckSize("Commitment.seed_digest", c.seed_digest(), kDigestBytes));
  if (c.num_layers() < 1 || c.num_layers() > kMaxLayers) {
    return Invalid("Commitment.num_layers", absl::StrCat(c.num_layers()),
                   absl::StrCat("1..", kMaxLayers));
  }
  if (c.layer_hashes_size() != static_cast<int>(c.num_layers()) + 1) {
    return Invalid("Commitment.layer_hashes",
                   absl::StrCat(c.layer_hashes_size(), " hashes"),
                   absl::StrCat("num_layers + 1 = ", c.num_layers() + 1));
  }
  for (int i = 0; i < c.layer_hashes_size(); ++i) {
    LP_RETURN_IF_ERROR(
        CheckSize(absl::StrCat("Commitment.layer_hashes[", i, "]"),
                  c.layer_hashes(i), kDigestBytes));
  }
  if (c.hidden_size() < 1 || c.hidden_size() > kMaxHiddenSize) {
    return Invalid("Commitment.hidden_size", absl::StrCat(c.hidden_size()),
                   absl::StrCat("1..", kMaxHiddenSize));
  }
  if (c.client_nonce().size() > kMaxClientNonceBytes) {
    return Invalid("Commitment.client_nonce",
                   absl::StrCat(c.client_nonce().size(), " bytes"),
                   absl::StrCat("<= ", kMaxClientNonceBytes));
  }
  if (c.created_at_unix_nanos() <= 0) {
    return Invalid("Commitment.created_at_unix_nanos",
                   absl::StrCat(c.created_at_unix_nanos()), "> 0");
  }
  if (c.finish_reason() == v1::FINISH_REASON_UNSPECIFIED ||
      !v1::FinishReason_IsValid(c.finish_reason())) {
    return Invalid("Commitment.finish_reason",
                   absl::StrCat(static_cast<int>(c.finish_reason())),
                   "STOP, MAX_TOKENS, CONTEXT_FULL or CANCELLED");
  }
  return ValidateStopRuleFields(c);
}

namespace {

// The committed stop rule's own fields, and the finish reasons that the
// counts alone decide.
absl::Status ValidateStopRuleFields(const v1::Commitment& c) {
  if (c.max_new_tokens() < c.output_tokens()) {
    return Invalid("Commitment.max_new_tokens",
                   absl::StrCat(c.max_new_tokens()),
                   absl::StrCat(">= output_tokens (", c.output_tokens(), ")"));
  }
  if (c.stop_token_ids_size() > kMaxStopTokens) {
    return Invalid("Commitment.stop_token_ids",
                   absl::StrCat(c.stop_token_ids_size(), " ids"),
                   absl::StrCat("<= ", kMaxStopTokens));
  }
  if (!c.stop_ids_from_model() && c.stop_token_ids_size() == 0) {
    return Invalid("Commitment.stop_token_ids", "0 ids",
                   ">= 1 when stop_ids_from_model is false (the request's "
                   "own stop ids)");
  }
  for (int i = 0; i < c.stop_token_ids_size(); ++i) {
    if (c.stop_token_ids(i) < 0) {
      return Invalid(absl::StrCat("Commitment.stop_token_ids[", i, "]"),
                     absl::StrCat(c.stop_token_ids(i)), ">= 0");
    }
  }
  const uint64_t tokens =
      uint64_t{c.prompt_tokens()} + uint64_t{c.output_tokens()};
  if (c.max_context() < tokens) {
    return Invalid(
        "Commitment.max_context", absl::StrCat(c.max_context()),
        absl::StrCat(">= prompt_tokens + output_tokens (", tokens, ")"));
  }
  const bool max_reached = c.output_tokens() == c.max_new_tokens();
  const bool context_full = tokens == c.max_context();
  switch (c.finish_reason()) {
    case v1::FINISH_REASON_MAX_TOKENS:
      if (!max_reached) {
        return Invalid("Commitment.finish_reason", "MAX_TOKENS",
                       "a reason the counts allow (output_tokens < "
                       "max_new_tokens)");
      }
      break;
    case v1::FINISH_REASON_CONTEXT_FULL:
      if (max_reached || !context_full) {
        return Invalid("Commitment.finish_reason", "CONTEXT_FULL",
                       "a reason the counts allow (MAX_TOKENS comes first; "
                       "the context must be full)");
      }
      break;
    case v1::FINISH_REASON_CANCELLED:
      if (max_reached || context_full) {
        return Invalid("Commitment.finish_reason", "CANCELLED",
                       "a reason the counts allow (the output reached a "
                       "limit)");
      }
      break;
    default:
      break;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckStopRule(const v1::Commitment& c,
                           std::span<const int32_t> output, size_t* allowed) {
  const auto is_stop = [&](int32_t id) {
    if (c.ignore_eos()) return false;
    for (int32_t s : c.stop_token_ids()) {
      if (s == id) return true;
    }
    return false;
  };
  const size_t n = output.size();
  for (size_t j = 0; j + 1 < n; ++j) {
    if (is_stop(output[j])) {
      *allowed = j + 1;
      return absl::FailedPreconditionError(absl::StrCat(
          "output token ", j, " is a stop id, but generation went on to ", n,
          " tokens"));
    }
  }
  const bool stop = n > 0 && is_stop(output[n - 1]);
  const bool limit =
      c.output_tokens() == c.max_new_tokens() ||
      uint64_t{c.prompt_tokens()} + c.output_tokens() == c.max_context();
  if (stop != (c.finish_reason() == v1::FINISH_REASON_STOP)) {
    *allowed = stop || limit ? n : n + 1;
    return absl::FailedPreconditionError(
        stop ? absl::StrCat("the last output token is a stop id, but the "
                            "finish reason is ",
                            v1::FinishReason_Name(c.finish_reason()))
             : "the finish reason is STOP, but the last output token is not "
               "a stop id");
  }
  *allowed = n;
  return absl::OkStatus();
}

absl::Status ValidateNodeId(std::string_view field, std::string_view id) {
  return CheckNodeId(absl::string_view(field.data(), field.size()),
                     absl::string_view(id.data(), id.size()));
}

absl::Status ValidateVerdict(const v1::Verdict& v) {
  LP_RETURN_IF_ERROR(
      CheckSize("Verdict.request_id", v.request_id(), kRequestIdBytes));
  if (v.outcome() == v1::VERDICT_UNSPECIFIED ||
      !v1::VerdictOutcome_IsValid(v.outcome())) {
    return Invalid("Verdict.outcome",
                   absl::StrCat(static_cast<int>(v.outcome())),
                   "PASS, a FAIL_* outcome or INCONCLUSIVE");
  }
  const bool unlogged = v.outcome() == v1::FAIL_UNLOGGED;
  if (!v.has_commitment_leaf_index() && v.outcome() != v1::FAIL_SIGNATURE &&
      !unlogged) {
    return Invalid("Verdict.commitment_leaf_index", "absent",
                   "present unless the outcome is FAIL_SIGNATURE or "
                   "FAIL_UNLOGGED");
  }
  if (unlogged && v.has_commitment_leaf_index()) {
    return Invalid("Verdict.commitment_leaf_index", "present",
                   "absent for FAIL_UNLOGGED (the log holds no such leaf)");
  }
  if (unlogged == v.unlogged_promise().empty()) {
    return Invalid("Verdict.unlogged_promise", unlogged ? "absent" : "present",
                   unlogged ? "the presented promise for FAIL_UNLOGGED"
                            : "empty unless the outcome is FAIL_UNLOGGED");
  }
  if (v.unlogged_promise().size() > kMaxPromiseEnvelopeBytes) {
    return Invalid("Verdict.unlogged_promise",
                   absl::StrCat(v.unlogged_promise().size(), " bytes"),
                   absl::StrCat("<= ", kMaxPromiseEnvelopeBytes));
  }
  LP_RETURN_IF_ERROR(CheckSize("Verdict.commitment_leaf_hash",
                               v.commitment_leaf_hash(), kDigestBytes));
  const bool mismatch = v.outcome() == v1::FAIL_MISMATCH;
  if (mismatch != v.has_mismatch()) {
    return Invalid("Verdict.mismatch", v.has_mismatch() ? "present" : "absent",
                   mismatch
                       ? "present for FAIL_MISMATCH"
                       : absl::StrCat("absent for ",
                                      v1::VerdictOutcome_Name(v.outcome())));
  }
  if (mismatch) {
    const v1::Mismatch& m = v.mismatch();
    if (m.layer() > kMaxLayers + 1) {
      return Invalid("Verdict.mismatch.layer", absl::StrCat(m.layer()),
                     absl::StrCat("0..", kMaxLayers + 1));
    }
    LP_RETURN_IF_ERROR(
        CheckSize("Verdict.mismatch.expected", m.expected(), kDigestBytes));
    LP_RETURN_IF_ERROR(
        CheckSize("Verdict.mismatch.got", m.got(), kDigestBytes));
    if (m.expected() == m.got()) {
      return Invalid("Verdict.mismatch.got", "the expected digest",
                     "a different digest");
    }
  }
  for (int i = 0; i < v.audited_layers_size(); ++i) {
    const uint32_t l = v.audited_layers(i);
    const uint32_t lo = i == 0 ? 1 : v.audited_layers(i - 1) + 1;
    if (l < lo || l > kMaxLayers) {
      return Invalid(
          absl::StrCat("Verdict.audited_layers[", i, "]"), absl::StrCat(l),
          absl::StrCat(lo, "..", kMaxLayers, " (strictly ascending)"));
    }
  }
  if (v.outcome() == v1::PASS && !v.head_checked()) {
    return Invalid("Verdict.head_checked", "false", "true for PASS");
  }
  LP_RETURN_IF_ERROR(
      CheckSize("Verdict.audit_seed", v.audit_seed(), kDigestBytes));
  LP_RETURN_IF_ERROR(CheckNodeId("Verdict.verifier_id", v.verifier_id()));
  if (v.created_at_unix_nanos() <= 0) {
    return Invalid("Verdict.created_at_unix_nanos",
                   absl::StrCat(v.created_at_unix_nanos()), "> 0");
  }
  if (v.detail().size() > kMaxVerdictDetailBytes) {
    return Invalid("Verdict.detail", absl::StrCat(v.detail().size(), " bytes"),
                   absl::StrCat("<= ", kMaxVerdictDetailBytes));
  }
  if (!IsValidUtf8(v.detail())) {
    return Invalid("Verdict.detail", "invalid UTF-8", "UTF-8 text");
  }
  if (!v.refused_submitter().empty()) {
    if (v.outcome() != v1::FAIL_SIGNATURE || v.has_commitment_leaf_index()) {
      return Invalid("Verdict.refused_submitter", "present",
                     "empty unless the log refused the envelope "
                     "(FAIL_SIGNATURE without a leaf index)");
    }
    LP_RETURN_IF_ERROR(
        CheckNodeId("Verdict.refused_submitter", v.refused_submitter()));
  }
  return absl::OkStatus();
}

absl::Status ValidateSubmissionPromise(const v1::SubmissionPromise& p) {
  LP_RETURN_IF_ERROR(CheckSize("SubmissionPromise.request_id", p.request_id(),
                               kRequestIdBytes));
  LP_RETURN_IF_ERROR(CheckSize("SubmissionPromise.commitment_leaf_hash",
                               p.commitment_leaf_hash(), kDigestBytes));
  LP_RETURN_IF_ERROR(CheckNodeId("SubmissionPromise.prover_id", p.prover_id()));
  if (p.log_origin().empty() || p.log_origin().size() > 1024) {
    return Invalid("SubmissionPromise.log_origin",
                   absl::StrCat(p.log_origin().size(), " bytes"), "1..1024");
  }
  if (p.promised_at_unix_nanos() <= 0) {
    return Invalid("SubmissionPromise.promised_at_unix_nanos",
                   absl::StrCat(p.promised_at_unix_nanos()), "> 0");
  }
  if (p.log_by_unix_nanos() <= p.promised_at_unix_nanos()) {
    return Invalid("SubmissionPromise.log_by_unix_nanos",
                   absl::StrCat(p.log_by_unix_nanos()),
                   absl::StrCat("> promised_at_unix_nanos (",
                                p.promised_at_unix_nanos(), ")"));
  }
  return absl::OkStatus();
}

int64_t PromiseDueUnixNanos(const v1::SubmissionPromise& p) {
  const int64_t cap =
      p.promised_at_unix_nanos() > INT64_MAX - kMaxPromiseWindowNanos
          ? INT64_MAX
          : p.promised_at_unix_nanos() + kMaxPromiseWindowNanos;
  return std::min(p.log_by_unix_nanos(), cap);
}

}  // namespace layerproof::store
