#include "demo/demo_setup.h"

#include <pthread.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>

#include "cli/engine_setup.h"
#include "cli/progress.h"
#include "kernels/dispatch.h"
#include "kernels/model/quantize_model.h"
#include "kernels/model/synth.h"
#include "store/status.h"
#include "text/synthetic_tokenizer.h"

namespace layerproof::demo {
namespace {

using cli::ProgressBar;
using cli::QuantizeModel;

namespace fs = std::filesystem;

constexpr char kMarker[] = ".layerproof-demo";

}  // namespace

StopSignals::StopSignals() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  thread_ = std::thread([this] {
    int sig = 0;
    sigwait(&set_, &sig);
    stop_ = true;
  });
}

StopSignals::~StopSignals() {
  // Wakes the receiving thread when no signal came.
  if (!stop_) pthread_kill(thread_.native_handle(), SIGTERM);
  thread_.join();
}

void StopSignals::Wait() const {
  while (!stop_) std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

absl::Status PrepareDemoOut(const std::string& out) {
  std::error_code ec;
  if (fs::exists(out) && !fs::is_empty(out, ec)) {
    if (!fs::exists(fs::path(out) / kMarker)) {
      return absl::FailedPreconditionError(
          out +
          " is not empty and not a demo's output folder; choose "
          "another --out");
    }
    for (const auto& entry : fs::directory_iterator(out)) {
      fs::remove_all(entry.path(), ec);
    }
  }
  fs::create_directories(out, ec);
  std::ofstream(fs::path(out) / kMarker) << "layerproof demo output\n";
  if (!fs::exists(fs::path(out) / kMarker)) {
    return absl::PermissionDeniedError("cannot write into " + out);
  }
  return absl::OkStatus();
}

absl::Status EnsureDemoModel(const std::string& dir, bool quiet) {
  if (fs::exists(fs::path(dir) / "model.safetensors")) return absl::OkStatus();
  auto config = kernels::model::SynthPreset("small");
  if (!config.ok()) return store::ToAbslStatus(config.status());
  // The bar is made at the first callback, which says the total.
  std::unique_ptr<ProgressBar> bar;
  int64_t total_m = 0;
  kernels::model::SynthOptions options;
  options.seed = 1;
  options.progress = [&](int64_t done, int64_t total) {
    if (!bar) {
      total_m = (total + 999999) / 1000000;
      bar = std::make_unique<ProgressBar>("synthesising", total_m, "M params",
                                          quiet);
    }
    bar->Update(done == total ? total_m : done / 1000000);
  };
  const kernels::Status s = text::SynthesizeTextModel(*config, options, dir);
  if (bar) bar->Finish("small preset, seed 1, into " + dir);
  return store::ToAbslStatus(s);
}

std::string DemoQuantModelPath(const std::string& hf_dir, kernels::DType type) {
  std::string name(kernels::DTypeName(type));
  for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
  std::string dir = fs::path(hf_dir).lexically_normal().string();
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return (fs::path(dir + "-" + name) / "model.gguf").string();
}

absl::Status EnsureDemoQuantModel(const std::string& hf_dir,
                                  kernels::DType type, bool quiet) {
  const std::string path = DemoQuantModelPath(hf_dir, type);
  if (fs::exists(path)) return absl::OkStatus();
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  ProgressBar bar("quantizing", 1, "", quiet);
  std::string tokenizer_note;  // the demo's synthetic tokenizer has keys
  auto result = QuantizeModel(hf_dir, type, path, &tokenizer_note);
  if (!result.ok()) return store::ToAbslStatus(result.status());
  bar.Update(1);
  bar.Finish(std::string(kernels::DTypeName(type)) + " into " + path);
  return absl::OkStatus();
}

kernels::StatusOr<kernels::Backend*> ResolveBackend(const std::string& name,
                                                    int64_t threads) {
  kernels::Backend* backend = nullptr;
  if (name.empty()) {
    LP_ASSIGN_OR_RETURN(backend, kernels::DefaultBackend());
  } else {
    LP_ASSIGN_OR_RETURN(kernels::BackendKind kind,
                        kernels::ParseBackendKind(name));
    LP_ASSIGN_OR_RETURN(backend, kernels::GetBackend(kind));
  }
  if (threads > 0) backend->SetThreads(static_cast<int>(threads));
  return backend;
}

}  // namespace layerproof::demo
