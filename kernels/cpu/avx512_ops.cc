// The avx512 IsaOps table: the ISA-generic kernels of
// kernels/cpu/internal/simd_ops.h and simd_ops_attention.h instantiated for
// AVX-512 (Avx512OpsIsa), plus the avx512 GEMM. Every entry is bit-identical to
// kernels/ref; see kernels/cpu/internal/isa_ops.h.
#include <cstdint>
#include <memory>

#include "kernels/cpu/internal/avx512_gemm.h"
#include "kernels/cpu/internal/avx512_ops_isa.h"
#include "kernels/cpu/internal/isa_ops.h"
#include "kernels/cpu/internal/simd_ops.h"
#include "kernels/cpu/internal/simd_ops_attention.h"

namespace layerproof::kernels::cpu {
namespace {

using Isa = Avx512OpsIsa;

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

void Attention(const AttentionArgs& a, int64_t task_begin, int64_t task_end,
               float* scratch) {
  simd::AttentionTasks<Isa>(a, task_begin, task_end, [&](int64_t n) {
    return n <= a.n_kv ? scratch : ThreadScratch(n);
  });
}

}  // namespace

const IsaOps& Avx512Ops() {
  static const IsaOps ops = {
      .kind = BackendKind::kAvx512,
      .gemm_n_align = kAvx512GemmNAlign,
      .pack = Avx512Pack,
      .gemm = Avx512Gemm,
      .rmsnorm = simd::RmsNormRows<Isa>,
      .rope = simd::RopeRows<Isa>,
      .attention = Attention,
      .swiglu = simd::SwiGlu<Isa>,
      .softmax = simd::SoftmaxRows<Isa>,
      .add = simd::Add<Isa>,
      .embedding = simd::Embedding<Isa>,
      .argmax = simd::ArgmaxRows<Isa>,
  };
  return ops;
}

}  // namespace layerproof::kernels::cpu
