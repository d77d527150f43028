// `layerproof report`: fetches a signed compliance report from a verifier
// (Report.GetComplianceReport) with a fresh client nonce, checks it with the
// verifier's public key (signature, checkpoint note, consistency proof:
// check/report_format.h) and that it answers the request (window,
// prover filter, verifier id, log origin, nonce, and with --previous that
// it extends the caller's own previous report), and writes it as the DSSE
// JSON envelope or as a self-contained HTML page; `layerproof report
// render` verifies a saved JSON report and renders it offline; `layerproof
// report verify` checks a saved report, optionally against the previous
// one (docs/reports.md "The command line"). No report is written unless
// every check passed. Exit codes: 0 ok; 1 failure (unreachable or refusing
// verifier, a check failed, unwritable output); 2 usage or malformed
// input.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "check/report_format.h"
#include "cli/file_io.h"
#include "cli/flags.h"
#include "cli/print_error.h"
#include "cli/store_commands.h"
#include "grpcpp/client_context.h"
#include "kernels/status.h"
#include "layerproof/v1/report.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "rpc/tls.h"
#include "store/crypto.h"
#include "verifier/audit_policy.h"
#if __has_include("verifier/report_html.h")
#include "verifier/report_html.h"
#define LP_HAVE_REPORT_HTML 1
#endif

namespace layerproof::cli {
namespace {

constexpr int kOk = 0;
constexpr int kFailure = 1;
constexpr int kUsage = 2;

constexpr char kUsageText[] =
    "layerproof report --verifier ADDR --from T1 --to T2 --out FILE\n"
    "    --verifier-key FILE [--prover ID] [--format json|html]\n"
    "    [--previous OLD.json] [--verifier-id ID] [--timeout-s N] [--json]\n"
    "    [--insecure | --tls-ca FILE [--server-name NAME]\n"
    "     [--client-cert FILE --client-key FILE]]\n"
    "  Fetches the verifier's signed compliance report over [T1, T2)\n"
    "  (Report.GetComplianceReport; needs the auditor role under mTLS),\n"
    "  checks it with --verifier-key (PEM public key: signature, checkpoint\n"
    "  note, consistency proof, and that it answers this request and echoes\n"
    "  a fresh nonce) and writes FILE: the DSSE JSON envelope (--format\n"
    "  json, the default) or a self-contained HTML page (--format html).\n"
    "  T1, T2: RFC 3339 (2026-12-01T15:00:00Z), Unix seconds, or \"now\".\n"
    "  --previous: your previous report (DSSE JSON); the new one must prove\n"
    "  its checkpoint consistent with that report's (and be by the same\n"
    "  verifier id and log origin). --verifier-id: the id the report must\n"
    "  name.\n"
    "\n"
    "layerproof report render --in REPORT.json --verifier-key FILE\n"
    "    --out REPORT.html [--json]\n"
    "  Verifies a saved DSSE JSON report and renders it as HTML offline.\n"
    "\n"
    "layerproof report verify NEW.json --verifier-key FILE\n"
    "    [--previous OLD.json] [--json]\n"
    "  Checks a saved report offline (signature, checkpoint note,\n"
    "  consistency proof) and with --previous that it extends OLD.json.\n"
    "\n"
    "  --json      print the report's totals as one JSON object on stdout\n"
    "              (otherwise a one-line summary)\n"
    "  --insecure  plaintext to the verifier (loopback tests, demo)\n"
    "  --tls-ca    CA that signs the verifier's certificate (default: the\n"
    "              system roots); --server-name: the name to verify it by\n"
    "  --client-cert FILE --client-key FILE  this client's certificate\n"
    "Nothing is written unless the signature verifies. Exit 0 ok; 1 failure\n"
    "(unreachable or refusing verifier, bad signature); 2 usage or malformed\n"
    "input. See docs/reports.md.\n";

int Usage(const std::string& error) {
  if (!error.empty()) {
    PrintError("layerproof report", error);
  }
  std::fputs(kUsageText, stderr);
  return kUsage;
}

int Fail(const std::string& message, int code = kFailure) {
  PrintError("layerproof report", message);
  return code;
}

// `path`, named by `flag` in the error; a file over `max_bytes` is refused
// unread.
absl::StatusOr<std::string> ReadFile(
    const std::string& flag, const std::string& path,
    size_t max_bytes = std::numeric_limits<size_t>::max()) {
  absl::StatusOr<std::string> data = ReadWholeFile(path, max_bytes);
  if (!data.ok()) {
    return absl::InvalidArgumentError(flag + ": " +
                                      std::string(data.status().message()));
  }
  return data;
}

// A saved DSSE JSON report at `path` (named by `flag`), size-capped before
// it is read and fully verified (check/report_format.h).
absl::StatusOr<nlohmann::json> LoadVerifiedReport(
    const std::string& flag, const std::string& path,
    const store::Ed25519PublicKey& key) {
  LP_ASSIGN_OR_RETURN(std::string dsse,
                      ReadFile(flag, path, check::kMaxReportDsseJsonBytes));
  absl::StatusOr<nlohmann::json> report =
      check::VerifyReportDsseJson(dsse, key);
  if (!report.ok()) {
    return absl::Status(report.status().code(),
                        path + ": " + std::string(report.status().message()));
  }
  return report;
}

// Exit code for a failed load: malformed input is usage (2), anything else
// (a check that failed) 1.
int LoadFailure(const absl::Status& s) {
  return Fail(
      std::string(s.message()),
      s.code() == absl::StatusCode::kInvalidArgument ? kUsage : kFailure);
}

// --out's file.
absl::Status WriteOut(const std::string& path, const std::string& data) {
  if (absl::Status s = WriteWholeFile(path, data); !s.ok()) {
    return absl::UnavailableError("--out: " + std::string(s.message()));
  }
  return absl::OkStatus();
}

// Unix nanoseconds of "now", decimal Unix seconds, or RFC 3339.
std::optional<int64_t> ParseTime(const std::string& flag,
                                 const std::string& text, absl::Time now,
                                 std::string* error) {
  if (text == "now") return absl::ToUnixNanos(now);
  constexpr int64_t kMaxSeconds =
      std::numeric_limits<int64_t>::max() / 1000000000;
  if (!text.empty() && text.size() <= 18 &&
      text.find_first_not_of("0123456789") == std::string::npos) {
    const long long seconds = std::stoll(text);
    if (seconds <= kMaxSeconds) return int64_t(seconds) * 1000000000;
    *error = flag + ": got " + text +
             " seconds, want <= " + std::to_string(kMaxSeconds);
    return std::nullopt;
  }
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, text, &t, &err) ||
      t < absl::UnixEpoch() ||
      t > absl::FromUnixNanos(std::numeric_limits<int64_t>::max())) {
    *error = flag + ": got \"" + text +
             "\", want RFC 3339 (2026-12-01T15:00:00Z), Unix seconds or "
             "\"now\"";
    return std::nullopt;
  }
  return absl::ToUnixNanos(t);
}

