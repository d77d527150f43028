// The argument checks of the kernel ops, one function per op, shared by every
// place that runs the ops: Backend's public methods (backend.cc) and the
// model executors (kernels/model/cuda_executor.cc).
//
// Contract: each check returns OkStatus() or InvalidArgument worded
// "<op>: <arg>: <what>", naming the first bad argument in a fixed order, so
// every caller reports the same bad call with the same bytes. Pointers are
// checked for null and for their element type's natural alignment only;
// they are never read, except for the host arrays a check says it reads
// (Rope's positions, Embedding's ids), so device pointers may be passed for
// the others. Dimensions are bounded by kMaxDim and element counts by
// kMaxElements, so no byte-size or index arithmetic (at most 8 bytes per
// element) can overflow int64. Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_OP_CHECKS_H_
#define LAYERPROOF_KERNELS_OP_CHECKS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "kernels/backend.h"
#include "kernels/status.h"

namespace layerproof::kernels {

constexpr int64_t kMaxDim = int64_t{1} << 31;
constexpr int64_t kMaxElements = int64_t{1} << 40;

// InvalidArgument "<op>: <arg>: <what>".
Status BadArgument(std::string_view op, std::string_view arg,
                   const std::string& what);

// min <= v <= kMaxDim.
Status CheckDim(std::string_view op, std::string_view arg, int64_t v,
                int64_t min = 1);

// p is non-null and aligned for T.
template <typename T>
Status CheckPtr(std::string_view op, std::string_view arg, const T* p) {
  if (p == nullptr) return BadArgument(op, arg, "is null");
  if (reinterpret_cast<uintptr_t>(p) % alignof(T) != 0) {
    return BadArgument(op, arg,
                       "is misaligned: want " + std::to_string(alignof(T)) +
                           "-byte alignment");
  }
  return OkStatus();
}

// w.data is non-null, w.dtype is known, both dimensions pass CheckDim (as
// "<arg>.rows" / "<arg>.cols") and w holds at most kMaxElements elements.
Status CheckWeights(std::string_view op, std::string_view arg,
                    const WeightView& w);

// The checks of each op of kernels/backend.h. Parameters have the meanings
// Backend's ops give them; what a caller checks itself is named.

Status CheckPackWeightsArgs(const WeightView& w);

// bias may be null. The caller checks the weights themselves after this.
Status CheckGemmArgs(const float* x, int64_t m, const float* bias,
                     const float* y);

Status CheckRmsNormArgs(const float* x, int64_t rows, int64_t dim,
                        const WeightView& gamma, float eps, const float* y);

// Reads positions[0..rows) (host memory).
Status CheckRopeArgs(const float* x, int64_t rows, int64_t n_heads,
                     const int64_t* positions, const RopeTable& table);

Status CheckAttentionArgs(const AttentionArgs& a);

Status CheckSwiGluArgs(const float* gate, const float* up, int64_t n,
                       const float* y);

Status CheckSoftmaxArgs(const float* x, int64_t rows, int64_t n,
                        const float* y);

Status CheckAddArgs(const float* a, const float* b, int64_t n, const float* y);

// Reads ids[0..n_ids) (host memory).
Status CheckEmbeddingArgs(const WeightView& table, const int32_t* ids,
                          int64_t n_ids, const float* y);

Status CheckArgmaxArgs(const float* x, int64_t rows, int64_t n,
                       const int64_t* out);

}  // namespace layerproof::kernels

#endif  // LAYERPROOF_KERNELS_OP_CHECKS_H_
