// NEON GEMM/GEMV in the chunk-tree order of docs/determinism.md §3.1; see
// kernels/cpu/internal/neon_gemm.h for the layout and the contract.
//
// Reduction order, per output y[r][j] (identical to kernels/ref/ref_gemm.cc):
// for each chunk c of kChunk = 256 k (the last one shorter), one fma chain
// acc = fma(x[r][k], W[j][k], acc) from +0 in ascending k, in lane j % 4 of
// one accumulator register; the chunk partials meet in the halving tree
// T(n) = T(ceil(n/2)) + T(floor(n/2)); then + bias[j] once; NaN becomes
// 0x7FC00000. The tree is walked recursively, left subtree first, so the
// chunks are computed in ascending k and only O(log chunks) partial tiles are
// live. Every instruction is a correctly rounded IEEE op (FMLA, FADD); FMLA by
// element (vfmaq_laneq_f32 / vfmaq_n_f32) is fused like std::fma.
#include "kernels/cpu/internal/neon_gemm.h"

#include <arm_neon.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/ref/reduction.h"

namespace layerproof::kernels::cpu {

const int64_t kNeonGemmNAlign = kNeonGemmNR;

namespace {

constexpr int kNR = static_cast<int>(kNeonGemmNR);
constexpr int kVecs = kNR / 4;  // float32x4_t per panel row
constexpr int64_t kChunk = ref::kChunk;

// W[n][k] as [panels][k][kNR] in the stored dtype, zero-padded past n.
// 16-bit formats are kept as raw uint16_t bits, fp32 as float.
class NeonPackedWeights final : public PackedWeights {
 public:
  explicit NeonPackedWeights(const WeightView& w)
      : PackedWeights(BackendKind::kNeon, w.rows, w.cols, w.dtype),
        panels_((w.rows + kNR - 1) / kNR) {
    const int64_t n = w.rows;
    const int64_t k = w.cols;
    const size_t total = static_cast<size_t>(panels_ * k * kNR);
    if (w.dtype == DType::kF32) {
      f32_.assign(total, 0.0f);
      Scatter(static_cast<const float*>(w.data), n, k, f32_.data());
    } else {
      u16_.assign(total, 0);
      Scatter(static_cast<const uint16_t*>(w.data), n, k, u16_.data());
    }
  }

  int64_t panels() const { return panels_; }
  // Panel p: k rows of kNR elements.
  const float* f32_panel(int64_t p) const {
    return f32_.data() + p * k() * kNR;
  }
  const uint16_t* u16_panel(int64_t p) const {
    return u16_.data() + p * k() * kNR;
  }

 private:
  // dst[(j / kNR) * k * kNR + kk * kNR + j % kNR] = src[j * k + kk]. src may
  // be unaligned, hence memcpy.
  template <typename T>
  static void Scatter(const T* src, int64_t n, int64_t k, T* dst) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(src);
    for (int64_t j = 0; j < n; ++j) {
      T* out = dst + (j / kNR) * k * kNR + j % kNR;
      const unsigned char* row = bytes + j * k * sizeof(T);
      for (int64_t kk = 0; kk < k; ++kk) {
        std::memcpy(out + kk * kNR, row + kk * sizeof(T), sizeof(T));
      }
    }
  }

  int64_t panels_;
  std::vector<float> f32_;
  std::vector<uint16_t> u16_;
};

// Widens the kNR weights of one k (one panel row) to fp32, exactly.
template <DType D>
struct PanelRow;

template <>
struct PanelRow<DType::kF32> {
  using Elem = float;
  static inline void Load(const float* p, float32x4_t w[kVecs]) {
    for (int i = 0; i < kVecs; ++i) w[i] = vld1q_f32(p + 4 * i);
  }
};

template <>
struct PanelRow<DType::kBF16> {
  using Elem = uint16_t;
  // bf16 bits are the top half of the fp32 bits.
  static inline void Load(const uint16_t* p, float32x4_t w[kVecs]) {
    for (int i = 0; i < kVecs / 2; ++i) {
      const uint16x8_t h = vld1q_u16(p + 8 * i);
      w[2 * i] = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h), 16));
      w[2 * i + 1] = vreinterpretq_f32_u32(vshll_high_n_u16(h, 16));
    }
  }
};

