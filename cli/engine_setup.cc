#include "cli/engine_setup.h"

#include <memory>
#include <mutex>

#include "cli/progress.h"
#include "kernels/dispatch.h"
#if defined(LAYERPROOF_WITH_TEXT)
#include "text/gguf_tokenizer_export.h"
#endif

namespace layerproof::cli {

using kernels::StatusOr;

StatusOr<LoadedEngine> LoadModel(const std::string& model_dir,
                                 const std::string& backend, int threads,
                                 bool progress) {
  LoadedEngine e;
  if (backend.empty()) {
    LP_ASSIGN_OR_RETURN(e.backend, kernels::DefaultBackend());
  } else {
    LP_ASSIGN_OR_RETURN(kernels::BackendKind kind,
                        kernels::ParseBackendKind(backend));
    LP_ASSIGN_OR_RETURN(e.backend, kernels::GetBackend(kind));
  }
  if (threads > 0) e.backend->SetThreads(threads);
  kernels::model::LoadOptions load;
  std::unique_ptr<ProgressBar> bar;  // made on the first call: only when
  std::mutex bar_mu;                 // the digest is not cached
  if (progress) {
    load.progress = [&bar, &bar_mu](int64_t done, int64_t total) {
      std::lock_guard<std::mutex> lock(bar_mu);
      if (!bar) {
        bar = std::make_unique<ProgressBar>("hashing weights", total >> 20,
                                            "MiB");
      }
      bar->Update(done >> 20);
    };
  }
  LP_ASSIGN_OR_RETURN(e.model, kernels::model::Model::Load(model_dir, load));
  bar.reset();
  LP_ASSIGN_OR_RETURN(e.executor, kernels::model::MakeExecutor(e.backend));
  return e;
}

StatusOr<LoadedEngine> LoadEngine(const std::string& model_dir,
                                  const std::string& backend, int threads,
                                  bool full_context, bool progress) {
  LP_ASSIGN_OR_RETURN(LoadedEngine e,
                      LoadModel(model_dir, backend, threads, progress));
  kernels::model::EngineOptions options;
  std::unique_ptr<ProgressBar> bar;
  if (progress) {
    bar = std::make_unique<ProgressBar>(
        "preparing weights", e.model->config().num_layers + 1, "blocks");
    options.prepare_progress = [&bar](int64_t done, int64_t) {
      bar->Update(done);
    };
  }
  if (full_context) options.max_context = e.model->config().max_positions;
  LP_ASSIGN_OR_RETURN(e.engine, kernels::model::Engine::Create(
                                    *e.model, e.executor.get(), options));
  return e;
}

StatusOr<kernels::model::QuantizeResult> QuantizeModel(
    const std::string& model_dir, kernels::DType type,
    const std::string& out_path, std::string* tokenizer_note) {
  std::optional<kernels::model::GgufTokenizerKeys> keys;
#if defined(LAYERPROOF_WITH_TEXT)
  auto k = text::GgufTokenizerKeysFor(model_dir);
  if (k.ok()) {
    keys = std::move(*k);
    tokenizer_note->clear();
  } else if (k.status().code() == kernels::StatusCode::kUnimplemented ||
             k.status().code() == kernels::StatusCode::kNotFound) {
    *tokenizer_note = k.status().message();
  } else {
    return k.status();  // a broken tokenizer.json: the copy would be too
  }
#else
  *tokenizer_note =
      "this build has no text/ (Oniguruma, utf8proc): no tokenizer.ggml.* "
      "keys";
#endif
  return kernels::model::QuantizeModelDir(model_dir, type, out_path,
                                          std::move(keys));
}

}  // namespace layerproof::cli
