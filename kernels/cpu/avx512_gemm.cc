// The AVX-512 fused-upcast GEMM/GEMV (docs/determinism.md §3.1, chunk-tree
// order): the ISA-generic micro-kernels of gemm_kernels.h instantiated for
// Avx512GemmIsa (panels of 32 columns, two zmm of outputs per row), run by
// the loop nest of gemm_blocking.h over the packing of gemm_panels.h. Each
// output's chunk partial is one fma chain over ascending k from +0, exactly
// as kernels/ref.
#include "kernels/cpu/internal/avx512_gemm.h"

#include <memory>

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
