// The NEON IsaOps table (kernels/cpu/internal/isa_ops.h), AArch64 Advanced
// SIMD. Gemm lives in neon_gemm.cc, the block-quantized GEMM in
// neon_quant.cc; RmsNorm, Rope, Attention, SwiGlu,
// Softmax and Add are vectorised here; Embedding and Argmax forward to
// kernels/ref (bit-identical by construction; they do not matter for speed).
//
// Every kernel repeats ref's operations in ref's order (docs/determinism.md
// §3), with 4-lane registers standing in for independent scalar outputs or
// for groups of ref's Lane32 lanes:
//  * Lane32 (§3.2) sums and dots keep the 32 lanes in 8 q-registers
//    (register q holds lanes 4q .. 4q+3), a ragged tail goes through the lane
//    array in scalar, and the butterfly 16, 8, 4, 2, 1 is done as
//    q[0..3] += q[4..7], q[0..1] += q[2..3], q0 += q1, then within q0.
//  * ChunkTree (§3.1) sums over keys (attention's P·V) vectorise over the
//    output dimension, one fma chain per output and chunk, the partials
//    combined by the halving tree walked left subtree first.
//  * Elementwise ops compute each element with ref's expression; tails use
//    the scalar expression itself.
// Only correctly rounded IEEE operations are used; fma only where ref has
// std::fma, and then always an explicit fused FMLA (never vmla).
#include <arm_neon.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/internal/exp_neon.h"
#include "kernels/cpu/internal/isa_ops.h"
#include "kernels/cpu/internal/neon_gemm.h"
#include "kernels/cpu/internal/ref_forward.h"
#include "kernels/ref/det_math.h"
#include "kernels/ref/reduction.h"

