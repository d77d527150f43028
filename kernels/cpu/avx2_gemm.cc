
#include "kernels/cpu/internal/avx2_gemm.h"

#include <memory>

#include "kernels/cpu/internal/isa_prelude.h"

// The AVX2 region: only code defined below is compiled for AVX2.
// clang-format off
#include "kernels/cpu/internal/avx2_target_begin.h"
// clang-format on

#include "kernels/cpu/internal/avx2_gemm_isa.h"
#include "kernels/cpu/internal/gemm_blocking.h"
#include "kernels/cpu/internal/gemm_kernels.h"
#include "kernels/cpu/internal/gemm_panels.h"

namespace layerproof::kernels::cpu {

const int64_t kAvx2GemmNAlign = Avx2GemmIsa::kNR;

std::unique_ptr<PackedWeights> Avx2Pack(const WeightView& w) {
  return std::make_unique<PanelPacked>(BackendKind::kAvx2, w, Avx2GemmIsa::kNR);
}

void Avx2Gemm(const float* x, int64_t m, const PackedWeights& w,
              const float* bias, float* y, int64_t n_begin, int64_t n_end) {
  GemmPanelColumns<PanelKernels<Avx2GemmIsa>>(x, m, w, bias, y, n_begin, n_end);
}

}  // namespace layerproof::kernels::cpu

#include "kernels/cpu/internal/isa_target_end.h"