absl::StatusOr<store::Ed25519PublicKey> LoadVerifierKey(const Flags& flags) {
  absl::StatusOr<std::string> pem =
      ReadFile("--verifier-key", flags.Get("--verifier-key"));
  if (!pem.ok()) return pem.status();
  absl::StatusOr<store::Ed25519PublicKey> key =
      store::Ed25519PublicKey::FromPem(*pem);
  if (!key.ok()) {
    return absl::InvalidArgumentError("--verifier-key: " +
                                      std::string(key.status().message()));
  }
  return key;
}

// `obj`[key] when `obj` is an object holding it; null otherwise (a
// verified report has the documented shape, but nothing here may throw).
nlohmann::json Member(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nlohmann::json() : *it;
}

// OK when verified report `newer` is by the same verifier and log as
// verified report `older` and its previous_report is older's checkpoint
// (its consistency proof was checked when `newer` was verified).
absl::Status CheckExtends(const nlohmann::json& newer,
                          const nlohmann::json& older) {
  for (const char* k : {"verifier_id", "log_origin"}) {
    if (Member(newer, k) != Member(older, k)) {
      return absl::FailedPreconditionError(
          std::string(k) + ": the reports differ (" + Member(newer, k).dump() +
          " vs " + Member(older, k).dump() + ")");
    }
  }
  const nlohmann::json prev = Member(newer, "previous_report");
  const nlohmann::json cp = Member(older, "checkpoint");
  if (prev.is_null()) {
    return absl::FailedPreconditionError(
        "the report has no previous_report, so it proves nothing about "
        "the previous report's checkpoint (tree size " +
        Member(cp, "tree_size").dump() + ")");
  }
  if (Member(prev, "tree_size") != Member(cp, "tree_size")) {
    return absl::FailedPreconditionError(
        "previous_report.tree_size is " + Member(prev, "tree_size").dump() +
        ", but the previous report's checkpoint has tree size " +
        Member(cp, "tree_size").dump() +
        ": the report was not requested against it (fetch it with "
        "`layerproof report ... --previous` that report)");
  }
  if (Member(prev, "root_hash") != Member(cp, "root_hash")) {
    return absl::FailedPreconditionError(
        "previous_report.root_hash " + Member(prev, "root_hash").dump() +
        " differs from the previous report's checkpoint root " +
        Member(cp, "root_hash").dump() +
        ": the log was rewritten or the reports are of different logs");
  }
  return absl::OkStatus();
}

