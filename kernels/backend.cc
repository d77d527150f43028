#include "kernels/backend.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "kernels/fp_env.h"

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

namespace {

// Each dimension, and each matrix's element count, is bounded so that no
// byte-size or index arithmetic (at most 8 bytes per element) can overflow
// int64.
constexpr int64_t kMaxDim = int64_t{1} << 31;
constexpr int64_t kMaxElements = int64_t{1} << 40;

Status Bad(std::string_view op, std::string_view arg, std::string what) {
  return InvalidArgument(std::string(op) + ": " + std::string(arg) + ": " +
                         what);
}

Status CheckDim(std::string_view op, std::string_view arg, int64_t v,
                int64_t min = 1) {
  if (v < min || v > kMaxDim) {
    return Bad(op, arg,
               "got " + std::to_string(v) + ", want " + std::to_string(min) +
                   " <= value <= " + std::to_string(kMaxDim));
  }
  return OkStatus();
}

template <typename T>
Status CheckPtr(std::string_view op, std::string_view arg, const T* p) {
  if (p == nullptr) return Bad(op, arg, "is null");
  if (reinterpret_cast<uintptr_t>(p) % alignof(T) != 0) {
    return Bad(op, arg,
               "is misaligned: want " + std::to_string(alignof(T)) +
                   "-byte alignment");
  }
  return OkStatus();
}

Status CheckWeights(std::string_view op, std::string_view arg,
                    const WeightView& w) {
  if (w.data == nullptr) return Bad(op, arg, "data is null");
  if (w.dtype != DType::kF32 && w.dtype != DType::kBF16 &&
      w.dtype != DType::kF16) {
    return Bad(op, arg, "unknown dtype " + std::to_string(int(w.dtype)));
  }
  LP_RETURN_IF_ERROR(CheckDim(op, std::string(arg) + ".rows", w.rows));
  LP_RETURN_IF_ERROR(CheckDim(op, std::string(arg) + ".cols", w.cols));
  if (w.rows * w.cols > kMaxElements) {
    return Bad(op, arg,
               std::to_string(w.rows) + "x" + std::to_string(w.cols) +
                   " elements, want at most " + std::to_string(kMaxElements));
  }
  return OkStatus();
}

}  // namespace

StatusOr<std::unique_ptr<PackedWeights>> Backend::PackWeights(
    const WeightView& w) {
  LP_RETURN_IF_ERROR(CheckWeights("PackWeights", "w", w));
  FpEnvGuard guard;  // every op runs in the contract FP environment
  return PackWeightsImpl(w);
}

Status Backend::Gemm(const float* x, int64_t m, const PackedWeights& w,
                     const float* bias, float* y) {
  constexpr std::string_view op = "Gemm";
  LP_RETURN_IF_ERROR(CheckPtr(op, "x", x));
  LP_RETURN_IF_ERROR(CheckPtr(op, "y", y));
  LP_RETURN_IF_ERROR(CheckDim(op, "m", m));
  if (bias != nullptr) LP_RETURN_IF_ERROR(CheckPtr(op, "bias", bias));
  if (w.backend() != kind()) {
    return Bad(op, "w",
               "packed for backend " + std::string(BackendName(w.backend())) +
                   ", not " + std::string(name()));
  }
  FpEnvGuard guard;  // every op runs in the contract FP environment
  return GemmImpl(x, m, w, bias, y);
}

Status Backend::RmsNorm(const float* x, int64_t rows, int64_t dim,
                        const WeightView& gamma, float eps, float* y) {
  constexpr std::string_view op = "RmsNorm";
  LP_RETURN_IF_ERROR(CheckPtr(op, "x", x));
  LP_RETURN_IF_ERROR(CheckPtr(op, "y", y));
  LP_RETURN_IF_ERROR(CheckDim(op, "rows", rows));
  LP_RETURN_IF_ERROR(CheckDim(op, "dim", dim));
  LP_RETURN_IF_ERROR(CheckWeights(op, "gamma", gamma));
  if (gamma.rows != 1 || gamma.cols != dim) {
    return Bad(op, "gamma",
               "shape " + std::to_string(gamma.rows) + "x" +
                   std::to_string(gamma.cols) + ", want 1x" +
                   std::to_string(dim));
  }
  if (!(eps >= 0.0f) || eps == INFINITY) {
    return Bad(op, "eps", "got " + std::to_string(eps) + ", want finite >= 0");
  }
  FpEnvGuard guard;  // every op runs in the contract FP environment
  return RmsNormImpl(x, rows, dim, gamma, eps, y);
}

Status Backend::Rope(float* x, int64_t rows, int64_t n_heads,
                     const int64_t* positions, const RopeTable& table) {
  constexpr std::string_view op = "Rope";
  LP_RETURN_IF_ERROR(CheckPtr(op, "x", x));
  LP_RETURN_IF_ERROR(CheckPtr(op, "positions", positions));
  LP_RETURN_IF_ERROR(CheckDim(op, "rows", rows));
  LP_RETURN_IF_ERROR(CheckDim(op, "n_heads", n_heads));
  const int64_t half = table.head_dim / 2;
  if (table.head_dim < 2 || table.head_dim % 2 != 0 ||
      table.max_positions < 1 ||
      table.cos.size() != size_t(table.max_positions * half) ||
      table.sin.size() != table.cos.size()) {
    return Bad(op, "table",
               "malformed (head_dim " + std::to_string(table.head_dim) +
                   ", max_positions " + std::to_string(table.max_positions) +
                   ")");
  }
  for (int64_t r = 0; r < rows; ++r) {
    if (positions[r] < 0 || positions[r] >= table.max_positions) {
      return Bad(op, "positions[" + std::to_string(r) + "]",
                 "got " + std::to_string(positions[r]) + ", want 0 <= p < " +
                     std::to_string(table.max_positions));
    }
  }
  FpEnvGuard guard;  // every op runs in the contract FP environment
  return RopeImpl(x, rows, n_heads, positions, table);
}

