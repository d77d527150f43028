#include "check/internal/opening_checks.h"

#include <array>
#include <span>

#include "absl/strings/str_cat.h"
#include "check/opening_header.h"
#include "kernels/model/layer_hash.h"
#include "store/commitment.h"
#include "store/crypto.h"

namespace layerproof::check::internal {
namespace {

absl::Status Bad(std::string_view field, std::string_view got,
                 std::string_view want) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(field), ": got ",
                                                 std::string(got), ", want ",
                                                 std::string(want)));
}

absl::Status CheckIds(const google::protobuf::RepeatedField<int32_t>& ids,
                      const char* field, int64_t vocab_size) {
  for (int i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocab_size) {
      return Bad(
          absl::StrCat(field, "[", i, "]"), absl::StrCat("token id ", ids[i]),
          absl::StrCat("0..", vocab_size - 1, " (the model's vocabulary)"));
    }
  }
  return absl::OkStatus();
}

bool SameDigest(const std::string& committed, const store::Sha256Hash& d) {
  return store::ConstantTimeEqual(store::AsBytes(committed),
                                  store::Bytes(d.data(), d.size()));
}

}  // namespace

absl::Status CheckOpening(const Opening& opening,
                          const v1::Commitment& commitment,
                          std::string_view envelope,
                          const std::vector<uint32_t>& layers,
                          int64_t vocab_size) {
  const v1::OpeningHeader& h = opening.header;
  if (h.commitment_envelope() != envelope) {
    return Bad("OpeningHeader.commitment_envelope",
               absl::StrCat(h.commitment_envelope().size(),
                            " bytes that differ from the audited envelope"),
               "the audited commitment's envelope exactly");
  }
  if (h.salt().size() != store::kSaltBytes) {
    return Bad("OpeningHeader.salt", absl::StrCat(h.salt().size(), " bytes"),
               absl::StrCat(store::kSaltBytes));
  }
  const uint64_t prompt = commitment.prompt_tokens();
  const uint64_t output = commitment.output_tokens();
  if (static_cast<uint64_t>(h.prompt_token_ids_size()) != prompt) {
    return Bad("OpeningHeader.prompt_token_ids",
               absl::StrCat(h.prompt_token_ids_size(), " tokens"),
               absl::StrCat(prompt, " (Commitment.prompt_tokens)"));
  }
  if (static_cast<uint64_t>(h.output_token_ids_size()) != output) {
    return Bad("OpeningHeader.output_token_ids",
               absl::StrCat(h.output_token_ids_size(), " tokens"),
               absl::StrCat(output, " (Commitment.output_tokens)"));
  }
  const uint64_t positions = prompt + output - 1;
  LP_RETURN_IF_ERROR(check::CheckOpeningHeaderShape(
      h, layers, positions, commitment.hidden_size()));
  LP_RETURN_IF_ERROR(CheckIds(h.prompt_token_ids(),
                              "OpeningHeader.prompt_token_ids", vocab_size));
  LP_RETURN_IF_ERROR(CheckIds(h.output_token_ids(),
                              "OpeningHeader.output_token_ids", vocab_size));

  const std::string key = store::DigestKey(
      store::AsBytes(h.salt()), store::AsBytes(commitment.request_id()));
  const store::Bytes k = store::AsBytes(key);
  const std::span<const int32_t> prompt_ids(h.prompt_token_ids().data(),
                                            h.prompt_token_ids_size());
  const std::span<const int32_t> output_ids(h.output_token_ids().data(),
                                            h.output_token_ids_size());
  if (!SameDigest(commitment.prompt_digest(),
                  store::TokenDigest(k, prompt_ids))) {
    return Bad("OpeningHeader.prompt_token_ids",
               "tokens whose salted digest differs",
               "Commitment.prompt_digest (wrong tokens, salt or request id)");
  }
  if (!SameDigest(commitment.output_digest(),
                  store::TokenDigest(k, output_ids))) {
    return Bad("OpeningHeader.output_token_ids",
               "tokens whose salted digest differs",
               "Commitment.output_digest (wrong tokens, salt or request id)");
  }
  if (!SameDigest(commitment.seed_digest(), store::SeedDigest(k, h.seed()))) {
    return Bad("OpeningHeader.seed", "a seed whose salted digest differs",
               "Commitment.seed_digest");
  }
  if (!commitment.client_nonce().empty() &&
      h.seed() !=
          store::SeedFromNonce(store::AsBytes(commitment.client_nonce()))) {
    return Bad("OpeningHeader.seed", "a seed not derived from the nonce",
               "SeedFromNonce(Commitment.client_nonce)");
  }

  const uint64_t width = commitment.hidden_size();
  if (opening.layers.size() != layers.size()) {
    return Bad("Opening.layers", absl::StrCat(opening.layers.size(), " layers"),
               absl::StrCat(layers.size(), " (as requested)"));
  }
  for (uint32_t layer : layers) {
    auto it = opening.layers.find(layer);
    if (it == opening.layers.end()) {
      return Bad(absl::StrCat("Opening h^", layer), "nothing",
                 absl::StrCat(positions, " rows"));
    }
    if (it->second.size() != positions * width) {
      return Bad(absl::StrCat("Opening h^", layer),
                 absl::StrCat(it->second.size(), " floats"),
                 absl::StrCat(positions * width, " (positions x hidden_size)"));
    }
    if (layer >= static_cast<uint32_t>(commitment.layer_hashes_size())) {
      return Bad("OpeningHeader.layers", absl::StrCat(layer),
                 absl::StrCat("0..", commitment.num_layers()));
    }
    const kernels::Sha256Digest got = kernels::model::HashLayerRows(
        layer, it->second.data(), static_cast<int64_t>(positions),
        static_cast<int64_t>(width), k);
    if (!SameDigest(commitment.layer_hashes(static_cast<int>(layer)), got)) {
      return Bad(absl::StrCat("Opening h^", layer),
                 "rows whose salted hash differs",
                 absl::StrCat("Commitment.layer_hashes[", layer, "]"));
    }
  }
  return absl::OkStatus();
}

}  // namespace layerproof::check::internal
