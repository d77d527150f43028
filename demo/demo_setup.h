// The set-up steps of `layerproof demo` (demo/demo.cc): stopping on a
// signal, the output folder, the model, and the kernels backend.
// Thread safety: see each declaration.
#ifndef LAYERPROOF_DEMO_DEMO_SETUP_H_
#define LAYERPROOF_DEMO_DEMO_SETUP_H_

#include <signal.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "kernels/backend.h"
#include "kernels/status.h"

namespace layerproof::demo {

// A stop request from SIGINT or SIGTERM. The constructor blocks both
// signals in the calling thread, and so in every thread made after it
// (construct it first), and starts one thread that receives them with
// sigwait. Thread safety: stop() and Wait() from any thread.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  const std::atomic<bool>& stop() const { return stop_; }
  // Blocks until a signal has arrived.
  void Wait() const;

 private:
  sigset_t set_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Makes `out` ready: created, or emptied of a previous demo's files (a
// marker file says the folder is a demo's). A non-empty folder that is
// not a demo's is FailedPrecondition and left alone.
absl::Status PrepareDemoOut(const std::string& out);

// Synthesises the small preset (seed 1) into `dir` when it holds no
// model.safetensors, with a progress bar unless `quiet`.
absl::Status EnsureDemoModel(const std::string& dir, bool quiet);

// Where `demo --quant` keeps the GGUF of `hf_dir` in `type`:
// HF_DIR-q4_0/model.gguf (beside the HF directory, with its tokenizer).
std::string DemoQuantModelPath(const std::string& hf_dir, kernels::DType type);
// Writes it (`model quantize`) unless it exists: the quantizers are
// deterministic, so a file written before is the same file.
absl::Status EnsureDemoQuantModel(const std::string& hf_dir,
                                  kernels::DType type, bool quiet);

// The backend named `name` ("" for the default: auto or
// LAYERPROOF_BACKEND), with `threads` (> 0) set on it.
kernels::StatusOr<kernels::Backend*> ResolveBackend(const std::string& name,
                                                    int64_t threads);

}  // namespace layerproof::demo

#endif  // LAYERPROOF_DEMO_DEMO_SETUP_H_
