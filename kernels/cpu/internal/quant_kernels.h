// The CPU block-quantized GEMM/GEMV (docs/determinism.md §3.12), written once
// against a vocabulary Q (Avx512QuantIsa in avx512_quant.cc, Avx2QuantIsa in
// avx2_quant.cc, the NEON ones in neon_quant.cc) and instantiated there.
// Layout: quant_packed.h.
//
// Every lane of a Q::VF is one output column. For each unit the vocabulary
// gives the exact integer dot of the unit's weights with the row's quantized
// activations (integers: any order gives the same sum); the kernel turns it
// into the unit product u_b with the fp32 operations of kernels/quant.cc
// UnitProduct, in the same order, and chains p = fma(u_b, d_b, p) over the
// chunk's units in ascending order. Chunk partials meet in the halving tree
// (ChunkTreeSchedule), the bias is added once and NaN is canonicalised. So
// results are bit-identical to kernels/ref.
//
// Exactness of the float steps: |I| < 2^24 for every format, so float(I) is
// exact; Q4_K's float(N) * float(sc) and float(mn) * float(S), and Q6_K's
// float(D0) * sc0 + float(D1) * sc1, are products and sums of integers below
// 2^24, so exact too, and equal float(I) and float(M) of the reference.
//
// The vocabulary Q supplies:
//   kNR (lanes), kByteBias (quant_packed.h), VI, VF, struct UnitW;
//   LoadBytes / LoadNibbles(const unsigned char*, UnitW*);
//   DotBytes(const UnitW&, int g0, const int8_t* x)  // byte formats: the 4
//     groups from g0 (one half unit), sum of (w + kByteBias) * q
//   DotNibbles(const UnitW&, const int8_t* x)        // nibbles: all 32 k
//   ToF(VI), SubScalar(VI, int32_t), Add(VI, VI); Zero, Set1, Mul, AddF,
//   Fma(a, b, c) = a*b + c, Fnmadd(a, b, c) = c - a*b (one rounding each),
//   LoadHalfs / LoadU8 / LoadS8 (kNR scales as fp32, exact), Load / Store
//   (unaligned), Finish(VF, bias, y, count).
//
// Unnamed namespace, for the reason given in gemm_panels.h. Thread safety:
// reentrant; scratch is on the stack.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_QUANT_KERNELS_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_QUANT_KERNELS_H_

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/internal/gemm_panels.h"
#include "kernels/cpu/internal/quant_packed.h"
#include "kernels/quant.h"

