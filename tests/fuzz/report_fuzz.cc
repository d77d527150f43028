// Fuzzes signed compliance reports (check/report_format.h) and the report
// JSON itself (verifier/report_html.h), as `layerproof report verify` and
// `layerproof report render` read them. The first byte chooses:
//   0: a DSSE JSON report, VerifyReportDsseJson under the fixed verifier key;
//   1: a serialised report Envelope, VerifyReportEnvelope;
//   2: a report payload (the JSON object inside), checked for depth, read
//      (ReadReport) and rendered to HTML (RenderReportHtml), as render does
//      once the signature has verified.
#include <cstddef>
#include <cstdint>
#include <string>

#include "check/report_format.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_keys.h"
#include "verifier/internal/report_view.h"
#include "verifier/report_html.h"

namespace check = layerproof::check;
namespace fuzz = layerproof::fuzz;

namespace {

void Render(const nlohmann::json& report) {
  auto view = layerproof::verifier::internal::report_view::ReadReport(report);
  LP_FUZZ_CHECK_PRINTABLE(view.status());
  auto html = layerproof::verifier::RenderReportHtml(report);
  LP_FUZZ_CHECK_PRINTABLE(html.status());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput in(data, size);
  const uint8_t mode = in.U8() % 3;
  const std::string text = in.Rest();
  const auto& key = fuzz::VerifierKey().public_key();
  if (mode == 0) {
    auto report = check::VerifyReportDsseJson(text, key);
    LP_FUZZ_CHECK_PRINTABLE(report.status());
    if (report.ok()) Render(*report);
  } else if (mode == 1) {
    auto report = check::VerifyReportEnvelope(text, key);
    LP_FUZZ_CHECK_PRINTABLE(report.status());
    if (report.ok()) Render(*report);
    auto dsse = check::ReportEnvelopeToDsseJson(text);
    LP_FUZZ_CHECK_PRINTABLE(dsse.status());
  } else {
    const absl::Status depth =
        check::CheckJsonDepth(text, check::kMaxReportJsonDepth, "report");
    LP_FUZZ_CHECK_PRINTABLE(depth);
    if (!depth.ok()) return 0;
    nlohmann::json report = nlohmann::json::parse(text, nullptr, false);
    if (report.is_discarded()) return 0;
    Render(report);
  }
  return 0;
}
