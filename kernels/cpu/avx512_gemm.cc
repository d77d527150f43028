
#include "kernels/cpu/internal/avx512_gemm.h"

#include <memory>

#include "kernels/cpu/internal/isa_prelude.h"

// The AVX-512 region: only code defined below is compiled for AVX-512.
// clang-format off
#include "kernels/cpu/internal/avx512_target_begin.h"
// clang-format on

#include "kernels/cpu/internal/avx512_gemm_isa.h"
#include "kernels/cpu/internal/gemm_blocking.h"
#include "kernels/cpu/internal/gemm_kernels.h"
#include "kernels/cpu/internal/gemm_panels.h"

namespace layerproof::kernels::cpu {

const int64_t kAvx512GemmNAlign = Avx512GemmIsa::kNR;

std::unique_ptr<PackedWeights> Avx512Pack(const WeightView& w) {
  return std::make_unique<PanelPacked>(BackendKind::kAvx512, w,
                                       Avx512GemmIsa::kNR);
}

void Avx512Gemm(const float* x, int64_t m, const PackedWeights& w,
                const float* bias, float* y, int64_t n_begin, int64_t n_end) {
  GemmPanelColumns<PanelKernels<Avx512GemmIsa>>(x, m, w, bias, y, n_begin,
                                                n_end);
}

}  // namespace layerproof::kernels::cpu

#include "kernels/cpu/internal/isa_target_end.h"
