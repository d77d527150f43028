#include "kernels/op_checks.h"

#include <cmath>
#include <cstdint>
#include <string>

namespace layerproof::kernels {

Status BadArgument(std::string_view op, std::string_view arg,
                   const std::string& what) {
  return InvalidArgument(std::string(op) + ": " + std::string(arg) + ": " +
                         what);
}

Status CheckDim(std::string_view op, std::string_view arg, int64_t v,
                int64_t min) {
  if (v < min || v > kMaxDim) {
    return BadArgument(op, arg,
                       "got " + std::to_string(v) + ", want " +
                           std::to_string(min) +
                           " <= value <= " + std::to_string(kMaxDim));
  }
  return OkStatus();
}

Status CheckWeights(std::string_view op, std::string_view arg,
                    const WeightView& w) {
  if (w.data == nullptr) return BadArgument(op, arg, "data is null");
  if (!IsKnownDType(w.dtype)) {
    return BadArgument(op, arg,
                       "unknown dtype " + std::to_string(int(w.dtype)));
  }
  LP_RETURN_IF_ERROR(CheckDim(op, std::string(arg) + ".rows", w.rows));
  LP_RETURN_IF_ERROR(CheckDim(op, std::string(arg) + ".cols", w.cols));
  if (w.cols % BlockElems(w.dtype) != 0) {
    return BadArgument(op, std::string(arg) + ".cols",
                       "got " + std::to_string(w.cols) +
                           ", want a multiple of " +
                           std::to_string(BlockElems(w.dtype)) + " (the " +
                           std::string(DTypeName(w.dtype)) + " block size)");
  }
  if (w.rows * w.cols > kMaxElements) {
    return BadArgument(op, arg,
                       std::to_string(w.rows) + "x" + std::to_string(w.cols) +
                           " elements, want at most " +
                           std::to_string(kMaxElements));
  }
  return OkStatus();
}

namespace {

// An elementwise op y[i] = f(a[i], b[i]) for i < n.
Status CheckElementwiseArgs(std::string_view op, std::string_view a_name,
                            const float* a, std::string_view b_name,
                            const float* b, int64_t n, const float* y) {
  LP_RETURN_IF_ERROR(CheckPtr(op, a_name, a));
  LP_RETURN_IF_ERROR(CheckPtr(op, b_name, b));
  LP_RETURN_IF_ERROR(CheckPtr(op, "y", y));
  return CheckDim(op, "n", n);
}

// A row-wise op over x[rows][n] writing `out`.
template <typename Out>
Status CheckRowwiseArgs(std::string_view op, const float* x, int64_t rows,
                        int64_t n, std::string_view out_name, const Out* out) {
  LP_RETURN_IF_ERROR(CheckPtr(op, "x", x));
  LP_RETURN_IF_ERROR(CheckPtr(op, out_name, out));
  LP_RETURN_IF_ERROR(CheckDim(op, "rows", rows));
  return CheckDim(op, "n", n);
}

}  // namespace

Status CheckPackWeightsArgs(const WeightView& w) {
  return CheckWeights("PackWeights", "w", w);
}

Status CheckGemmArgs(const float* x, int64_t m, const float* bias,
                     const float* y) {
  constexpr std::string_view op = "Gemm";
  LP_RETURN_IF_ERROR(CheckPtr(op, "x", x));
  LP_RETURN_IF_ERROR(CheckPtr(op, "y", y));
  LP_RETURN_IF_ERROR(CheckDim(op, "m", m));
  if (bias != nullptr) LP_RETURN_IF_ERROR(CheckPtr(op, "bias", bias));
  return OkStatus();
}

Status CheckRmsNormArgs(const float* x, int64_t rows, int64_t dim,
                        const WeightView& gamma, float eps, const float* y) {
  constexpr std::string_view op = "RmsNorm";
  LP_RETURN_IF_ERROR(CheckPtr(op, "x", x));
  LP_RETURN_IF_ERROR(CheckPtr(op, "y", y));
  LP_RETURN_IF_ERROR(CheckDim(op, "rows", rows));
  LP_RETURN_IF_ERROR(CheckDim(op, "dim", dim));
  LP_RETURN_IF_ERROR(CheckWeights(op, "gamma", gamma));
  if (IsBlockQuantized(gamma.dtype)) {
    return BadArgument(op, "gamma",
                       "dtype " + std::string(DTypeName(gamma.dtype)) +
                           ", want F32, BF16 or F16");
  }
  if (gamma.rows != 1 || gamma.cols != dim) {
    return BadArgument(op, "gamma",
                       "shape " + std::to_string(gamma.rows) + "x" +
                           std::to_string(gamma.cols) + ", want 1x" +
                           std::to_string(dim));
  }
  if (!(eps >= 0.0f) || eps == INFINITY) {
    return BadArgument(op, "eps",
                       "got " + std::to_string(eps) + ", want finite >= 0");
  }
  return OkStatus();
}

Status CheckRopeArgs(const float* x, int64_t rows, int64_t n_heads,
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
    return BadArgument(op, "table",
                       "malformed (head_dim " + std::to_string(table.head_dim) +
                           ", max_positions " +
                           std::to_string(table.max_positions) + ")");
  }
  for (int64_t r = 0; r < rows; ++r) {
    if (positions[r] < 0 || positions[r] >= table.max_positions) {
      return BadArgument(op, "positions[" + std::to_string(r) + "]",
                         "got " + std::to_string(positions[r]) +
                             ", want 0 <= p < " +
                             std::to_string(table.max_positions));
    }
  }
  return OkStatus();
}

