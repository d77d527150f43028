// `layerproof verify-bundle`: third-party offline verification of an
// evidence bundle (check/bundle_check.h, docs/formats.md). Thin: reads
// the files, loads the model, calls VerifyEvidenceBundle and prints its
// checks. Exit codes:
//   0  every check passed and the verdict was re-derived on this machine
//   1  a check failed (the bundle is not what it claims, or the given
//      keys / model / origin are not the ones it was made under)
//   2  malformed input: bad flags, an unreadable or unparseable bundle, an
//      unreadable key or model
//   3  every check that applies passed, but the verdict is never
//      re-derived offline (FAIL_TIMEOUT; FAIL_OPENING, whose opening the
//      prover did not sign; FAIL_SIGNATURE, since the right prover key may
//      not have been given): authentic, the verifier's word, not confirmed
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "check/bundle_check.h"
#include "cli/engine_setup.h"
#include "cli/file_io.h"
#include "cli/flags.h"
#include "cli/print_error.h"
#include "cli/progress.h"
#include "cli/store_commands.h"
#include "nlohmann/json.hpp"
#include "store/crypto.h"
#include "store/status.h"

namespace layerproof::cli {
namespace {

constexpr int kVerified = 0;
constexpr int kNotVerified = 1;
constexpr int kBadInput = 2;
constexpr int kNotRederivable = 3;

constexpr char kUsage[] =
    "usage: layerproof verify-bundle --model DIR --log-key FILE\n"
    "         --prover-key FILE[,FILE...] [--log-origin ORIGIN]\n"
    "         [--backend ref|avx2|avx512|auto] [--threads N] [--json] BUNDLE\n"
    "\n"
    "Re-checks an evidence bundle (Audit.GetEvidence, a serialised\n"
    "layerproof.v1.EvidenceBundle) offline: the signatures of the verdict,\n"
    "the checkpoint and the commitment, both inclusion proofs, that the\n"
    "verdict and the opening belong to the commitment, the model digest,\n"
    "and re-executes the audited layers and the head on this machine to\n"
    "re-derive the verdict bit for bit (docs/formats.md).\n"
    "\n"
    "  --model DIR          the model directory the commitment names\n"
    "  --log-key FILE       the log's (verifier's) Ed25519 public key (PEM)\n"
    "  --prover-key FILES   the provers' public keys, comma-separated\n"
    "  --log-origin ORIGIN  require this log origin (default:\n"
    "                       \"layerproof/\" + the verdict's verifier_id)\n"
    "  --backend NAME       kernels backend (default: auto)\n"
    "  --threads N          worker threads (default: the backend's)\n"
    "  --json               print the result as JSON on stdout\n"
    "\n"
    "exit: 0 verified (the evidence confirms the verdict), 1 a check failed,\n"
    "2 malformed input, 3 authentic but the verdict is not re-derivable\n"
    "offline (FAIL_TIMEOUT, FAIL_OPENING: the opening is not signed by the\n"
    "prover, FAIL_SIGNATURE: the right prover key may be missing)\n";

int BadInput(bool json, const std::string& message) {
  if (json) {
    nlohmann::json j = {
        {"ok", false}, {"exit_code", kBadInput}, {"error", message}};
    std::printf("%s\n", j.dump(2).c_str());
  }
  PrintError("layerproof verify-bundle", message);
  return kBadInput;
}

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(c));
  return out;
}

