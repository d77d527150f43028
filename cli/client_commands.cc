// `layerproof generate --prover ADDR` (a remote, checked Generate) and
// `layerproof verify-receipt FILE` (the same receipt check on a saved
// response). Both check with check/receipt.h; the remote call and the
// following of a promise are cli/prover_client.h's.
#include <google/protobuf/util/json_util.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "check/receipt.h"
#include "cli/file_io.h"
#include "cli/flags.h"
#include "cli/openai_receipt.h"
#include "cli/print_error.h"
#include "cli/prover_client.h"
#include "cli/store_commands.h"
#include "nlohmann/json.hpp"
#include "rpc/server.h"
#include "rpc/tls.h"
#include "store/crypto.h"

namespace layerproof::cli {
namespace {

constexpr char kRemoteGenerateUsage[] =
    "usage: layerproof generate --prover ADDR --prover-key FILE --log-key "
    "FILE\n"
    "         (--prompt TEXT | --tokens 1,2,3) [--max-tokens N]\n"
    "         [--temperature T] [--top-k K] [--top-p P] [--seed S]\n"
    "         [--stop-ids 1,2] [--ignore-eos] [--no-nonce]\n"
    "         [--prover-id ID] [--verifier-id ID] [--log-origin ORIGIN]\n"
    "         [--model-digest HEX] [--follow-seconds N] [--save FILE] "
    "[--json]\n"
    "         (--tls-ca FILE [--tls-name NAME] [--client-cert FILE\n"
    "          --client-key FILE] | --insecure)\n"
    "  Asks the prover at ADDR to generate, with a fresh random client nonce\n"
    "  (unless --seed or --no-nonce), and checks the response with the\n"
    "  receipt check (docs/protocol.md \"The client's check\"): the\n"
    "  commitment signed by --prover-key, bound to this request, and\n"
    "  included in the log whose checkpoints --log-key signs (key name\n"
    "  --verifier-id, default verifier-1; origin layerproof/ID). A promise\n"
    "  is followed until its inclusion arrives (--follow-seconds, default\n"
    "  60). --save writes the request, response and inclusion for\n"
    "  `layerproof verify-receipt`. --insecure: plaintext, loopback only.\n"
    "exit: 0 verified, 1 a check failed or the promise is broken, 2 usage\n"
    "or bad input, 3 the call failed, 4 the promise is still pending\n";

constexpr char kVerifyReceiptUsage[] =
    "usage: layerproof verify-receipt FILE --prover-key FILE --log-key FILE\n"
    "         [--prover-id ID] [--verifier-id ID] [--log-origin ORIGIN]\n"
    "         [--model-digest HEX] [--json]\n"
    "         [--openai-request FILE [--nonce HEX] [--model DIR]]\n"
    "  Checks a receipt saved by `layerproof generate --prover --save FILE`\n"
    "  (a SavedReceipt, inference.proto, in the protobuf JSON mapping) as\n"
    "  the client did when it arrived; or an OpenAI API response body (or\n"
    "  the last chunk of its stream) with its layerproof receipt. With\n"
    "  --openai-request (the body sent; --nonce: its X-LayerProof-Nonce;\n"
    "  --model: the model directory, needed for a chat) the receipt must\n"
    "  bind exactly the request that body maps to.\n"
    "exit: 0 verified, 1 a check failed, 2 usage or bad input, 4 a promise\n"
    "without its inclusion (still pending when it was saved)\n";

constexpr int kVerified = 0;
constexpr int kCheckFailed = 1;
constexpr int kBadInput = 2;
constexpr int kCallFailed = 3;
constexpr int kPending = 4;

const std::set<std::string> kTrustFlags = {"--prover-key", "--log-key",
                                           "--prover-id",  "--verifier-id",
                                           "--log-origin", "--model-digest"};

std::set<std::string> Union(std::set<std::string> a,
                            const std::set<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}

struct Trust {
  check::ReceiptTrust receipt;
  std::unique_ptr<store::CheckpointVerifier> log_key;
};

absl::StatusOr<Trust> ParseTrust(const Flags& flags) {
  if (!flags.Has("--prover-key") || !flags.Has("--log-key")) {
    return absl::InvalidArgumentError(
        "--prover-key and --log-key are required (the prover's and the "
        "verifier's public keys, PEM)");
  }
  Trust t;
  absl::StatusOr<store::Ed25519PublicKey> prover_key =
      store::ReadPublicKeyFile(flags.Get("--prover-key"));
  if (!prover_key.ok()) {
    return absl::InvalidArgumentError(
        "--prover-key: " + std::string(prover_key.status().message()));
  }
  absl::StatusOr<store::Ed25519PublicKey> log_key =
      store::ReadPublicKeyFile(flags.Get("--log-key"));
  if (!log_key.ok()) {
    return absl::InvalidArgumentError("--log-key: " +
                                      std::string(log_key.status().message()));
  }
  const std::string verifier_id = flags.Get("--verifier-id", "verifier-1");
  t.log_key =
      std::make_unique<store::CheckpointVerifier>(verifier_id, *log_key);
  t.receipt.prover_keys.Add(*prover_key);
  t.receipt.prover_id = flags.Get("--prover-id");
  t.receipt.log = {t.log_key.get(),
                   flags.Get("--log-origin", "layerproof/" + verifier_id)};
  if (flags.Has("--model-digest")) {
    absl::StatusOr<std::string> digest =
        store::HexDecode(flags.Get("--model-digest"));
    if (!digest.ok() || digest->size() != 32) {
      return absl::InvalidArgumentError(
          "--model-digest: want 64 hex digits (the model digest)");
    }
    t.receipt.model_digest = *digest;
  }
  return t;
}

std::string Hex(const std::string& bytes) {
  return store::HexEncode(store::AsBytes(bytes));
}

// What both commands print about a receipt.
nlohmann::json Describe(const v1::GenerateResponse& r,
                        const check::CheckedReceipt* receipt) {
  nlohmann::json j = {
      {"request_id", Hex(r.request_id())},
      {"text", r.text()},
      {"prompt_token_ids", std::vector<int32_t>(r.prompt_token_ids().begin(),
                                                r.prompt_token_ids().end())},
      {"output_token_ids", std::vector<int32_t>(r.output_token_ids().begin(),
                                                r.output_token_ids().end())},
      {"finish_reason", v1::FinishReason_Name(r.finish_reason())}};
  if (receipt == nullptr) return j;
  j["prover_id"] = receipt->commitment.prover_id();
  j["model_digest"] = Hex(receipt->commitment.model_digest());
  j["client_nonce"] = Hex(receipt->commitment.client_nonce());
  if (receipt->checkpoint.has_value()) {
    const store::Checkpoint& cp = *receipt->checkpoint;
    j["log"] = {{"state", "logged"},
                {"leaf_index", receipt->leaf_index},
                {"tree_size", cp.size},
                {"root", store::HexEncode(
                             store::Bytes(cp.root.data(), cp.root.size()))},
                {"origin", cp.origin}};
  } else if (receipt->promise.has_value()) {
    j["log"] = {{"state", "promised"},
                {"log_by_unix_nanos", receipt->promise->log_by_unix_nanos()}};
  }
  return j;
}

int Finish(bool json, nlohmann::json j, int code, const absl::Status& status,
           const char* command) {
  j["ok"] = code == kVerified;
  j["exit_code"] = code;
  if (!status.ok()) j["error"] = status.ToString();
  if (json) {
    std::printf("%s\n", j.dump(2).c_str());
  } else if (code == kVerified) {
    if (j.contains("text"))
      std::printf("%s\n", j["text"].get<std::string>().c_str());
    std::fprintf(stderr, "layerproof %s: receipt verified (%s)\n", command,
                 j.contains("log") ? j["log"].dump().c_str() : "");
  }
  if (!status.ok()) {
    PrintError(std::string("layerproof ") + command, status.ToString());
  }
  return code;
}

int Usage(const char* usage, const std::string& error) {
  if (!error.empty()) PrintError("layerproof", error);
  std::fputs(usage, stderr);
  return kBadInput;
}

// The request from the flags; nullopt with *error naming the flag.
std::optional<v1::GenerateRequest> ParseRequest(const Flags& flags,
                                                std::string* error) {
  v1::GenerateRequest request;
  if (flags.Has("--prompt") == flags.Has("--tokens")) {
    *error = "want exactly one of --prompt and --tokens";
    return std::nullopt;
  }
  if (flags.Has("--prompt")) {
    request.set_text(flags.Get("--prompt"));
  } else {
    auto ids = ParseTokenList(flags.Get("--tokens"), error);
    if (!ids) return std::nullopt;
    for (int32_t id : *ids) request.mutable_token_ids()->add_ids(id);
  }
  const auto max_tokens = flags.GetInt("--max-tokens", 32, 1, 1 << 20, error);
  const auto top_k = flags.GetInt("--top-k", 0, 0, INT32_MAX, error);
  const auto temperature = flags.GetDouble("--temperature", 0, error);
  const auto top_p = flags.GetDouble("--top-p", 1, error);
  const auto seed = flags.GetInt("--seed", 0, 0, INT64_MAX, error);
  if (!max_tokens || !top_k || !temperature || !top_p || !seed) {
    return std::nullopt;
  }
  request.set_max_tokens(static_cast<uint32_t>(*max_tokens));
  if (flags.Has("--temperature") || flags.Has("--top-k") ||
      flags.Has("--top-p")) {
    request.mutable_sampling()->set_temperature(
        static_cast<float>(*temperature));
    request.mutable_sampling()->set_top_k(static_cast<int32_t>(*top_k));
    request.mutable_sampling()->set_top_p(static_cast<float>(*top_p));
  }
  if (flags.Has("--stop-ids")) {
    auto ids = ParseTokenList(flags.Get("--stop-ids"), error);
    if (!ids) return std::nullopt;
    for (int32_t id : *ids) request.add_stop_token_ids(id);
  }
  request.set_ignore_eos(flags.Has("--ignore-eos"));
  if (flags.Has("--seed")) {
    request.set_seed(static_cast<uint64_t>(*seed));
  } else if (!flags.Has("--no-nonce")) {
    request.set_client_nonce(RandomNonce());
  }
  return request;
}

absl::StatusOr<rpc::TlsOptions> ParseClientTls(const Flags& flags,
                                               const std::string& address) {
  rpc::TlsOptions tls;
  if (flags.Has("--insecure")) {
    for (const char* f :
         {"--tls-ca", "--tls-name", "--client-cert", "--client-key"}) {
      if (flags.Has(f)) {
        return absl::InvalidArgumentError(std::string(f) +
                                          " conflicts with --insecure");
      }
    }
    if (!rpc::IsLoopbackListenAddress(address)) {
      return absl::InvalidArgumentError(
          "--insecure: --prover " + address +
          " is not a loopback address; plaintext only on loopback");
    }
    tls.insecure = true;
    return tls;
  }
  if (!flags.Has("--tls-ca")) {
    return absl::InvalidArgumentError(
        "--tls-ca is required (the CA of the prover's certificate), or "
        "--insecure on loopback");
  }
  tls.ca_file = flags.Get("--tls-ca");
  tls.server_name_override = flags.Get("--tls-name");
  tls.cert_file = flags.Get("--client-cert");
  tls.key_file = flags.Get("--client-key");
  return tls;
}

absl::Status Save(const std::string& path, const v1::GenerateRequest& request,
                  const CheckedGeneration& g) {
  v1::SavedReceipt saved;
  *saved.mutable_request() = request;
  *saved.mutable_response() = g.response;
  if (g.followed_inclusion.has_value()) {
    *saved.mutable_followed_inclusion() = *g.followed_inclusion;
  }
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  const auto s =
      google::protobuf::util::MessageToJsonString(saved, &json, options);
  if (!s.ok()) return absl::InternalError("--save: " + s.ToString());
  return WriteWholeFile(path, json);
}

}  // namespace

int RunRemoteGenerate(const std::vector<std::string>& args) {
  if (WantsHelp(args)) {
    std::fputs(kRemoteGenerateUsage, stdout);
    return 0;
  }
  Flags flags(Union(kTrustFlags,
                    {"--prover", "--prompt", "--tokens", "--max-tokens",
                     "--temperature", "--top-k", "--top-p", "--seed",
                     "--stop-ids", "--follow-seconds", "--save", "--tls-ca",
                     "--tls-name", "--client-cert", "--client-key"}),
              {"--ignore-eos", "--no-nonce", "--json", "--insecure"});
  std::string error;
  if (!flags.Parse(args, &error)) return Usage(kRemoteGenerateUsage, error);
  const bool json = flags.Has("--json");
  const std::string address = flags.Get("--prover");
  std::optional<v1::GenerateRequest> request = ParseRequest(flags, &error);
  if (!request) return Usage(kRemoteGenerateUsage, error);
  const auto follow = flags.GetInt("--follow-seconds", 60, 0, 86400, &error);
  if (!follow) return Usage(kRemoteGenerateUsage, error);
  absl::StatusOr<Trust> trust = ParseTrust(flags);
  if (!trust.ok()) {
    return Usage(kRemoteGenerateUsage, std::string(trust.status().message()));
  }
  absl::StatusOr<rpc::TlsOptions> tls = ParseClientTls(flags, address);
  if (!tls.ok()) {
    return Usage(kRemoteGenerateUsage, std::string(tls.status().message()));
  }
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      rpc::MakeChannel(address, *tls);
  if (!channel.ok()) {
    return Finish(json, {}, kBadInput, channel.status(), "generate");
  }
  ProverClient client{v1::Inference::NewStub(*channel),
                      v1::Opening::NewStub(*channel)};
  ClientTimeouts timeouts;
  timeouts.follow = absl::Seconds(*follow);
  const CheckedGeneration g =
      GenerateChecked(client, *request, trust->receipt, timeouts);
  if (flags.Has("--save") && !g.rpc_failed) {
    if (absl::Status s = Save(flags.Get("--save"), *request, g); !s.ok()) {
      return Finish(json, {}, kBadInput, s, "generate");
    }
  }
  nlohmann::json j =
      Describe(g.response, g.receipt.has_value() ? &*g.receipt : nullptr);
  if (g.promise_broken) j["log"]["state"] = "broken";
  int code = kVerified;
  if (g.rpc_failed) {
    code = kCallFailed;
  } else if (absl::IsDeadlineExceeded(g.status) && g.receipt.has_value()) {
    code = kPending;
  } else if (!g.status.ok()) {
    code = kCheckFailed;
  }
  return Finish(json, std::move(j), code, g.status, "generate");
}

int RunVerifyReceipt(const std::vector<std::string>& args) {
  if (WantsHelp(args)) {
    std::fputs(kVerifyReceiptUsage, stdout);
    return 0;
  }
  if (args.empty() || args[0].rfind("--", 0) == 0) {
    return Usage(kVerifyReceiptUsage, "verify-receipt needs FILE first");
  }
  Flags flags(Union(kTrustFlags, {"--openai-request", "--nonce", "--model"}),
              {"--json"});
  std::string error;
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (!flags.Parse(rest, &error)) return Usage(kVerifyReceiptUsage, error);
  const bool json = flags.Has("--json");
  absl::StatusOr<Trust> trust = ParseTrust(flags);
  if (!trust.ok()) {
    return Usage(kVerifyReceiptUsage, std::string(trust.status().message()));
  }
  // A saved receipt is a few KiB; 16 MiB bounds what a hostile file costs.
  absl::StatusOr<std::string> text = ReadWholeFile(args[0], 16 << 20);
  if (!text.ok())
    return Finish(json, {}, kBadInput, text.status(), "verify-receipt");
  absl::StatusOr<v1::SavedReceipt> parsed = ParseSavedReceipt(args[0], *text);
  if (!parsed.ok()) {
    return Finish(json, {}, kBadInput, parsed.status(), "verify-receipt");
  }
  const v1::SavedReceipt& saved = *parsed;
  if (flags.Has("--openai-request")) {
    absl::StatusOr<std::string> request =
        ReadWholeFile(flags.Get("--openai-request"), 16 << 20);
    if (!request.ok()) {
      return Finish(json, {}, kBadInput, request.status(), "verify-receipt");
    }
    absl::Status mapped = CheckOpenAiRequest(
        saved, *request, flags.Get("--nonce"), flags.Get("--model"));
    if (!mapped.ok()) {
      return Finish(json, Describe(saved.response(), nullptr),
                    mapped.code() == absl::StatusCode::kDataLoss ? kCheckFailed
                                                                 : kBadInput,
                    mapped, "verify-receipt");
    }
  }
  absl::StatusOr<check::CheckedReceipt> receipt =
      check::CheckReceipt(saved.request(), saved.response(), trust->receipt);
  if (!receipt.ok()) {
    return Finish(json, Describe(saved.response(), nullptr), kCheckFailed,
                  receipt.status(), "verify-receipt");
  }
  absl::Status status;
  int code = kVerified;
  if (receipt->promise.has_value()) {
    if (saved.has_followed_inclusion()) {
      status = check::CheckPromisedInclusion(
          saved.followed_inclusion(), saved.response().commitment_envelope(),
          trust->receipt, &*receipt);
      if (!status.ok()) code = kCheckFailed;
    } else {
      status = absl::DeadlineExceededError(
          "a promise without its inclusion; fetch it with Opening."
          "GetCommitment, or present the promise after its deadline");
      code = kPending;
    }
  }
  nlohmann::json j = Describe(saved.response(), &*receipt);
  return Finish(json, std::move(j), code, status, "verify-receipt");
}

}  // namespace layerproof::cli
