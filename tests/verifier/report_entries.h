// Lookups into a compliance report JSON (docs/reports.md) for the report
// tests: tests/verifier/report_builder_test.cc and report_service_test.cc.
// Thread safety: pure functions.
#ifndef LAYERPROOF_TESTS_VERIFIER_REPORT_ENTRIES_H_
#define LAYERPROOF_TESTS_VERIFIER_REPORT_ENTRIES_H_

#include <gtest/gtest.h>

#include <string>

#include "nlohmann/json.hpp"

namespace layerproof::verifier::testing {

// The by_prover entry of `report` for prover `id`; a test failure and an
// empty (null) object when there is none.
inline const nlohmann::json& ProverEntry(const nlohmann::json& report,
                                         const std::string& id) {
  for (const nlohmann::json& p : report["by_prover"]) {
    if (p["prover_id"] == id) return p;
  }
  static const nlohmann::json none;
  ADD_FAILURE() << "no by_prover entry for " << id;
  return none;
}

}  // namespace layerproof::verifier::testing

#endif  // LAYERPROOF_TESTS_VERIFIER_REPORT_ENTRIES_H_