void PrintText(const std::string& path, const check::BundleVerification& result,
               int code) {
  std::printf("bundle %s\n", path.c_str());
  const v1::Verdict& v = result.verdict;
  if (v.outcome() != v1::VERDICT_UNSPECIFIED) {
    std::printf("  verdict %s", v1::VerdictOutcome_Name(v.outcome()).c_str());
    if (v.outcome() == v1::FAIL_MISMATCH) {
      std::printf(" at layer %u", v.mismatch().layer());
    }
    std::printf(" by verifier \"%s\" (log leaf %llu) on request %s",
                v.verifier_id().c_str(),
                static_cast<unsigned long long>(result.verdict_leaf_index),
                store::HexEncode(store::AsBytes(v.request_id())).c_str());
    if (!result.commitment.prover_id().empty()) {
      std::printf(" of prover \"%s\"", result.commitment.prover_id().c_str());
    }
    std::printf("\n");
  }
  size_t width = 0;
  for (const auto& c : result.checks) width = std::max(width, c.check.size());
  for (const auto& c : result.checks) {
    std::printf("  %-4s  %-*s  %s\n",
                Upper(check::BundleCheckStateName(c.state)).c_str(),
                static_cast<int>(width), c.check.c_str(), c.detail.c_str());
  }
  std::vector<std::string> failed;
  for (const auto& c : result.checks) {
    if (c.state == check::BundleCheckResult::State::kFail) {
      failed.push_back(c.check);
    }
  }
  switch (code) {
    case kVerified:
      std::printf("VERIFIED: the evidence confirms the verdict\n");
      break;
    case kNotRederivable:
      std::printf(
          "AUTHENTIC, NOT RE-DERIVED: every check that applies passed, but "
          "this verdict cannot be re-derived offline; it is the verifier's "
          "word\n");
      break;
    default: {
      std::string names;
      for (const std::string& n : failed)
        names += (names.empty() ? "" : ", ") + n;
      std::printf("NOT VERIFIED: failed %s\n", names.c_str());
    }
  }
}

void PrintJson(const check::BundleVerification& result, int code) {
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : result.checks) {
    checks.push_back(
        {{"check", c.check},
         {"state", std::string(check::BundleCheckStateName(c.state))},
         {"detail", c.detail}});
  }
  const v1::Verdict& v = result.verdict;
  nlohmann::json verdict = {
      {"outcome", v1::VerdictOutcome_Name(v.outcome())},
      {"request_id", store::HexEncode(store::AsBytes(v.request_id()))},
      {"verifier_id", v.verifier_id()},
      {"prover_id", result.commitment.prover_id()},
      {"leaf_index", result.verdict_leaf_index},
      {"audited_layers", std::vector<uint32_t>(v.audited_layers().begin(),
                                               v.audited_layers().end())},
      {"head_checked", v.head_checked()},
      {"detail", v.detail()}};
  if (v.has_commitment_leaf_index()) {
    verdict["commitment_leaf_index"] = v.commitment_leaf_index();
  }
  if (v.outcome() == v1::FAIL_MISMATCH) {
    verdict["mismatch"] = {
        {"layer", v.mismatch().layer()},
        {"expected", store::HexEncode(store::AsBytes(v.mismatch().expected()))},
        {"got", store::HexEncode(store::AsBytes(v.mismatch().got()))}};
  }
  nlohmann::json j = {{"ok", result.ok()},
                      {"verdict_rederived", result.verdict_rederived},
                      {"exit_code", code},
                      {"verdict", verdict},
                      {"checks", checks}};
  // Details are UTF-8 by construction; replace rather than throw if not.
  std::printf(
      "%s\n",
      j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

}  // namespace

