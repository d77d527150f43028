// `layerproof demo`: the whole protocol on one machine (DESIGN §8). It
// synthesises the `small` model when absent, starts a verifier and two
// provers in this process on loopback over mutual TLS (demo/demo_cluster.h
// over cluster/local_cluster.h; prover-2 carries the DEMO-ONLY fault of
// demo/demo_fault.h), drives a client load whose receipts the clients check
// (demo/demo_load.h), waits for every drawn audit, localises the tampered
// layer with an all-layers audit, writes the signed report and an evidence
// bundle and verifies both (demo/demo_artifacts.h), prints a summary
// (demo/demo_summary.h) and shuts everything down in the order `layerproof
// serve` does. cli/demo.cc parses the flags into a DemoConfig.
// Thread safety: one RunDemo per process at a time (it redirects stderr
// and takes SIGINT and SIGTERM while it runs).
#ifndef LAYERPROOF_DEMO_DEMO_H_
#define LAYERPROOF_DEMO_DEMO_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "kernels/dtype.h"

namespace layerproof::demo {

struct DemoConfig {
  std::string out = "layerproof-demo";
  // The HF model folder; the small preset (seed 1) is synthesised there
  // when absent.
  std::string model = ".layerproof/models/small-seed1";
  // Serve the model quantized (its GGUF beside `model`).
  std::optional<kernels::DType> quant;
  int requests = 60;
  int concurrency = 8;
  uint32_t max_new_tokens = 24;
  double audit_rate = 0.3;  // in (0, 1]
  uint32_t layers_per_audit = 4;
  // Seeds the verifier's audit draws (verifier::SeededAuditSeeds) so that a
  // run is reproducible; empty: fresh randomness, as a real verifier draws.
  std::string audit_seed;
  // The block prover-2 tampers with; checked against the model (1..L-1).
  uint32_t tamper_layer = 3;
  int threads = 0;  // kernel threads; 0: the backend's default
  // Kernel backends by name ("" for the default).
  std::string backend, verifier_backend;
  bool keep_running = false;  // serve until SIGINT/SIGTERM after the summary
  bool json = false;          // the summary as one JSON object on stdout
};

// Runs the demo and returns the exit code: 0 when the honest prover is all
// PASS, the tamperer is caught and localised at the tampered layer, and the
// report and the bundle verify; 1 otherwise or on a runtime error. A usage
// error found only while running (an --out that is not a demo's, a tamper
// layer beyond the model) returns usage(message).
int RunDemo(const DemoConfig& config,
            const std::function<int(const std::string&)>& usage);

}  // namespace layerproof::demo

#endif  // LAYERPROOF_DEMO_DEMO_H_
