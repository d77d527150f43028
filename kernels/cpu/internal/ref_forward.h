// IsaOps entries that forward to kernels/ref, for ops an ISA has not (yet)
// vectorised because they do not matter for speed, and the plain row-major
// PackedWeights such ISAs use. Bit-identical to ref by construction.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_REF_FORWARD_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_REF_FORWARD_H_

#include <cstring>
#include <memory>
#include <vector>

#include "kernels/backend.h"
#include "kernels/ref/ref_ops.h"

namespace layerproof::kernels::cpu {

// W[n][k] in the stored layout and dtype, copied.
class RowMajorPacked final : public PackedWeights {
 public:
  RowMajorPacked(BackendKind kind, const WeightView& w)
      : PackedWeights(kind, w.rows, w.cols, w.dtype),
        bytes_(static_cast<size_t>(w.rows * w.cols * DTypeSize(w.dtype))) {
    std::memcpy(bytes_.data(), w.data, bytes_.size());
  }
  WeightView view() const { return {bytes_.data(), dtype(), n(), k()}; }

 private:
  std::vector<unsigned char> bytes_;
};

inline void RefGemmSlice(const float* x, int64_t m, const PackedWeights& w,
                         const float* bias, float* y, int64_t n_begin,
                         int64_t n_end) {
  ref::GemmColumns(x, m, static_cast<const RowMajorPacked&>(w).view(), bias, y,
                   n_begin, n_end);
}

inline void RefAttentionTasks(const AttentionArgs& a, int64_t task_begin,
                              int64_t task_end, float* scratch) {
  for (int64_t t = task_begin; t < task_end; ++t) {
    ref::AttentionRowHead(a, t / a.n_heads, t % a.n_heads, scratch);
  }
}

inline void RefSoftmaxRows(const float* x, int64_t rows, int64_t n, float* y) {
  for (int64_t r = 0; r < rows; ++r) ref::SoftmaxRow(x + r * n, n, y + r * n);
}

inline void RefArgmaxRows(const float* x, int64_t rows, int64_t n,
                          int64_t* out) {
  for (int64_t r = 0; r < rows; ++r) out[r] = ref::ArgmaxRow(x + r * n, n);
}

}  // namespace layerproof::kernels::cpu

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_REF_FORWARD_H_