int RunVerifyBundle(const std::vector<std::string>& args) {
  const std::set<std::string> valued = {"--model",      "--log-key",
                                        "--prover-key", "--log-origin",
                                        "--backend",    "--threads"};
  const std::set<std::string> switches = {"--json", "--help"};
  // Flags, and the one positional BUNDLE.
  std::vector<std::string> flag_args;
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].rfind("--", 0) == 0) {
      flag_args.push_back(args[i]);
      if (valued.count(args[i]) && i + 1 < args.size()) {
        flag_args.push_back(args[++i]);
      }
    } else {
      positional.push_back(args[i]);
    }
  }
  Flags flags(valued, switches);
  std::string error;
  const bool parsed = flags.Parse(flag_args, &error);
  if (parsed && flags.Has("--help")) {
    std::fputs(kUsage, stdout);
    return kVerified;
  }
  const bool json = parsed && flags.Has("--json");
  if (!parsed) return BadInput(json, error + "\n" + kUsage);
  for (const char* f : {"--model", "--log-key", "--prover-key"}) {
    if (!flags.Has(f)) return BadInput(json, std::string(f) + ": missing");
  }
  if (positional.size() != 1) {
    return BadInput(json, "want exactly one BUNDLE file, got " +
                              std::to_string(positional.size()) +
                              " positional arguments");
  }
  const std::optional<int64_t> threads =
      flags.GetInt("--threads", 0, 0, 1024, &error);
  if (!threads) return BadInput(json, error);
  const std::string bundle_path = positional[0];

  // Cheap inputs first: a malformed bundle or key fails before the model
  // is loaded.
  absl::StatusOr<std::string> bundle =
      ReadWholeFile(bundle_path, check::kMaxEvidenceBundleBytes);
  if (!bundle.ok()) {
    return BadInput(json, "BUNDLE: " + std::string(bundle.status().message()));
  }
  check::BundleTrust trust;
  trust.expected_origin = flags.Get("--log-origin");
  if (flags.Has("--log-origin") && trust.expected_origin.empty()) {
    return BadInput(json, "--log-origin: empty");
  }
  absl::StatusOr<store::Ed25519PublicKey> log_key =
      store::ReadPublicKeyFile(flags.Get("--log-key"));
  if (!log_key.ok()) {
    return BadInput(json,
                    "--log-key: " + std::string(log_key.status().message()));
  }
  trust.log_key = *log_key;
  const std::vector<std::string> prover_files =
      SplitCommas(flags.Get("--prover-key"));
  if (prover_files.empty()) return BadInput(json, "--prover-key: no file");
  for (const std::string& file : prover_files) {
    absl::StatusOr<store::Ed25519PublicKey> key =
        store::ReadPublicKeyFile(file);
    if (!key.ok()) {
      return BadInput(json,
                      "--prover-key: " + std::string(key.status().message()));
    }
    trust.prover_keys.push_back(*key);
  }
  // Parsed once, before the model loads, so that a malformed bundle is
  // refused at once.
  absl::StatusOr<v1::EvidenceBundle> message =
      check::ParseEvidenceBundle(*bundle);
  if (!message.ok()) {
    return BadInput(json, "BUNDLE " + bundle_path + ": " +
                              std::string(message.status().message()));
  }
  *bundle = std::string();  // the parsed message holds it all now

  kernels::StatusOr<LoadedEngine> loaded =
      LoadEngine(flags.Get("--model"), flags.Get("--backend"),
                 static_cast<int>(*threads), /*full_context=*/true,
                 /*progress=*/!json);
  if (!loaded.ok()) {
    return BadInput(json, "--model: " + loaded.status().ToString());
  }
  const auto& root = loaded->model->digest().root;
  const std::string model_digest(reinterpret_cast<const char*>(root.data()),
                                 root.size());

  std::unique_ptr<ProgressBar> bar;
  absl::StatusOr<check::BundleVerification> result =
      check::VerifyEvidenceBundle(
          *std::move(message), *loaded->engine, model_digest, trust,
          [&bar, json](int done, int total, std::string_view step) {
            if (!bar) {
              bar = std::make_unique<ProgressBar>("verifying bundle", total,
                                                  "checks", json);
            }
            bar->Update(done, std::string(step));
          });
  if (bar) bar->Finish();
  bar.reset();
  if (!result.ok()) {
    return BadInput(json, "BUNDLE " + bundle_path + ": " +
                              std::string(result.status().message()));
  }
  const int code = !result->ok()               ? kNotVerified
                   : result->verdict_rederived ? kVerified
                                               : kNotRederivable;
  if (json) {
    PrintJson(*result, code);
  } else {
    PrintText(bundle_path, *result, code);
  }
  return code;
}

}  // namespace layerproof::cli
