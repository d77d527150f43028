// Loading a model and building an engine on a named backend, shared by the
// commands that run the model.
#ifndef LAYERPROOF_CLI_ENGINE_SETUP_H_
#define LAYERPROOF_CLI_ENGINE_SETUP_H_

#include <memory>
#include <string>

#include "kernels/model/engine.h"
#include "kernels/model/executor.h"
#include "kernels/model/model.h"
#include "kernels/model/quantize_model.h"
#include "kernels/status.h"

namespace layerproof::cli {

struct LoadedEngine {
  std::unique_ptr<kernels::model::Model> model;
  std::unique_ptr<kernels::model::Executor> executor;
  std::unique_ptr<kernels::model::Engine> engine;
  kernels::Backend* backend = nullptr;
};

// The model and an executor on `backend` (a name for ParseBackendKind, or
// "" for the default: auto or LAYERPROOF_BACKEND), without an engine: for
// callers that build their own (the prover node). threads: 0 keeps the
// backend's default. LoadedEngine::engine is null.
// With `progress`, long steps (hashing weights whose digest is not
// cached, preparing them for the backend) show a bar on stderr.
kernels::StatusOr<LoadedEngine> LoadModel(const std::string& model_dir,
                                          const std::string& backend,
                                          int threads, bool progress = false);

// LoadModel and an engine over it (the engine prepares the weights). With
// `full_context` the engine accepts the model's whole max_positions (a
// verifier must re-execute whatever a prover may serve); otherwise the
// engine's default cap applies.
kernels::StatusOr<LoadedEngine> LoadEngine(const std::string& model_dir,
                                           const std::string& backend,
                                           int threads,
                                           bool full_context = false,
                                           bool progress = false);

// `model quantize` (and demo --quant): kernels::model::QuantizeModelDir,
// writing the tokenizer into the GGUF as tokenizer.ggml.* keys
// (text::GgufTokenizerKeysFor) when text/ is built in and llama.cpp can
// reproduce the tokenizer, so llama.cpp loads the file too. Otherwise the
// file has no such keys and *tokenizer_note says why (LayerProof still
// reads the tokenizer.json copied beside it); empty when the keys were
// written.
kernels::StatusOr<kernels::model::QuantizeResult> QuantizeModel(
    const std::string& model_dir, kernels::DType type,
    const std::string& out_path, std::string* tokenizer_note);

}  // namespace layerproof::cli

#endif  // LAYERPROOF_CLI_ENGINE_SETUP_H_
