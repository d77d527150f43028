#include "cli/selftest.h"

#include <cstdio>
#include <map>
#include <string>

#include "kernels/dispatch.h"
#include "kernels/golden.h"

namespace layerproof::cli {

using kernels::Backend;
using kernels::BackendKind;
using kernels::GoldenResult;

namespace {

constexpr char kUsage[] =
    "usage: layerproof selftest [--print-golden]\n"
    "  Runs every kernel backend available here over the golden inputs and\n"
    "  compares each output hash with the golden file built into this binary.\n"
    "  --print-golden  print the golden file as the ref backend computes it\n";

int PrintGolden() {
  auto ref = kernels::GetBackend(BackendKind::kRef);
  if (!ref.ok()) return 1;
  const std::vector<GoldenResult> results = kernels::RunGoldenCases(**ref);
  for (const GoldenResult& r : results) {
    if (!r.status.ok()) {
      std::fprintf(stderr, "case %s failed: %s\n", r.name.c_str(),
                   r.status.ToString().c_str());
      return 1;
    }
  }
  std::fputs(kernels::FormatGoldenFile(results).c_str(), stdout);
  return 0;
}

}  // namespace

int RunSelftest(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--print-golden") return PrintGolden();
    std::fputs(kUsage, a == "--help" ? stdout : stderr);
    return a == "--help" ? 0 : 2;
  }
  auto golden = kernels::ParseGoldenFile(kernels::EmbeddedGoldenFile());
  if (!golden.ok()) {
    std::fprintf(stderr, "selftest: %s\n", golden.status().ToString().c_str());
    return 1;
  }
  std::printf("LayerProof selftest, spec_version %d, %zu golden cases\n\n",
              kernels::kSpecVersion, golden->size());
  std::printf("%-8s | %-11s | %s\n", "backend", "ops checked",
              "bit-identical to golden");
  std::printf("---------+-------------+------------------------\n");
  bool all_ok = true;
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
    const bool ok = checked > 0 && matched == checked;
    all_ok = all_ok && ok;
    std::printf("%-8s | %11d | %s\n", std::string(b->name()).c_str(), checked,
                ok ? "yes" : "NO");
  }
  for (const std::string& f : failures)
    std::printf("  MISMATCH %s\n", f.c_str());
  std::printf("\n%s\n", all_ok ? "PASS: this machine reproduces every golden "
                                 "hash on every backend it has"
                               : "FAIL: see mismatches above");
  return all_ok ? 0 : 1;
}

}  // namespace layerproof::cli
