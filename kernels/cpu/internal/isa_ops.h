// The per-ISA kernels behind the one CPU backend class (cpu_backend.cc).
//
// Each ISA (AVX2, AVX-512, NEON) fills one IsaOps table in its own
// translation units, compiled with that ISA's flags. CpuBackend cuts each op
// into tasks and calls these on slices from its thread pool; every entry
// computes whole outputs, so the cut never changes a bit, and must be
// bit-identical to kernels/ref for the slice it is given. Entries that do not
// matter for speed may forward to kernels/ref. Arguments arrive validated.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_ISA_OPS_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_ISA_OPS_H_

#include <cstdint>
#include <memory>

#include "kernels/backend.h"
#include "kernels/cpu/internal/quant_packed.h"

namespace layerproof::kernels::cpu {

struct IsaOps {
  BackendKind kind;
  // Gemm column slices start at multiples of this (the packed panel width).
  int64_t gemm_n_align;
  std::unique_ptr<PackedWeights> (*pack)(const WeightView& w);
  // Columns [n_begin, n_end) of y[m][n] for all m rows.
  void (*gemm)(const float* x, int64_t m, const PackedWeights& w,
               const float* bias, float* y, int64_t n_begin, int64_t n_end);
  // The block-quantized GEMM (pack and gemm for quantized dtypes).
  const QuantGemmOps* quant;
  void (*rmsnorm)(const float* x, int64_t rows, int64_t dim,
                  const WeightView& gamma, float eps, float* y);
  void (*rope)(float* x, int64_t rows, int64_t n_heads,
               const int64_t* positions, const RopeTable& table);
  // (row, head) tasks [task_begin, task_end), task = row * n_heads + head.
  // scratch holds at least n_kv floats, owned by the calling thread.
  void (*attention)(const AttentionArgs& a, int64_t task_begin,
                    int64_t task_end, float* scratch);
  void (*swiglu)(const float* gate, const float* up, int64_t n, float* y);
  void (*softmax)(const float* x, int64_t rows, int64_t n, float* y);
  void (*add)(const float* a, const float* b, int64_t n, float* y);
  void (*embedding)(const WeightView& table, const int32_t* ids, int64_t n_ids,
                    float* y);
  void (*argmax)(const float* x, int64_t rows, int64_t n, int64_t* out);
};

// Defined only in builds for the matching architecture.
const IsaOps& Avx2Ops();
const IsaOps& Avx512Ops();
const IsaOps& NeonOps();

}  // namespace layerproof::kernels::cpu

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_ISA_OPS_H_
