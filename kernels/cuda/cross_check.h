// Bit-identity cross-checks of one backend against kernels/ref: each check
// runs an op on both backends with the same inputs and compares every output
// bit (docs/determinism.md §3: there is no tolerance). Inputs come from
// GoldenFloats (Philox, with ±0, subnormals, ±inf, NaN and ±3.4e38 mixed in
// when `specials`), shapes from a seeded std::mt19937_64, so a failing case
// is reproducible from its name and seed.
//
// Shared by tests/kernels/cuda_test.cc and the layerproof_gpu_check program,
// which runs where GoogleTest is not installed. Works for any backend.
// Thread safety: functions are reentrant; the backends' own rules apply.
#ifndef LAYERPROOF_KERNELS_CUDA_CROSS_CHECK_H_
#define LAYERPROOF_KERNELS_CUDA_CROSS_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/status.h"

namespace layerproof::kernels {

struct CrossCheckResult {
  std::string name;            // op and shape, e.g. "gemm bf16 m=3 k=4099 n=33"
  Status status;               // the first error either backend returned
  int64_t elements = 0;        // outputs compared
  int64_t mismatches = 0;      // outputs whose bits differ
  std::string first_mismatch;  // "index 17: got 0x..., want 0x..."
  bool ok() const { return status.ok() && mismatches == 0; }
};

// Weights of a stored dtype, owned.
struct StoredMatrix {
  std::vector<unsigned char> bytes;
  DType dtype = DType::kF32;
  int64_t rows = 0;
  int64_t cols = 0;
  WeightView view() const { return {bytes.data(), dtype, rows, cols}; }
};

// values (rows * cols of them) rounded to `dtype` (RNE) and stored.
StoredMatrix StoreMatrix(const std::vector<float>& values, int64_t rows,
                         int64_t cols, DType dtype);

// How QuantMatrix sets the fp16 scales (d, and dmin for Q4_K) of each block.
enum class QuantScales {
  kSane,        // uniform in [1e-3, 0.1), either sign
  kSomeZero,    // sane, with every 4th block's scales +0
  kExtreme,     // sane, with every 3rd block's scales one of +-inf, NaN,
                // +-subnormal, 65504, -0 or +0 in turn
  kRandomBits,  // as the random bytes fell: every fp16 kind
};

// A rows x cols matrix in block format `dtype` (kernels/quant.h; cols a
// multiple of BlockElems(dtype)): seeded random block bytes, scales per
// `scales`.
StoredMatrix QuantMatrix(uint32_t seed, int64_t rows, int64_t cols, DType dtype,
                         QuantScales scales);

// Compares two output vectors bit for bit into `r`.
void CompareBits(const std::vector<float>& got, const std::vector<float>& want,
                 CrossCheckResult& r);

// One op on explicit inputs. x: m * w.cols; bias: w.rows or empty.
CrossCheckResult CheckGemm(Backend& b, Backend& ref, std::string name,
                           const std::vector<float>& x, int64_t m,
                           const StoredMatrix& w,
                           const std::vector<float>& bias);
CrossCheckResult CheckAttention(Backend& b, Backend& ref, std::string name,
                                const AttentionArgs& shape,
                                const std::vector<float>& q,
                                const std::vector<float>& k,
                                const std::vector<float>& v);

// One op on generated inputs of the given shape.
CrossCheckResult CheckGemmShape(Backend& b, Backend& ref, uint32_t seed,
                                int64_t m, int64_t k, int64_t n, DType dtype,
                                bool bias, bool specials);
CrossCheckResult CheckAttentionShape(Backend& b, Backend& ref, uint32_t seed,
                                     int64_t nq, int64_t q_pos0,
                                     int64_t n_heads, int64_t n_kv_heads,
                                     int64_t head_dim, bool specials);
CrossCheckResult CheckRmsNormShape(Backend& b, Backend& ref, uint32_t seed,
                                   int64_t rows, int64_t dim, DType gamma,
                                   bool specials);
CrossCheckResult CheckRopeShape(Backend& b, Backend& ref, uint32_t seed,
                                int64_t rows, int64_t n_heads, int64_t head_dim,
                                bool specials);
CrossCheckResult CheckSoftmaxShape(Backend& b, Backend& ref, uint32_t seed,
                                   int64_t rows, int64_t n, bool specials);
CrossCheckResult CheckSwiGluShape(Backend& b, Backend& ref, uint32_t seed,
                                  int64_t n);
CrossCheckResult CheckAddShape(Backend& b, Backend& ref, uint32_t seed,
                               int64_t n);
CrossCheckResult CheckEmbeddingShape(Backend& b, Backend& ref, uint32_t seed,
                                     int64_t vocab, int64_t dim, int64_t n_ids,
                                     DType dtype);
CrossCheckResult CheckArgmaxShape(Backend& b, Backend& ref, uint32_t seed,
                                  int64_t rows, int64_t n, bool specials);

// Block-quantized GEMM (docs/determinism.md §3.12): QuantMatrix weights;
// activations whose units differ in magnitude by up to 2^100, with zero
// units, units whose scale is subnormal (q clamps at 127), units of exact
// rounding ties, and with `specials` ±0, subnormals and ±3.4e38 in every row
// and a NaN or ±inf unit in two rows of three (their outputs are NaN).
CrossCheckResult CheckQuantGemmShape(Backend& b, Backend& ref, uint32_t seed,
                                     int64_t m, int64_t k, int64_t n,
                                     DType dtype, bool bias, QuantScales scales,
                                     bool specials);
// Embedding of a block-quantized table (kRandomBits scales: NaN and inf
// rows included).
CrossCheckResult CheckQuantEmbeddingShape(Backend& b, Backend& ref,
                                          uint32_t seed, int64_t vocab,
                                          int64_t dim, int64_t n_ids,
                                          DType dtype);
// PackWeights of a `dtype` matrix whose cols is not a whole number of
// blocks: both backends must refuse it with InvalidArgument naming w.cols.
CrossCheckResult CheckQuantShapeRefused(Backend& b, Backend& ref, DType dtype,
                                        int64_t cols);

struct CrossCheckOptions {
  uint64_t seed = 1;
  int cases_per_op = 6;
  // Adds long reductions: K up to ~70k, decode against ~5k keys.
  bool large = false;
};

// Random shapes for every op (tails, K not a multiple of 256, both GEMM
// paths, prefill and decode attention, special values), and the quantized
// GEMM and embedding in every block format.
std::vector<CrossCheckResult> RunCrossChecks(Backend& b, Backend& ref,
                                             const CrossCheckOptions& options);

}  // namespace layerproof::kernels

#endif  // LAYERPROOF_KERNELS_CUDA_CROSS_CHECK_H_