Status CheckAttentionArgs(const AttentionArgs& a) {
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
    return BadArgument(op, "n_heads",
                       "got " + std::to_string(a.n_heads) +
                           ", want a multiple of n_kv_heads " +
                           std::to_string(a.n_kv_heads));
  }
  if (a.q_pos0 + a.nq > a.n_kv) {
    return BadArgument(
        op, "n_kv",
        "got " + std::to_string(a.n_kv) +
            ", want >= q_pos0 + nq = " + std::to_string(a.q_pos0 + a.nq));
  }
  return OkStatus();
}

Status CheckSwiGluArgs(const float* gate, const float* up, int64_t n,
                       const float* y) {
  return CheckElementwiseArgs("SwiGlu", "gate", gate, "up", up, n, y);
}

Status CheckSoftmaxArgs(const float* x, int64_t rows, int64_t n,
                        const float* y) {
  return CheckRowwiseArgs("Softmax", x, rows, n, "y", y);
}

Status CheckAddArgs(const float* a, const float* b, int64_t n, const float* y) {
  return CheckElementwiseArgs("Add", "a", a, "b", b, n, y);
}

Status CheckEmbeddingArgs(const WeightView& table, const int32_t* ids,
                          int64_t n_ids, const float* y) {
  constexpr std::string_view op = "Embedding";
  LP_RETURN_IF_ERROR(CheckWeights(op, "table", table));
  LP_RETURN_IF_ERROR(CheckPtr(op, "ids", ids));
  LP_RETURN_IF_ERROR(CheckPtr(op, "y", y));
  LP_RETURN_IF_ERROR(CheckDim(op, "n_ids", n_ids));
  for (int64_t i = 0; i < n_ids; ++i) {
    if (ids[i] < 0 || ids[i] >= table.rows) {
      return BadArgument(op, "ids[" + std::to_string(i) + "]",
                         "got " + std::to_string(ids[i]) + ", want 0 <= id < " +
                             std::to_string(table.rows));
    }
  }
  return OkStatus();
}

Status CheckArgmaxArgs(const float* x, int64_t rows, int64_t n,
                       const int64_t* out) {
  return CheckRowwiseArgs("Argmax", x, rows, n, "out", out);
}

}  // namespace layerproof::kernels
