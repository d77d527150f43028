#include "kernels/backend.h"

#include <cstdint>
#include <string>

#include "kernels/fp_env.h"
#include "kernels/op_checks.h"

namespace layerproof::kernels {

std::string_view BackendName(BackendKind kind) {
  switch (kind) {
    case BackendKind::kRef:
      return "ref";
    case BackendKind::kAvx2:
      return "avx2";
    case BackendKind::kAvx512:
      return "avx512";
    case BackendKind::kNeon:
      return "neon";
    case BackendKind::kCuda:
      return "cuda";
  }
  return "?";
}

StatusOr<std::unique_ptr<PackedWeights>> Backend::PackWeights(
    const WeightView& w) {
  LP_RETURN_IF_ERROR(CheckPackWeightsArgs(w));
  FpEnvGuard guard;  // every op runs in the contract FP environment
  return PackWeightsImpl(w);
}

Status Backend::Gemm(const float* x, int64_t m, const PackedWeights& w,
                     const float* bias, float* y) {
  LP_RETURN_IF_ERROR(CheckGemmArgs(x, m, bias, y));
  if (w.backend() != kind()) {
    return BadArgument("Gemm", "w",
                       "packed for backend " +
                           std::string(BackendName(w.backend())) + ", not " +
                           std::string(name()));
  }
  FpEnvGuard guard;  // every op runs in the contract FP environment
  return GemmImpl(x, m, w, bias, y);
}

Status Backend::RmsNorm(const float* x, int64_t rows, int64_t dim,
                        const WeightView& gamma, float eps, float* y) {
  LP_RETURN_IF_ERROR(CheckRmsNormArgs(x, rows, dim, gamma, eps, y));
  FpEnvGuard guard;  // every op runs in the contract FP environment
  return RmsNormImpl(x, rows, dim, gamma, eps, y);
}

Status Backend::Rope(float* x, int64_t rows, int64_t n_heads,
                     const int64_t* positions, const RopeTable& table) {
  LP_RETURN_IF_ERROR(CheckRopeArgs(x, rows, n_heads, positions, table));
  FpEnvGuard guard;  // every op runs in the contract FP environment
  return RopeImpl(x, rows, n_heads, positions, table);
}

Status Backend::Attention(const AttentionArgs& a) {
  LP_RETURN_IF_ERROR(CheckAttentionArgs(a));
  FpEnvGuard guard;  // every op runs in the contract FP environment
  return AttentionImpl(a);
}

Status Backend::SwiGlu(const float* gate, const float* up, int64_t n,
                       float* y) {
  LP_RETURN_IF_ERROR(CheckSwiGluArgs(gate, up, n, y));
  FpEnvGuard guard;  // every op runs in the contract FP environment
  return SwiGluImpl(gate, up, n, y);
}

Status Backend::Softmax(const float* x, int64_t rows, int64_t n, float* y) {
  LP_RETURN_IF_ERROR(CheckSoftmaxArgs(x, rows, n, y));
  FpEnvGuard guard;  // every op runs in the contract FP environment
  return SoftmaxImpl(x, rows, n, y);
}

Status Backend::Add(const float* a, const float* b, int64_t n, float* y) {
  LP_RETURN_IF_ERROR(CheckAddArgs(a, b, n, y));
  FpEnvGuard guard;  // every op runs in the contract FP environment
  return AddImpl(a, b, n, y);
}

Status Backend::Embedding(const WeightView& table, const int32_t* ids,
                          int64_t n_ids, float* y) {
  LP_RETURN_IF_ERROR(CheckEmbeddingArgs(table, ids, n_ids, y));
  FpEnvGuard guard;  // every op runs in the contract FP environment
  return EmbeddingImpl(table, ids, n_ids, y);
}

Status Backend::Argmax(const float* x, int64_t rows, int64_t n, int64_t* out) {
  LP_RETURN_IF_ERROR(CheckArgmaxArgs(x, rows, n, out));
  FpEnvGuard guard;  // every op runs in the contract FP environment
  return ArgmaxImpl(x, rows, n, out);
}

}  // namespace layerproof::kernels