// OK when verified report `report` answers `request`: the same window,
// prover filter and nonce, and verifier_id `verifier_id` when that is not
// empty (--verifier-id).
absl::Status CheckAnswers(const nlohmann::json& report,
                          const v1::ComplianceReportRequest& request,
                          const std::string& nonce_hex,
                          const std::string& verifier_id) {
  const nlohmann::json window = Member(report, "window");
  auto mismatch = [](const std::string& what, const nlohmann::json& got,
                     const nlohmann::json& want) {
    return absl::FailedPreconditionError(
        "the report does not answer the request: " + what + " is " +
        got.dump() + ", requested " + want.dump());
  };
  if (Member(window, "from_unix_nanos") !=
      nlohmann::json(request.from_unix_nanos())) {
    return mismatch("window.from_unix_nanos", Member(window, "from_unix_nanos"),
                    request.from_unix_nanos());
  }
  if (Member(window, "to_unix_nanos") !=
      nlohmann::json(request.to_unix_nanos())) {
    return mismatch("window.to_unix_nanos", Member(window, "to_unix_nanos"),
                    request.to_unix_nanos());
  }
  if (Member(report, "prover_filter") != nlohmann::json(request.prover_id())) {
    return mismatch("prover_filter", Member(report, "prover_filter"),
                    request.prover_id());
  }
  if (Member(report, "client_nonce") != nlohmann::json(nonce_hex)) {
    return mismatch("client_nonce (a replayed report?)",
                    Member(report, "client_nonce"), nonce_hex);
  }
  if (!verifier_id.empty() &&
      Member(report, "verifier_id") != nlohmann::json(verifier_id)) {
    return mismatch("verifier_id", Member(report, "verifier_id"), verifier_id);
  }
  return absl::OkStatus();
}

// The report's totals as --json prints them.
nlohmann::json Summary(const nlohmann::json& report, const std::string& out) {
  nlohmann::json s = nlohmann::json::object();
  s["out"] = out;
  for (const char* k : {"verifier_id", "generated_at", "window",
                        "prover_filter", "totals", "failures_omitted"}) {
    s[k] = Member(report, k);
  }
  s["tree_size"] = Member(Member(report, "checkpoint"), "tree_size");
  s["ruled_out"] = Member(Member(report, "detection"), "ruled_out");
  return s;
}

void PrintSummary(const nlohmann::json& report, const std::string& out,
                  bool json) {
  if (json) {
    std::printf("%s\n", Summary(report, out)
                            .dump(-1, ' ', false,
                                  nlohmann::json::error_handler_t::replace)
                            .c_str());
    return;
  }
  const nlohmann::json totals = Member(report, "totals");
  auto n = [&](const char* k) -> long long {
    const nlohmann::json v = Member(totals, k);
    return v.is_number_integer() ? v.get<long long>() : 0;
  };
  std::printf(
      "report verified: %lld commitments, %lld audits (%lld drawn, %lld on "
      "demand), %lld failures -> %s\n",
      n("commitments"), n("audits"), n("drawn_audits"), n("on_demand_audits"),
      n("failures"), out.c_str());
}

absl::StatusOr<std::string> RenderHtml(const nlohmann::json& report) {
#ifdef LP_HAVE_REPORT_HTML
  return verifier::RenderReportHtml(report);
#else
  (void)report;
  return absl::UnimplementedError(
      "--format html: this build has no HTML renderer "
      "(verifier/report_html.h); write --format json and render it with "
      "`layerproof report render` from a build that has one");
#endif
}