namespace layerproof::kernels::cpu {
namespace {  // NOLINT(build/namespaces): see gemm_panels.h.

// The stack of chunk partials: ChunkTreeSchedule's depth is at most
// log2(chunks) + 1 <= 24 for k <= kMaxDim.
constexpr int kQuantStackSlots = 32;
constexpr int64_t kQuantUnitsPerChunk = ref::kChunk / quant::kUnit;

struct QuantTileArgs {
  const quant::QuantizedRows* x;
  int64_t r0;  // first row of the tile
  const QuantPacked* w;
  int64_t panel;
  const ChunkTreeSchedule* sched;
  const float* bias;  // at the panel's first column, or null
  float* y;           // at (r0, the panel's first column)
  int64_t ldy;
  int64_t cols;   // outputs of the panel to store
  bool prefetch;  // decode: the k-quants prefetch their panel stream
};

// Decode (one row tile) streams each panel once from memory. For the
// k-quants each unit step prefetches the bytes of the unit this far ahead,
// and each super-block its group scales (which lie after its units but are
// read first); the panels of a slice lie back to back, so it runs on into
// the next one. Q8_0 and Q4_0 leave their plain sequential stream to the
// hardware prefetcher: on the 2-core AMD EPYC VM, software prefetch made
// their decode GEMV 5-35% slower while Q4_K gained ~10% (BENCHMARKS.md,
// issue 15). Prefill re-reads a panel per row tile from cache and does not
// prefetch. Prefetching moves no bits.
constexpr int64_t kQuantPrefetchBytes = 4096;

// One prefetch per 64 bytes of [p, p + kBytes), kQuantPrefetchBytes ahead; a
// compile-time count, so the loop unrolls into bare prefetches.
template <int64_t kBytes>
__attribute__((always_inline)) inline void PrefetchAhead(
    const unsigned char* p) {
#pragma GCC unroll 16
  for (int64_t o = 0; o < kBytes; o += 64) {
    __builtin_prefetch(p + kQuantPrefetchBytes + o, 0, 3);
  }
}

// The packed layout of format T for vocabulary Q, less the k-dependent
// counts: unit and group sizes known at compile time, so that the inner loop
// has constant strides and no division.
template <class Q, DType T>
constexpr QuantLayout kUnitLayout = QuantLayout::Make(T, Q::kNR, Q::kByteBias,
                                                      0);

// u_b for R rows of unit b (see the file comment), then p[r] += u_b * d_b.
// `wts` is the unit's packed weights, `gscales` its group's scales.
template <class Q, DType T, int R>
__attribute__((always_inline)) inline void UnitStep(
    const unsigned char* wts, const unsigned char* gscales, int64_t b,
    const int8_t* const* xq, const quant::ActUnit* const* xu,
    typename Q::VF* p) {
  using VF = typename Q::VF;
  using VI = typename Q::VI;
  const unsigned char* scales = wts + kUnitLayout<Q, T>.unit_weight_bytes;
  typename Q::UnitW w;
  if constexpr (T == DType::kQ4_0 || T == DType::kQ4_K) {
    Q::LoadNibbles(wts, &w);
  } else {
    Q::LoadBytes(wts, &w);
  }
  VF d, s0, s1, dmin;
  if constexpr (T == DType::kQ8_0 || T == DType::kQ4_0) {
    d = Q::LoadHalfs(scales);
  } else if constexpr (T == DType::kQ4_K) {
    s0 = Q::LoadU8(scales);
    s1 = Q::LoadU8(scales + Q::kNR);  // the min multipliers
    d = Q::LoadHalfs(gscales);
    dmin = Q::LoadHalfs(gscales + 2 * Q::kNR);
  } else {
    s0 = Q::LoadS8(scales);
    s1 = Q::LoadS8(scales + Q::kNR);
    d = Q::LoadHalfs(gscales);
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const int8_t* x = xq[r] + b * quant::kUnit;
    const quant::ActUnit& a = xu[r][b];
    const int32_t sum = a.half_sum[0] + a.half_sum[1];
    VF u;
    if constexpr (T == DType::kQ8_0) {
      const VI dot = Q::Add(Q::DotBytes(w, 0, x), Q::DotBytes(w, 4, x));
      u = Q::Mul(d, Q::ToF(Q::SubScalar(dot, Q::kByteBias * sum)));
    } else if constexpr (T == DType::kQ4_0) {
      u = Q::Mul(d, Q::ToF(Q::SubScalar(Q::DotNibbles(w, x), 8 * sum)));
    } else if constexpr (T == DType::kQ4_K) {
      const VF i = Q::Mul(Q::ToF(Q::DotNibbles(w, x)), s0);
      const VF m = Q::Mul(s1, Q::Set1(a.sum));  // a.sum == float(sum)
      u = Q::Fnmadd(dmin, m, Q::Mul(d, i));
    } else {
      const VI d0 =
          Q::SubScalar(Q::DotBytes(w, 0, x), Q::kByteBias * a.half_sum[0]);
      const VI d1 =
          Q::SubScalar(Q::DotBytes(w, 4, x), Q::kByteBias * a.half_sum[1]);
      const VF i = Q::AddF(Q::Mul(Q::ToF(d0), s0), Q::Mul(Q::ToF(d1), s1));
      u = Q::Mul(d, i);
    }
    p[r] = Q::Fma(u, Q::Set1(a.d), p[r]);
  }
}

// R rows x one panel over all of k.
template <class Q, DType T, int R>
void QuantTile(const QuantTileArgs& a) {
  using VF = typename Q::VF;
  constexpr QuantLayout l = kUnitLayout<Q, T>;
  const unsigned char* panel = a.w->panel(a.panel);
  const ChunkTreeSchedule& s = *a.sched;
  const int64_t n_units = a.x->k / quant::kUnit;
  const int8_t* xq[R];
  const quant::ActUnit* xu[R];
  for (int r = 0; r < R; ++r) {
    xq[r] = a.x->row_q(a.r0 + r);
    xu[r] = a.x->row_units(a.r0 + r);
  }
  alignas(64) float stack[kQuantStackSlots][R][Q::kNR];
  for (int64_t c = 0; c < s.chunks(); ++c) {
    VF p[R];
    for (int r = 0; r < R; ++r) p[r] = Q::Zero();
    const int64_t b0 = c * kQuantUnitsPerChunk;
    const int64_t b1 = std::min(n_units, b0 + kQuantUnitsPerChunk);
    if constexpr (l.units_per_group == 1) {
      // Q8_0, Q4_0: no software prefetch (above).
      const unsigned char* unit = panel + b0 * l.group_bytes;
      if (b1 - b0 == kQuantUnitsPerChunk) {
        // A whole chunk (all but a ragged last one): a fixed trip count lets
        // the compiler unroll it with constant offsets (Q8_0 decode 1.3-1.9x
        // faster than the counted loop on the EPYC VM; BENCHMARKS.md).
#pragma GCC unroll 8
        for (int64_t j = 0; j < kQuantUnitsPerChunk; ++j) {
          UnitStep<Q, T, R>(unit + j * l.group_bytes, nullptr, b0 + j, xq, xu,
                            p);
        }
      } else {
        for (int64_t b = b0; b < b1; ++b, unit += l.group_bytes) {
          UnitStep<Q, T, R>(unit, nullptr, b, xq, xu, p);
        }
      }
    } else {
      // A chunk is exactly one super-block.
      const unsigned char* group = panel + c * l.group_bytes;
      const unsigned char* gscales = group + l.units_per_group * l.unit_bytes;
      if (a.prefetch) {
        PrefetchAhead<l.group_bytes - l.units_per_group * l.unit_bytes>(
            gscales);
      }
      for (int64_t j = 0; j < l.units_per_group; ++j) {
        if (a.prefetch) PrefetchAhead<l.unit_bytes>(group + j * l.unit_bytes);
        UnitStep<Q, T, R>(group + j * l.unit_bytes, gscales, b0 + j, xq, xu, p);
      }
    }
    const int32_t sp = s.sp(c);
    const int32_t merges = s.merges(c);
    for (int32_t j = 0; j < merges; ++j) {
      for (int r = 0; r < R; ++r) {
        p[r] = Q::AddF(Q::Load(stack[sp - 1 - j][r]), p[r]);
      }
    }
    if (c + 1 < s.chunks()) {
      for (int r = 0; r < R; ++r) Q::Store(stack[sp - merges][r], p[r]);
      continue;
    }
    for (int r = 0; r < R; ++r) {
      Q::Finish(p[r], a.bias, a.y + r * a.ldy, a.cols);
    }
  }
}

template <class Q, DType T>
void QuantColumnsTyped(const quant::QuantizedRows& x, const QuantPacked& w,
                       const float* bias, float* y, int64_t n_begin,
                       int64_t n_end) {
  constexpr int kMaxRows = 4;
  const ChunkTreeSchedule sched(CeilDivI(x.k, ref::kChunk));
  const int64_t n = w.n();
  for (int64_t col = n_begin; col < n_end; col += Q::kNR) {
    QuantTileArgs a{&x,
                    0,
                    &w,
                    col / Q::kNR,
                    &sched,
                    bias == nullptr ? nullptr : bias + col,
                    y,
                    n,
                    std::min<int64_t>(Q::kNR, n_end - col),
                    x.m <= kMaxRows};
    for (int64_t r0 = 0; r0 < x.m; r0 += kMaxRows) {
      a.r0 = r0;
      a.y = y + r0 * n + col;
      switch (std::min<int64_t>(kMaxRows, x.m - r0)) {
        case 1:
          QuantTile<Q, T, 1>(a);
          break;
        case 2:
          QuantTile<Q, T, 2>(a);
          break;
        case 3:
          QuantTile<Q, T, 3>(a);
          break;
        default:
          QuantTile<Q, T, 4>(a);
          break;
      }
    }
  }
}

// The QuantGemmOps::gemm entry for vocabulary Q.
template <class Q>
void QuantColumns(const quant::QuantizedRows& x, const PackedWeights& w,
                  const float* bias, float* y, int64_t n_begin, int64_t n_end) {
  const auto& qw = static_cast<const QuantPacked&>(w);
  switch (w.dtype()) {
    case DType::kQ8_0:
      return QuantColumnsTyped<Q, DType::kQ8_0>(x, qw, bias, y, n_begin, n_end);
    case DType::kQ4_0:
      return QuantColumnsTyped<Q, DType::kQ4_0>(x, qw, bias, y, n_begin, n_end);
    case DType::kQ4_K:
      return QuantColumnsTyped<Q, DType::kQ4_K>(x, qw, bias, y, n_begin, n_end);
    case DType::kQ6_K:
      return QuantColumnsTyped<Q, DType::kQ6_K>(x, qw, bias, y, n_begin, n_end);
    default:
      return;
  }
}

}  // namespace
}  // namespace layerproof::kernels::cpu

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_QUANT_KERNELS_H_
