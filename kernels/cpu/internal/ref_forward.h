// IsaOps entries that forward to kernels/ref, for ops an ISA has not
// vectorised because they do not matter for speed. Bit-identical to ref by
// construction.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_REF_FORWARD_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_REF_FORWARD_H_

#include <cstdint>

#include "kernels/ref/ref_ops.h"

namespace layerproof::kernels::cpu {

inline void RefArgmaxRows(const float* x, int64_t rows, int64_t n,
                          int64_t* out) {
  for (int64_t r = 0; r < rows; ++r) out[r] = ref::ArgmaxRow(x + r * n, n);
}

}  // namespace layerproof::kernels::cpu

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_REF_FORWARD_H_
