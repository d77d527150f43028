#include "cli/selftest.h"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cli/print_error.h"
#include "kernels/dispatch.h"
#include "kernels/golden.h"

namespace layerproof::cli {

using kernels::Backend;
using kernels::BackendKind;
using kernels::GoldenResult;

namespace {

constexpr char kUsage[] =
    "usage: layerproof selftest [--print-golden | --json]\n"
    "  Runs every kernel backend available here over the golden inputs and\n"
    "  compares each output hash with the golden file built into this binary.\n"
    "  --print-golden  print the golden file as the ref backend computes it\n"
    "  --json          one JSON object on stdout instead of the table\n"
    "exit: 0 every backend bit-identical, 1 a mismatch, 2 usage\n";

// A string as a JSON string literal (the failure lines are ASCII).
std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out + "\"";
}

struct BackendRow {
  std::string name;
  int checked = 0, matched = 0;
};

int PrintGolden() {
  auto ref = kernels::GetBackend(BackendKind::kRef);
  if (!ref.ok()) return 1;
  const std::vector<GoldenResult> results = kernels::RunGoldenCases(**ref);
  for (const GoldenResult& r : results) {
    if (!r.status.ok()) {
      PrintError("case " + r.name + " failed", r.status.ToString());
      return 1;
    }
  }
  std::fputs(kernels::FormatGoldenFile(results).c_str(), stdout);
  return 0;
}

}  // namespace

int RunSelftest(const std::vector<std::string>& args) {
  bool json = false;
  for (const std::string& a : args) {
    if (a == "--print-golden") return PrintGolden();
    if (a == "--json") {
      json = true;
      continue;
    }
    std::fputs(kUsage, a == "--help" ? stdout : stderr);
    return a == "--help" ? 0 : 2;
  }
  auto golden = kernels::ParseGoldenFile(kernels::EmbeddedGoldenFile());
  if (!golden.ok()) {
    PrintError("selftest", golden.status().ToString());
    return 1;
  }
  bool all_ok = true;
  std::vector<BackendRow> rows;
  std::vector<std::string> failures;
  for (BackendKind kind : kernels::AvailableBackends()) {
    Backend* b = *kernels::GetBackend(kind);
    int checked = 0, matched = 0;
    for (const GoldenResult& r : kernels::RunGoldenCases(*b)) {
      ++checked;
      auto want = golden->find(r.name);
      if (!r.status.ok()) {
        failures.push_back(std::string(b->name()) + " " + r.name + ": " +
                           r.status.ToString());
      } else if (want == golden->end()) {
        failures.push_back(std::string(b->name()) + " " + r.name +
                           ": no golden hash for this case");
      } else if (want->second != r.sha256_hex) {
        failures.push_back(std::string(b->name()) + " " + r.name + ": got " +
                           r.sha256_hex + ", want " + want->second);
      } else {
        ++matched;
      }
    }
    all_ok = all_ok && checked > 0 && matched == checked;
    rows.push_back({std::string(b->name()), checked, matched});
  }
  if (json) {
    std::printf("{\"spec_version\": %d, \"golden_cases\": %zu, \"ok\": %s,\n",
                kernels::kSpecVersion, golden->size(),
                all_ok ? "true" : "false");
    std::printf(" \"backends\": [");
    for (size_t i = 0; i < rows.size(); ++i) {
      const BackendRow& r = rows[i];
      std::printf("%s{\"name\": %s, \"checked\": %d, \"identical\": %s}",
                  i ? ", " : "", JsonString(r.name).c_str(), r.checked,
                  r.checked > 0 && r.matched == r.checked ? "true" : "false");
    }
    std::printf("],\n \"mismatches\": [");
    for (size_t i = 0; i < failures.size(); ++i) {
      std::printf("%s%s", i ? ", " : "", JsonString(failures[i]).c_str());
    }
    std::printf("]}\n");
    return all_ok ? 0 : 1;
  }
  std::printf("LayerProof selftest, spec_version %d, %zu golden cases\n\n",
              kernels::kSpecVersion, golden->size());
  std::printf("%-8s | %-11s | %s\n", "backend", "ops checked",
              "bit-identical to golden");
  std::printf("---------+-------------+------------------------\n");
  for (const BackendRow& r : rows) {
    std::printf("%-8s | %11d | %s\n", r.name.c_str(), r.checked,
                r.checked > 0 && r.matched == r.checked ? "yes" : "NO");
  }
  for (const std::string& f : failures)
    std::printf("  MISMATCH %s\n", f.c_str());
  std::printf("\n%s\n", all_ok ? "PASS: this machine reproduces every golden "
                                 "hash on every backend it has"
                               : "FAIL: see mismatches above");
  return all_ok ? 0 : 1;
}

}  // namespace layerproof::cli
