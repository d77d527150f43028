#include "cli/engine_setup.h"

#include "kernels/dispatch.h"

namespace layerproof::cli {

using kernels::StatusOr;

StatusOr<LoadedEngine> LoadModel(const std::string& model_dir,
                                 const std::string& backend, int threads) {
  LoadedEngine e;
  if (backend.empty()) {
    LP_ASSIGN_OR_RETURN(e.backend, kernels::DefaultBackend());
  } else {
    LP_ASSIGN_OR_RETURN(kernels::BackendKind kind,
                        kernels::ParseBackendKind(backend));
    LP_ASSIGN_OR_RETURN(e.backend, kernels::GetBackend(kind));
  }
  if (threads > 0) e.backend->SetThreads(threads);
  LP_ASSIGN_OR_RETURN(e.model, kernels::model::Model::Load(model_dir));
  LP_ASSIGN_OR_RETURN(e.executor, kernels::model::MakeExecutor(e.backend));
  return e;
}

StatusOr<LoadedEngine> LoadEngine(const std::string& model_dir,
                                  const std::string& backend, int threads,
                                  bool full_context) {
  LP_ASSIGN_OR_RETURN(LoadedEngine e, LoadModel(model_dir, backend, threads));
  kernels::model::EngineOptions options;
  if (full_context) options.max_context = e.model->config().max_positions;
  LP_ASSIGN_OR_RETURN(e.engine, kernels::model::Engine::Create(
                                    *e.model, e.executor.get(), options));
  return e;
}
}  // namespace layerproof::cli