template <>
struct PanelRow<DType::kF16> {
  using Elem = uint16_t;
  // FCVTL is exact for every fp16 value, subnormals included (FpEnvGuard
  // clears FZ/FZ16). A signalling NaN comes out quiet, unlike
  // F16ToFloat; both are NaN, and any NaN output is canonicalised.
  static inline void Load(const uint16_t* p, float32x4_t w[kVecs]) {
    for (int i = 0; i < kVecs / 2; ++i) {
      const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(p + 8 * i));
      w[2 * i] = vcvt_f32_f16(vget_low_f16(h));
      w[2 * i + 1] = vcvt_high_f32_f16(h);
    }
  }
};

// MR rows of x times P panels: MR * P * kVecs accumulators.
template <int MR, int P>
struct Acc {
  float32x4_t v[MR][P * kVecs];
};

// The MR x (P * kNR) output tile at rows x[0..MR) (row stride k) and panels
// w[0..P).
template <DType D, int MR, int P>
class Tile {
 public:
  using Elem = typename PanelRow<D>::Elem;

  Tile(const float* x, int64_t k, const Elem* const w[P]) : x_(x), k_(k) {
    for (int p = 0; p < P; ++p) w_[p] = w[p];
  }

  // The halving tree over chunks [c0, c0 + count), left subtree first.
  void Tree(int64_t c0, int64_t count, Acc<MR, P>& out) const {
    if (count == 1) {
      Chunk(c0 * kChunk, std::min(k_, (c0 + 1) * kChunk), out);
      return;
    }
    const int64_t left = (count + 1) / 2;
    Tree(c0, left, out);
    Acc<MR, P> right;
    Tree(c0 + left, count - left, right);
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 32
      for (int i = 0; i < P * kVecs; ++i) {
        out.v[r][i] = vaddq_f32(out.v[r][i], right.v[r][i]);
      }
    }
  }

 private:
  // One chunk: the fma chain over k in [k0, k1) from +0, ascending k.
  void Chunk(int64_t k0, int64_t k1, Acc<MR, P>& out) const {
    Acc<MR, P> a;
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 32
      for (int i = 0; i < P * kVecs; ++i) a.v[r][i] = vdupq_n_f32(0.0f);
    }
    int64_t kk = k0;
    // Four k at a time: x[r][kk..kk+3] in one register, broadcast by lane.
    for (; kk + 4 <= k1; kk += 4) {
      float32x4_t xv[MR];
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) xv[r] = vld1q_f32(x_ + r * k_ + kk);
      Step<0>(kk, xv, a);
      Step<1>(kk, xv, a);
      Step<2>(kk, xv, a);
      Step<3>(kk, xv, a);
    }
    for (; kk < k1; ++kk) {
      float32x4_t w[P][kVecs];
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) PanelRow<D>::Load(w_[p] + kk * kNR, w[p]);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        const float xs = x_[r * k_ + kk];
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p) {
#pragma GCC unroll 8
          for (int i = 0; i < kVecs; ++i) {
            a.v[r][p * kVecs + i] =
                vfmaq_n_f32(a.v[r][p * kVecs + i], w[p][i], xs);
          }
        }
      }
    }
    out = a;
  }

  // acc += W[.][kk + L] * x[r][kk + L] for every row and column of the tile.
  template <int L>
  inline void Step(int64_t kk, const float32x4_t xv[MR], Acc<MR, P>& a) const {
    float32x4_t w[P][kVecs];
#pragma GCC unroll 4
    for (int p = 0; p < P; ++p) PanelRow<D>::Load(w_[p] + (kk + L) * kNR, w[p]);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) {
#pragma GCC unroll 8
        for (int i = 0; i < kVecs; ++i) {
          a.v[r][p * kVecs + i] =
              vfmaq_laneq_f32(a.v[r][p * kVecs + i], w[p][i], xv[r], L);
        }
      }
    }
  }

  const float* x_;
  int64_t k_;
  const Elem* w_[P];
};