namespace layerproof::kernels::cpu {
namespace {

inline float32x4_t CanonicalNan4() {
  return vreinterpretq_f32_u32(vdupq_n_u32(kCanonicalNanBits));
}

// Each NaN lane becomes 0x7FC00000.
inline float32x4_t CanonicalizeNan4(float32x4_t v) {
  return vbslq_f32(vceqq_f32(v, v), v, CanonicalNan4());
}

// ------------------------------------------------------------- Lane32 ---

// The butterfly of ref::Butterfly32 on lanes held as q[q] = lanes 4q..4q+3.
inline float Butterfly32(float32x4_t q[8]) {
  for (int i = 0; i < 4; ++i) q[i] = vaddq_f32(q[i], q[i + 4]);  // off 16
  for (int i = 0; i < 2; ++i) q[i] = vaddq_f32(q[i], q[i + 2]);  // off 8
  q[0] = vaddq_f32(q[0], q[1]);                                  // off 4
  const float32x2_t h = vadd_f32(vget_low_f32(q[0]), vget_high_f32(q[0]));
  return vget_lane_f32(h, 0) + vget_lane_f32(h, 1);  // off 2, then off 1
}

// ref::Lane32Dot(a, n, b): lane j accumulates fma(a[i], b[i], lane) for
// i = j mod 32, from +0, ascending i.
float Lane32Dot(const float* a, const float* b, int64_t n) {
  float32x4_t q[8];
  for (auto& v : q) v = vdupq_n_f32(0.0f);
  int64_t i = 0;
  for (; i + ref::kLanes <= n; i += ref::kLanes) {
    for (int j = 0; j < 8; ++j) {
      q[j] =
          vfmaq_f32(q[j], vld1q_f32(a + i + 4 * j), vld1q_f32(b + i + 4 * j));
    }
  }
  if (i < n) {
    float lanes[ref::kLanes];
    for (int j = 0; j < 8; ++j) vst1q_f32(lanes + 4 * j, q[j]);
    for (int64_t j = 0; i + j < n; ++j) {
      lanes[j] = std::fma(a[i + j], b[i + j], lanes[j]);
    }
    for (int j = 0; j < 8; ++j) q[j] = vld1q_f32(lanes + 4 * j);
  }
  return Butterfly32(q);
}

// ref::Lane32Sum of x[0..n): lane j accumulates x[i] for i = j mod 32.
float Lane32Sum(const float* x, int64_t n) {
  float32x4_t q[8];
  for (auto& v : q) v = vdupq_n_f32(0.0f);
  int64_t i = 0;
  for (; i + ref::kLanes <= n; i += ref::kLanes) {
    for (int j = 0; j < 8; ++j)
      q[j] = vaddq_f32(q[j], vld1q_f32(x + i + 4 * j));
  }
  if (i < n) {
    float lanes[ref::kLanes];
    for (int j = 0; j < 8; ++j) vst1q_f32(lanes + 4 * j, q[j]);
    for (int64_t j = 0; i + j < n; ++j) lanes[j] = lanes[j] + x[i + j];
    for (int j = 0; j < 8; ++j) q[j] = vld1q_f32(lanes + 4 * j);
  }
  return Butterfly32(q);
}

// --------------------------------------------------------- Elementwise ---

// Four elements of a weight row in its stored dtype, widened exactly.
// `data` needs no alignment (byte loads).
inline float32x4_t LoadWeights4(const void* data, DType t, int64_t i) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  switch (t) {
    case DType::kF32:
      return vreinterpretq_f32_u8(vld1q_u8(bytes + 4 * i));
    case DType::kBF16:
      return vreinterpretq_f32_u32(
          vshll_n_u16(vreinterpret_u16_u8(vld1_u8(bytes + 2 * i)), 16));
    default:  // kF16; block formats never reach the float ops
      break;
  }
  return vcvt_f32_f16(vreinterpret_f16_u8(vld1_u8(bytes + 2 * i)));
}

// §3.3: y = (x * inv_rms) * gamma, inv_rms = 1 / sqrt(mean + eps) with
// mean the Lane32 sum of squares over dim.
void RmsNorm(const float* x, int64_t rows, int64_t dim, const WeightView& gamma,
             float eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    const float sum_sq = Lane32Dot(xr, xr, dim);
    const float mean = sum_sq / static_cast<float>(dim);
    const float inv_rms = 1.0f / std::sqrt(mean + eps);
    const float32x4_t inv = vdupq_n_f32(inv_rms);
    int64_t i = 0;
    for (; i + 4 <= dim; i += 4) {
      const float32x4_t g = LoadWeights4(gamma.data, gamma.dtype, i);
      const float32x4_t v = vmulq_f32(vmulq_f32(vld1q_f32(xr + i), inv), g);
      vst1q_f32(yr + i, CanonicalizeNan4(v));
    }
    for (; i < dim; ++i) {
      const float g = LoadAsFloat(gamma.data, gamma.dtype, i);
      yr[i] = CanonicalizeNan((xr[i] * inv_rms) * g);
    }
  }
}

// §3.4: v[i] = x1 c - x2 s, v[i + half] = x2 c + x1 s, each product rounded.
void Rope(float* x, int64_t rows, int64_t n_heads, const int64_t* positions,
          const RopeTable& table) {
  const int64_t d = table.head_dim;
  const int64_t half = d / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const float* c = table.cos.data() + positions[r] * half;
    const float* s = table.sin.data() + positions[r] * half;
    for (int64_t h = 0; h < n_heads; ++h) {
      float* v = x + (r * n_heads + h) * d;
      int64_t i = 0;
      for (; i + 4 <= half; i += 4) {
        const float32x4_t x1 = vld1q_f32(v + i);
        const float32x4_t x2 = vld1q_f32(v + i + half);
        const float32x4_t ci = vld1q_f32(c + i);
        const float32x4_t si = vld1q_f32(s + i);
        const float32x4_t lo = vsubq_f32(vmulq_f32(x1, ci), vmulq_f32(x2, si));
        const float32x4_t hi = vaddq_f32(vmulq_f32(x2, ci), vmulq_f32(x1, si));
        vst1q_f32(v + i, CanonicalizeNan4(lo));
        vst1q_f32(v + i + half, CanonicalizeNan4(hi));
      }
      for (; i < half; ++i) {
        const float x1 = v[i];
        const float x2 = v[i + half];
        v[i] = CanonicalizeNan(x1 * c[i] - x2 * s[i]);
        v[i + half] = CanonicalizeNan(x2 * c[i] + x1 * s[i]);
      }
    }
  }
}

