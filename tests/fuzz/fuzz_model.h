// The tiny synthetic model of the fuzz targets that need one (the evidence
// bundle's re-execution): the `tiny` preset, seed 7, written to a temporary
// directory on first use and removed at exit; an engine over it that
// accepts the model's whole max_positions, as a verifier's does.
#ifndef LAYERPROOF_TESTS_FUZZ_FUZZ_MODEL_H_
#define LAYERPROOF_TESTS_FUZZ_FUZZ_MODEL_H_

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "kernels/dispatch.h"
#include "kernels/model/engine.h"
#include "kernels/model/executor.h"
#include "kernels/model/model.h"
#include "kernels/model/synth.h"

namespace layerproof::fuzz {

struct FuzzModel {
  std::filesystem::path dir;
  std::unique_ptr<kernels::model::Model> model;
  std::unique_ptr<kernels::model::Executor> executor;
  std::unique_ptr<kernels::model::Engine> engine;
  std::string digest;  // the model digest's root, 32 bytes

  ~FuzzModel() {
    engine.reset();
    executor.reset();
    model.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

inline void DieUnless(const kernels::Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "fuzz model: %s: %s\n", what, s.ToString().c_str());
  std::abort();
}

inline const FuzzModel& TheFuzzModel() {
  static const std::unique_ptr<FuzzModel> m = [] {
    auto f = std::make_unique<FuzzModel>();
    f->dir = std::filesystem::temp_directory_path() /
             ("lp_fuzz_model_" + std::to_string(::getpid()));
    auto config = kernels::model::SynthPreset("tiny");
    DieUnless(config.status(), "preset");
    kernels::model::SynthOptions options;
    options.seed = 7;
    DieUnless(kernels::model::SynthesizeModel(*config, options, f->dir),
              "synthesize");
    auto model = kernels::model::Model::Load(f->dir.string());
    DieUnless(model.status(), "load");
    f->model = *std::move(model);
    auto backend = kernels::GetBackend(kernels::BackendKind::kRef);
    DieUnless(backend.status(), "backend");
    auto executor = kernels::model::MakeExecutor(*backend);
    DieUnless(executor.status(), "executor");
    f->executor = *std::move(executor);
    kernels::model::EngineOptions engine_options;
    engine_options.max_context = f->model->config().max_positions;
    auto engine = kernels::model::Engine::Create(*f->model, f->executor.get(),
                                                 engine_options);
    DieUnless(engine.status(), "engine");
    f->engine = *std::move(engine);
    const auto& root = f->model->digest().root;
    f->digest.assign(reinterpret_cast<const char*>(root.data()), root.size());
    return f;
  }();
  return *m;
}

}  // namespace layerproof::fuzz

#endif  // LAYERPROOF_TESTS_FUZZ_FUZZ_MODEL_H_
