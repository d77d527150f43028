// The IsaOps table of one SIMD ISA, written once: the ISA-generic kernels of
// simd_ops.h and simd_ops_attention.h instantiated for an ops vocabulary
// (Avx512OpsIsa, Avx2OpsIsa), plus that ISA's GEMM. Used by
// kernels/cpu/avx512_ops.cc and avx2_ops.cc. Every entry keeps the reduction
// order of its kernel (docs/determinism.md §3.1 for the GEMM, §3.2 Lane32 for
// the row ops), so it is bit-identical to kernels/ref; see isa_ops.h.
//
// Templated on the ISA and in an unnamed namespace, so each ISA's translation
// unit gets its own copy (no inline function is shared between TUs compiled
// with different ISA flags). Thread safety: the attention scratch is
// thread_local; everything else is pure.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_SIMD_OPS_TABLE_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_SIMD_OPS_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/backend.h"
#include "kernels/cpu/internal/isa_ops.h"
#include "kernels/cpu/internal/simd_ops.h"
#include "kernels/cpu/internal/simd_ops_attention.h"

namespace layerproof::kernels::cpu::simd {
namespace {  // NOLINT(build/namespaces): see the file comment.

// Attention scratch beyond the caller's: grows to the largest request, freed
// at thread exit.
float* ThreadScratch(int64_t n) {
  struct Buffer {
    std::unique_ptr<float[]> data;
    int64_t size = 0;
  };
  thread_local Buffer buffer;
  if (buffer.size < n) {
    buffer.data.reset(new float[static_cast<size_t>(n)]);
    buffer.size = n;
  }
  return buffer.data.get();
}

template <class Isa>
void AttentionWithScratch(const AttentionArgs& a, int64_t task_begin,
                          int64_t task_end, float* scratch) {
  AttentionTasks<Isa>(a, task_begin, task_end, [&](int64_t n) {
    return n <= a.n_kv ? scratch : ThreadScratch(n);
  });
}

// The table of `kind`: the simd kernels for Isa and the given GEMM (its
// panel width, packing and column-slice entry) and quantized GEMM.
template <class Isa>
IsaOps MakeIsaOps(BackendKind kind, int64_t gemm_n_align,
                  decltype(IsaOps::pack) pack, decltype(IsaOps::gemm) gemm,
                  const QuantGemmOps& quant) {
  return {
      .kind = kind,
      .gemm_n_align = gemm_n_align,
      .pack = pack,
      .gemm = gemm,
      .quant = &quant,
      .rmsnorm = RmsNormRows<Isa>,
      .rope = RopeRows<Isa>,
      .attention = AttentionWithScratch<Isa>,
      .swiglu = SwiGlu<Isa>,
      .softmax = SoftmaxRows<Isa>,
      .add = Add<Isa>,
      .embedding = Embedding<Isa>,
      .argmax = ArgmaxRows<Isa>,
  };
}

}  // namespace
}  // namespace layerproof::kernels::cpu::simd

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_SIMD_OPS_TABLE_H_
