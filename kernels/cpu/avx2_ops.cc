// The avx2 IsaOps table: the ISA-generic kernels of
// kernels/cpu/internal/simd_ops.h and simd_ops_attention.h instantiated for
// AVX2 (Avx2OpsIsa) by simd_ops_table.h, plus the avx2 GEMM. Every entry is
// bit-identical to kernels/ref; see kernels/cpu/internal/isa_ops.h.
#include "kernels/cpu/internal/avx2_gemm.h"
#include "kernels/cpu/internal/isa_ops.h"
#include "kernels/cpu/internal/isa_prelude.h"

// The AVX2 region: only code defined below is compiled for AVX2.
// clang-format off
#include "kernels/cpu/internal/avx2_target_begin.h"
// clang-format on

#include "kernels/cpu/internal/avx2_ops_isa.h"
#include "kernels/cpu/internal/simd_ops_table.h"

namespace layerproof::kernels::cpu {

const IsaOps& Avx2Ops() {
  static const IsaOps ops = simd::MakeIsaOps<Avx2OpsIsa>(
      BackendKind::kAvx2, kAvx2GemmNAlign, Avx2Pack, Avx2Gemm, Avx2QuantOps());
  return ops;
}

}  // namespace layerproof::kernels::cpu

#include "kernels/cpu/internal/isa_target_end.h"