int Render(const std::vector<std::string>& args) {
  Flags flags({"--in", "--verifier-key", "--out"}, {"--json", "--help"});
  std::string error;
  if (!flags.Parse(args, &error)) return Usage(error);
  for (const char* f : {"--in", "--verifier-key", "--out"}) {
    if (!flags.Has(f)) return Usage(std::string(f) + ": missing");
  }
  absl::StatusOr<store::Ed25519PublicKey> key = LoadVerifierKey(flags);
  if (!key.ok()) return Fail(std::string(key.status().message()), kUsage);
  absl::StatusOr<nlohmann::json> report =
      LoadVerifiedReport("--in", flags.Get("--in"), *key);
  if (!report.ok()) return LoadFailure(report.status());
  absl::StatusOr<std::string> html = RenderHtml(*report);
  if (!html.ok()) return Fail(std::string(html.status().message()));
  if (absl::Status s = WriteOut(flags.Get("--out"), *html); !s.ok()) {
    return Fail(std::string(s.message()));
  }
  PrintSummary(*report, flags.Get("--out"), flags.Has("--json"));
  return kOk;
}

// `layerproof report verify NEW.json --verifier-key FILE [--previous
// OLD.json] [--json]`.
int VerifySaved(const std::vector<std::string>& args) {
  if (args.empty() || args[0].rfind("--", 0) == 0) {
    return Usage("report verify: missing NEW.json");
  }
  const std::string path = args[0];
  Flags flags({"--verifier-key", "--previous"}, {"--json", "--help"});
  std::string error;
  if (!flags.Parse(std::vector<std::string>(args.begin() + 1, args.end()),
                   &error)) {
    return Usage(error);
  }
  if (!flags.Has("--verifier-key")) return Usage("--verifier-key: missing");
  absl::StatusOr<store::Ed25519PublicKey> key = LoadVerifierKey(flags);
  if (!key.ok()) return Fail(std::string(key.status().message()), kUsage);
  absl::StatusOr<nlohmann::json> report =
      LoadVerifiedReport("NEW.json", path, *key);
  if (!report.ok()) return LoadFailure(report.status());
  std::optional<nlohmann::json> older;
  if (flags.Has("--previous")) {
    absl::StatusOr<nlohmann::json> old =
        LoadVerifiedReport("--previous", flags.Get("--previous"), *key);
    if (!old.ok()) return LoadFailure(old.status());
    if (absl::Status s = CheckExtends(*report, *old); !s.ok()) {
      return Fail(path + ": " + std::string(s.message()));
    }
    older = std::move(*old);
  }
  const nlohmann::json prev = Member(*report, "previous_report");
  if (flags.Has("--json")) {
    nlohmann::json out = Summary(*report, path);
    out.erase("out");
    out["in"] = path;
    out["verified"] = true;
    out["client_nonce"] = Member(*report, "client_nonce");
    out["previous_report"] =
        prev.is_null()
            ? nlohmann::json(nullptr)
            : nlohmann::json{{"source", Member(prev, "source")},
                             {"tree_size", Member(prev, "tree_size")},
                             {"root_hash", Member(prev, "root_hash")}};
    out["extends_previous"] = older.has_value();
    std::printf("%s\n", out.dump(-1, ' ', false,
                                 nlohmann::json::error_handler_t::replace)
                            .c_str());
  } else {
    std::printf(
        "%s: verified (signature, checkpoint note at tree size %s%s)%s\n",
        path.c_str(),
        Member(Member(*report, "checkpoint"), "tree_size").dump().c_str(),
        prev.is_null() ? ""
                       : (", consistent with tree size " +
                          Member(prev, "tree_size").dump())
                             .c_str(),
        older.has_value() ? "; extends --previous" : "");
  }
  return kOk;
}

