// What the two halves of report_bench share: its options, and the offline
// bundle verification half (report_bench_bundles.cc) that main's run
// (report_bench.cc) calls after the report generation half. The benchmark
// itself is described at the top of report_bench.cc.
#ifndef LAYERPROOF_BENCH_REPORT_BENCH_H_
#define LAYERPROOF_BENCH_REPORT_BENCH_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/model/model.h"

namespace layerproof::bench {

struct Options {
  std::vector<int64_t> sizes = {1000, 10000, 100000};
  std::string model_dir;  // holds small-seed1/
  int threads = 2;
  std::string out;
  int reps = 21;         // report rounds per size
  int bundle_reps = 41;  // bundle rounds per s
  bool quick = false;
};

// Section 2: serves and audits one request on `model` (databases under
// `tmp`), then times VerifyEvidenceBundle of its bundles against the
// verifier's own audit and a full forward, and emits the table.
void Bundles(const Options& o, const kernels::model::Model& model,
             kernels::Backend* backend, const std::filesystem::path& tmp);

}  // namespace layerproof::bench

#endif  // LAYERPROOF_BENCH_REPORT_BENCH_H_