// §3.6: y = (g / (1 + ExpF(-g))) * up.
void SwiGlu(const float* gate, const float* up, int64_t n, float* y) {
  const float32x4_t one = vdupq_n_f32(1.0f);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t g = vld1q_f32(gate + i);
    const float32x4_t silu = vdivq_f32(g, vaddq_f32(one, ExpF4(vnegq_f32(g))));
    vst1q_f32(y + i, CanonicalizeNan4(vmulq_f32(silu, vld1q_f32(up + i))));
  }
  for (; i < n; ++i) {
    const float g = gate[i];
    const float silu = g / (1.0f + detmath::ExpF(-g));
    y[i] = CanonicalizeNan(silu * up[i]);
  }
}

// §3.7, ref::RowMax: NaN if any element is NaN, +0 for a zero maximum. FMAX
// propagates NaN; which of ±0 it keeps does not matter since a zero maximum
// becomes +0.
float RowMax(const float* x, int64_t n) {
  float m = -INFINITY;
  int64_t i = 0;
  if (n >= 4) {
    float32x4_t mv = vdupq_n_f32(-INFINITY);
    for (; i + 4 <= n; i += 4) mv = vmaxq_f32(mv, vld1q_f32(x + i));
    m = vmaxvq_f32(mv);
    if (std::isnan(m)) return CanonicalNan();
  }
  for (; i < n; ++i) {
    if (std::isnan(x[i])) return CanonicalNan();
    if (x[i] > m) m = x[i];
  }
  return m == 0.0f ? 0.0f : m;
}

// §3.7, ref::SoftmaxRow: y = ExpF(x - max) / Lane32Sum. y may equal x.
void SoftmaxRow(const float* x, int64_t n, float* y) {
  const float m = RowMax(x, n);
  const float32x4_t mv = vdupq_n_f32(m);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    vst1q_f32(y + i, ExpF4(vsubq_f32(vld1q_f32(x + i), mv)));
  }
  for (; i < n; ++i) y[i] = detmath::ExpF(x[i] - m);
  const float sum = Lane32Sum(y, n);
  const float32x4_t sv = vdupq_n_f32(sum);
  for (i = 0; i + 4 <= n; i += 4) {
    vst1q_f32(y + i, CanonicalizeNan4(vdivq_f32(vld1q_f32(y + i), sv)));
  }
  for (; i < n; ++i) y[i] = CanonicalizeNan(y[i] / sum);
}

void SoftmaxRows(const float* x, int64_t rows, int64_t n, float* y) {
  for (int64_t r = 0; r < rows; ++r) SoftmaxRow(x + r * n, n, y + r * n);
}

// §3.8.
void Add(const float* a, const float* b, int64_t n, float* y) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    vst1q_f32(y + i,
              CanonicalizeNan4(vaddq_f32(vld1q_f32(a + i), vld1q_f32(b + i))));
  }
  for (; i < n; ++i) y[i] = CanonicalizeNan(a[i] + b[i]);
}

// ---------------------------------------------------------- Attention ---

