// The avx512 IsaOps table: the ISA-generic kernels of
// kernels/cpu/internal/simd_ops.h and simd_ops_attention.h instantiated for
// AVX-512 (Avx512OpsIsa) by simd_ops_table.h, plus the avx512 GEMM. Every entry
// is bit-identical to kernels/ref; see kernels/cpu/internal/isa_ops.h.
#include "kernels/cpu/internal/avx512_gemm.h"
#include "kernels/cpu/internal/isa_ops.h"
#include "kernels/cpu/internal/isa_prelude.h"

// The AVX-512 region: only code defined below is compiled for AVX-512.
// clang-format off
#include "kernels/cpu/internal/avx512_target_begin.h"
// clang-format on

#include "kernels/cpu/internal/avx512_ops_isa.h"
#include "kernels/cpu/internal/simd_ops_table.h"

namespace layerproof::kernels::cpu {

const IsaOps& Avx512Ops() {
  static const IsaOps ops =
      simd::MakeIsaOps<Avx512OpsIsa>(BackendKind::kAvx512, kAvx512GemmNAlign,
                                     Avx512Pack, Avx512Gemm, Avx512QuantOps());
  return ops;
}

}  // namespace layerproof::kernels::cpu

#include "kernels/cpu/internal/isa_target_end.h"
