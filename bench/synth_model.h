// The synthetic model a benchmark runs on: the preset's model with seed 1,
// loaded from `dir`, or synthesized there first when it is missing or is
// another model (the medium preset is ~1.7 GB, so benchmarks reuse it).
// Thread safety: call from one thread.
#ifndef LAYERPROOF_BENCH_SYNTH_MODEL_H_
#define LAYERPROOF_BENCH_SYNTH_MODEL_H_

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "kernels/model/model.h"
#include "kernels/model/synth.h"
#include "kernels/status.h"

namespace layerproof::bench {

inline kernels::StatusOr<std::unique_ptr<kernels::model::Model>>
LoadOrSynthesize(const std::string& preset, const std::string& dir) {
  namespace km = kernels::model;
  LP_ASSIGN_OR_RETURN(const km::ModelConfig want, km::SynthPreset(preset));
  if (std::filesystem::exists(dir + "/model.safetensors")) {
    auto m = km::Model::Load(dir);
    if (m.ok() && (*m)->config() == want) return std::move(*m);
  }
  std::fprintf(stderr, "synthesizing the %s model (seed 1) into %s ...\n",
               preset.c_str(), dir.c_str());
  km::SynthOptions so;
  so.seed = 1;
  LP_RETURN_IF_ERROR(km::SynthesizeModel(want, so, dir));
  return km::Model::Load(dir);
}

}  // namespace layerproof::bench

#endif  // LAYERPROOF_BENCH_SYNTH_MODEL_H_