// ChunkTree over t in [0, keys) of p[t] * v[t * stride + e] for the 4 * V
// outputs e in [0, 4V): the halving tree over chunks [c0, c0 + count), left
// subtree first; each chunk one fma chain per output from +0.
template <int V>
void ChunkTreePV(const float* p, const float* v, int64_t stride, int64_t keys,
                 int64_t c0, int64_t count, float32x4_t out[V]) {
  if (count == 1) {
    float32x4_t acc[V];
    for (int i = 0; i < V; ++i) acc[i] = vdupq_n_f32(0.0f);
    const int64_t end = std::min(keys, (c0 + 1) * ref::kChunk);
    for (int64_t t = c0 * ref::kChunk; t < end; ++t) {
      const float* vt = v + t * stride;
      for (int i = 0; i < V; ++i) {
        acc[i] = vfmaq_n_f32(acc[i], vld1q_f32(vt + 4 * i), p[t]);
      }
    }
    for (int i = 0; i < V; ++i) out[i] = acc[i];
    return;
  }
  const int64_t left = (count + 1) / 2;
  ChunkTreePV<V>(p, v, stride, keys, c0, left, out);
  float32x4_t right[V];
  ChunkTreePV<V>(p, v, stride, keys, c0 + left, count - left, right);
  for (int i = 0; i < V; ++i) out[i] = vaddq_f32(out[i], right[i]);
}

template <int V>
void StorePV(const float* p, const float* v, int64_t stride, int64_t keys,
             float* out) {
  float32x4_t acc[V];
  ChunkTreePV<V>(p, v, stride, keys, 0, (keys + ref::kChunk - 1) / ref::kChunk,
                 acc);
  for (int i = 0; i < V; ++i) vst1q_f32(out + 4 * i, CanonicalizeNan4(acc[i]));
}

// ref::AttentionRowHead: scores by Lane32 dots times the rounded scale,
// softmax, then out[e] = ChunkTree_t(p[t] * v[t][e]).
void AttentionRowHead(const AttentionArgs& a, int64_t row, int64_t head,
                      float* p) {
  const int64_t d = a.head_dim;
  const int64_t kv_row = a.n_kv_heads * d;
  const int64_t g = head / (a.n_heads / a.n_kv_heads);
  const int64_t keys = a.q_pos0 + row + 1;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const float* q = a.q + (row * a.n_heads + head) * d;
  for (int64_t t = 0; t < keys; ++t) {
    p[t] = Lane32Dot(q, a.k + t * kv_row + g * d, d) * scale;
  }
  SoftmaxRow(p, keys, p);
  float* out = a.out + (row * a.n_heads + head) * d;
  const float* v = a.v + g * d;
  int64_t e = 0;
  for (; e + 16 <= d; e += 16) StorePV<4>(p, v + e, kv_row, keys, out + e);
  for (; e + 4 <= d; e += 4) StorePV<1>(p, v + e, kv_row, keys, out + e);
  for (; e < d; ++e) {
    const float* ve = v + e;
    out[e] = CanonicalizeNan(ref::ChunkTreeDot(
        keys, [&](int64_t t) { return p[t]; },
        [&](int64_t t) { return ve[t * kv_row]; }));
  }
}

void AttentionTasks(const AttentionArgs& a, int64_t task_begin,
                    int64_t task_end, float* scratch) {
  for (int64_t t = task_begin; t < task_end; ++t) {
    AttentionRowHead(a, t / a.n_heads, t % a.n_heads, scratch);
  }
}

}  // namespace

const IsaOps& NeonOps() {
  static const IsaOps ops = {
      .kind = BackendKind::kNeon,
      .gemm_n_align = kNeonGemmNAlign,
      .pack = NeonPack,
      .gemm = NeonGemm,
      .quant = &NeonQuantOps(),
      .rmsnorm = RmsNorm,
      .rope = Rope,
      .attention = AttentionTasks,
      .swiglu = SwiGlu,
      .softmax = SoftmaxRows,
      .add = Add,
      .embedding = ref::Embedding,
      .argmax = RefArgmaxRows,
  };
  return ops;
}

}  // namespace layerproof::kernels::cpu