int Fetch(const std::vector<std::string>& args) {
  Flags flags({"--verifier", "--from", "--to", "--prover", "--format", "--out",
               "--verifier-key", "--tls-ca", "--client-cert", "--client-key",
               "--server-name", "--timeout-s", "--previous", "--verifier-id"},
              {"--insecure", "--json", "--help"});
  std::string error;
  if (!flags.Parse(args, &error)) return Usage(error);
  for (const char* f :
       {"--verifier", "--from", "--to", "--out", "--verifier-key"}) {
    if (!flags.Has(f)) return Usage(std::string(f) + ": missing");
  }
  const std::string format = flags.Get("--format", "json");
  if (format != "json" && format != "html") {
    return Usage("--format: got \"" + format + "\", want json or html");
  }
  const absl::Time now = absl::Now();
  std::optional<int64_t> from =
      ParseTime("--from", flags.Get("--from"), now, &error);
  if (!from.has_value()) return Usage(error);
  std::optional<int64_t> to = ParseTime("--to", flags.Get("--to"), now, &error);
  if (!to.has_value()) return Usage(error);
  if (*to <= *from) {
    return Usage("--to: must be later than --from");
  }
  std::optional<int64_t> timeout =
      flags.GetInt("--timeout-s", 300, 1, 86400, &error);
  if (!timeout.has_value()) return Usage(error);

  rpc::TlsOptions tls;
  tls.insecure = flags.Has("--insecure");
  tls.ca_file = flags.Get("--tls-ca");
  tls.cert_file = flags.Get("--client-cert");
  tls.key_file = flags.Get("--client-key");
  tls.server_name_override = flags.Get("--server-name");
  absl::StatusOr<store::Ed25519PublicKey> key = LoadVerifierKey(flags);
  if (!key.ok()) return Fail(std::string(key.status().message()), kUsage);
  std::optional<nlohmann::json> older;
  if (flags.Has("--previous")) {
    absl::StatusOr<nlohmann::json> old =
        LoadVerifiedReport("--previous", flags.Get("--previous"), *key);
    if (!old.ok()) return LoadFailure(old.status());
    older = std::move(*old);
  }
  absl::StatusOr<std::string> nonce = verifier::FreshAuditSeed();
  if (!nonce.ok()) return Fail(std::string(nonce.status().message()));
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      rpc::MakeChannel(flags.Get("--verifier"), tls);
  if (!channel.ok()) {
    return Fail(std::string(channel.status().message()), kUsage);
  }

  v1::ComplianceReportRequest request;
  request.set_from_unix_nanos(*from);
  request.set_to_unix_nanos(*to);
  request.set_prover_id(flags.Get("--prover"));
  request.set_client_nonce(*nonce);  // 32 CSPRNG bytes
  if (older.has_value()) {
    const nlohmann::json size =
        Member(Member(*older, "checkpoint"), "tree_size");
    // A verified report's tree size is an unsigned integer.
    request.set_previous_tree_size(
        size.is_number_unsigned() ? size.get<uint64_t>() : uint64_t{0});
  }
  v1::ComplianceReportResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(*timeout));
  std::unique_ptr<v1::Report::Stub> stub = v1::Report::NewStub(*channel);
  grpc::Status st = stub->GetComplianceReport(&context, request, &response);
  if (!st.ok()) {
    return Fail(
        "Report.GetComplianceReport at " + flags.Get("--verifier") + ": " +
            absl::StatusCodeToString(
                static_cast<absl::StatusCode>(st.error_code())) +
            ": " + st.error_message(),
        st.error_code() == grpc::StatusCode::INVALID_ARGUMENT ? kUsage
                                                              : kFailure);
  }
  absl::StatusOr<nlohmann::json> report =
      check::VerifyReportEnvelope(response.report_envelope(), *key);
  if (!report.ok()) {
    return Fail("refusing the report: " +
                std::string(report.status().message()));
  }
  if (absl::Status s = CheckAnswers(*report, request,
                                    store::HexEncode(store::AsBytes(*nonce)),
                                    flags.Get("--verifier-id"));
      !s.ok()) {
    return Fail("refusing the report: " + std::string(s.message()));
  }
  if (older.has_value()) {
    if (absl::Status s = CheckExtends(*report, *older); !s.ok()) {
      return Fail("refusing the report: it does not extend --previous: " +
                  std::string(s.message()));
    }
  }
  std::string out;
  if (format == "json") {
    absl::StatusOr<std::string> dsse =
        check::ReportEnvelopeToDsseJson(response.report_envelope());
    if (!dsse.ok()) return Fail(std::string(dsse.status().message()));
    out = std::move(*dsse);
  } else {
    absl::StatusOr<std::string> html = RenderHtml(*report);
    if (!html.ok()) return Fail(std::string(html.status().message()));
    out = std::move(*html);
  }
  if (absl::Status s = WriteOut(flags.Get("--out"), out); !s.ok()) {
    return Fail(std::string(s.message()));
  }
  PrintSummary(*report, flags.Get("--out"), flags.Has("--json"));
  return kOk;
}

}  // namespace

int RunReport(const std::vector<std::string>& args) {
  if (WantsHelp(args)) {
    std::fputs(kUsageText, stdout);
    return kOk;
  }
  if (!args.empty() && args[0] == "render") {
    return Render(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (!args.empty() && args[0] == "verify") {
    return VerifySaved(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  return Fetch(args);
}

}  // namespace layerproof::cli