Status Backend::Attention(const AttentionArgs& a) {
  constexpr std::string_view op = "Attention";
  LP_RETURN_IF_ERROR(CheckPtr(op, "q", a.q));
  LP_RETURN_IF_ERROR(CheckPtr(op, "k", a.k));
  LP_RETURN_IF_ERROR(CheckPtr(op, "v", a.v));
  LP_RETURN_IF_ERROR(CheckPtr(op, "out", a.out));
  LP_RETURN_IF_ERROR(CheckDim(op, "nq", a.nq));
  LP_RETURN_IF_ERROR(CheckDim(op, "q_pos0", a.q_pos0, 0));
  LP_RETURN_IF_ERROR(CheckDim(op, "n_kv", a.n_kv));
  LP_RETURN_IF_ERROR(CheckDim(op, "n_heads", a.n_heads));
  LP_RETURN_IF_ERROR(CheckDim(op, "n_kv_heads", a.n_kv_heads));
  LP_RETURN_IF_ERROR(CheckDim(op, "head_dim", a.head_dim));
  if (a.n_heads % a.n_kv_heads != 0) {
    return Bad(op, "n_heads",
               "got " + std::to_string(a.n_heads) +
                   ", want a multiple of n_kv_heads " +
                   std::to_string(a.n_kv_heads));
  }
  if (a.q_pos0 + a.nq > a.n_kv) {
    return Bad(op, "n_kv",
               "got " + std::to_string(a.n_kv) + ", want >= q_pos0 + nq = " +
                   std::to_string(a.q_pos0 + a.nq));
  }
  FpEnvGuard guard;  // every op runs in the contract FP environment
  return AttentionImpl(a);
}

Status Backend::SwiGlu(const float* gate, const float* up, int64_t n,
                       float* y) {
  constexpr std::string_view op = "SwiGlu";
  LP_RETURN_IF_ERROR(CheckPtr(op, "gate", gate));
  LP_RETURN_IF_ERROR(CheckPtr(op, "up", up));
  LP_RETURN_IF_ERROR(CheckPtr(op, "y", y));
  LP_RETURN_IF_ERROR(CheckDim(op, "n", n));
  FpEnvGuard guard;  // every op runs in the contract FP environment
  return SwiGluImpl(gate, up, n, y);
}

Status Backend::Softmax(const float* x, int64_t rows, int64_t n, float* y) {
  constexpr std::string_view op = "Softmax";
  LP_RETURN_IF_ERROR(CheckPtr(op, "x", x));
  LP_RETURN_IF_ERROR(CheckPtr(op, "y", y));
  LP_RETURN_IF_ERROR(CheckDim(op, "rows", rows));
  LP_RETURN_IF_ERROR(CheckDim(op, "n", n));
  FpEnvGuard guard;  // every op runs in the contract FP environment
  return SoftmaxImpl(x, rows, n, y);
}

Status Backend::Add(const float* a, const float* b, int64_t n, float* y) {
  constexpr std::string_view op = "Add";
  LP_RETURN_IF_ERROR(CheckPtr(op, "a", a));
  LP_RETURN_IF_ERROR(CheckPtr(op, "b", b));
  LP_RETURN_IF_ERROR(CheckPtr(op, "y", y));
  LP_RETURN_IF_ERROR(CheckDim(op, "n", n));
  FpEnvGuard guard;  // every op runs in the contract FP environment
  return AddImpl(a, b, n, y);
}

Status Backend::Embedding(const WeightView& table, const int32_t* ids,
                          int64_t n_ids, float* y) {
  constexpr std::string_view op = "Embedding";
  LP_RETURN_IF_ERROR(CheckWeights(op, "table", table));
  LP_RETURN_IF_ERROR(CheckPtr(op, "ids", ids));
  LP_RETURN_IF_ERROR(CheckPtr(op, "y", y));
  LP_RETURN_IF_ERROR(CheckDim(op, "n_ids", n_ids));
  for (int64_t i = 0; i < n_ids; ++i) {
    if (ids[i] < 0 || ids[i] >= table.rows) {
      return Bad(op, "ids[" + std::to_string(i) + "]",
                 "got " + std::to_string(ids[i]) + ", want 0 <= id < " +
                     std::to_string(table.rows));
    }
  }
  FpEnvGuard guard;  // every op runs in the contract FP environment
  return EmbeddingImpl(table, ids, n_ids, y);
}

Status Backend::Argmax(const float* x, int64_t rows, int64_t n, int64_t* out) {
  constexpr std::string_view op = "Argmax";
  LP_RETURN_IF_ERROR(CheckPtr(op, "x", x));
  LP_RETURN_IF_ERROR(CheckPtr(op, "out", out));
  LP_RETURN_IF_ERROR(CheckDim(op, "rows", rows));
  LP_RETURN_IF_ERROR(CheckDim(op, "n", n));
  FpEnvGuard guard;  // every op runs in the contract FP environment
  return ArgmaxImpl(x, rows, n, out);
}

}  // namespace layerproof::kernels