// Adds the bias, canonicalises NaN and stores columns [col0, col0 + cols)
// of one tile row (cols <= kNR). bias may be null.
inline void StoreRow(const float32x4_t v[kVecs], const float* bias,
                     int64_t col0, int64_t cols, float* y_row) {
  const float32x4_t nan = vreinterpretq_f32_u32(vdupq_n_u32(kCanonicalNanBits));
  float b_pad[kNR];
  const float* b = nullptr;
  if (bias != nullptr) {
    b = bias + col0;
    if (cols < kNR) {
      std::fill(b_pad, b_pad + kNR, 0.0f);
      std::memcpy(b_pad, b, cols * sizeof(float));
      b = b_pad;
    }
  }
  float out[kNR];
  for (int i = 0; i < kVecs; ++i) {
    float32x4_t s = v[i];
    if (b != nullptr) s = vaddq_f32(s, vld1q_f32(b + 4 * i));
    s = vbslq_f32(vceqq_f32(s, s), s, nan);
    if (cols == kNR) {
      vst1q_f32(y_row + col0 + 4 * i, s);
    } else {
      vst1q_f32(out + 4 * i, s);
    }
  }
  if (cols < kNR) std::memcpy(y_row + col0, out, cols * sizeof(float));
}

template <DType D, int MR, int P>
void RunTile(const float* x, int64_t r0, const NeonPackedWeights& w,
             const float* bias, float* y, int64_t p0, int64_t n_end) {
  using Elem = typename PanelRow<D>::Elem;
  const int64_t n = w.n();
  const int64_t k = w.k();
  const Elem* panels[P];
  for (int p = 0; p < P; ++p) {
    if constexpr (D == DType::kF32) {
      panels[p] = w.f32_panel(p0 + p);
    } else {
      panels[p] = w.u16_panel(p0 + p);
    }
  }
  const Tile<D, MR, P> tile(x + r0 * k, k, panels);
  Acc<MR, P> acc;
  tile.Tree(0, (k + kChunk - 1) / kChunk, acc);
  for (int r = 0; r < MR; ++r) {
    for (int p = 0; p < P; ++p) {
      const int64_t col0 = (p0 + p) * kNR;
      StoreRow(acc.v[r] + p * kVecs, bias, col0,
               std::min<int64_t>(kNR, n_end - col0), y + (r0 + r) * n);
    }
  }
}

// Walks the slice two panels at a time: rows in tiles of 4 x 1 panel; 1 or
// 2 leftover rows take both panels at once (more independent chains for
// GEMV), 3 leftover rows one panel at a time.
template <DType D>
void GemmTyped(const float* x, int64_t m, const NeonPackedWeights& w,
               const float* bias, float* y, int64_t n_begin, int64_t n_end) {
  const int64_t p_end = (n_end + kNR - 1) / kNR;
  for (int64_t p = n_begin / kNR; p < p_end; p += 2) {
    const int64_t np = std::min<int64_t>(2, p_end - p);
    int64_t r = 0;
    for (; r + 4 <= m; r += 4) {
      for (int64_t q = 0; q < np; ++q) {
        RunTile<D, 4, 1>(x, r, w, bias, y, p + q, n_end);
      }
    }
    const int64_t rem = m - r;
    if (rem == 0) continue;
    if (np == 2 && rem == 1) {
      RunTile<D, 1, 2>(x, r, w, bias, y, p, n_end);
    } else if (np == 2 && rem == 2) {
      RunTile<D, 2, 2>(x, r, w, bias, y, p, n_end);
    } else {
      for (int64_t q = 0; q < np; ++q) {
        switch (rem) {
          case 1:
            RunTile<D, 1, 1>(x, r, w, bias, y, p + q, n_end);
            break;
          case 2:
            RunTile<D, 2, 1>(x, r, w, bias, y, p + q, n_end);
            break;
          default:
            RunTile<D, 3, 1>(x, r, w, bias, y, p + q, n_end);
            break;
        }
      }
    }
  }
}

}  // namespace

std::unique_ptr<PackedWeights> NeonPack(const WeightView& w) {
  return std::make_unique<NeonPackedWeights>(w);
}

void NeonGemm(const float* x, int64_t m, const PackedWeights& w,
              const float* bias, float* y, int64_t n_begin, int64_t n_end) {
  const auto& pw = static_cast<const NeonPackedWeights&>(w);
  switch (w.dtype()) {
    case DType::kF32:
      GemmTyped<DType::kF32>(x, m, pw, bias, y, n_begin, n_end);
      break;
    case DType::kBF16:
      GemmTyped<DType::kBF16>(x, m, pw, bias, y, n_begin, n_end);
      break;
    case DType::kF16:
      GemmTyped<DType::kF16>(x, m, pw, bias, y, n_begin, n_end);
      break;
    default:  // block formats take the quantized GEMM (QuantGemmOps)
      break;
  }
}

}  // namespace layerproof::kernels::cpu
