// ISA-generic vector versions of the row and elementwise ops of kernels/ref:
// RmsNorm, Rope, SwiGlu, Softmax, Add, Embedding and Argmax, written once
// against an ISA vocabulary (Avx512OpsIsa, Avx2OpsIsa) and instantiated by
// each ISA's ops table (kernels/cpu/avx512_ops.cc, avx2_ops.cc).
//
// Contract: every kernel is bit-identical to its kernels/ref counterpart for
// every input and length (tails are masked, never padded into a sum), because
// it performs the ref's correctly rounded operations in the ref's order:
// reductions follow the Lane32 order of docs/determinism.md §3.2 (the kW-wide
// vectors hold lanes [0, kW), [kW, 2 kW), ... of the 32, so the first Lane32
// butterfly offsets are vector adds and Isa::Fold does the rest), and the
// elementwise parts are the same per-element expressions, vectorised.
// Arguments arrive validated (kernels/backend.cc).
//
// Everything here is a template on the ISA, so that each ISA's translation
// unit gets its own instantiations (no inline function is shared between TUs
// compiled with different ISA flags).
// Thread safety: pure functions over caller buffers.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_SIMD_OPS_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_SIMD_OPS_H_

#include <cmath>
#include <cstdint>

#include "kernels/backend.h"
#include "kernels/dtype.h"

#define LP_SIMD_UNROLL _Pragma("GCC unroll 16")

namespace layerproof::kernels::cpu::simd {

// Lanes of the Lane32 order (docs/determinism.md §3.2).
inline constexpr int kLane32 = 32;

// Lane32 accumulators: kVecs vectors holding lanes [k kW, (k + 1) kW).
template <class Isa>
struct Lane32Acc {
  static constexpr int kVecs = kLane32 / Isa::kW;
  typename Isa::V v[kVecs];

  void Clear() {
    LP_SIMD_UNROLL
    for (int k = 0; k < kVecs; ++k) v[k] = Isa::Zero();
  }
  // The butterfly offsets 16, ..., kW: vector adds, leaving one vector.
  typename Isa::V VecFold() const {
    typename Isa::V w[kVecs];
    LP_SIMD_UNROLL
    for (int k = 0; k < kVecs; ++k) w[k] = v[k];
    LP_SIMD_UNROLL
    for (int n = kVecs; n > 1; n /= 2) {
      LP_SIMD_UNROLL
      for (int k = 0; k < n / 2; ++k) w[k] = Isa::Add(w[k], w[k + n / 2]);
    }
    return w[0];
  }
  // The whole butterfly; the offsets below kW in Isa::Fold.
  float Fold() const { return Isa::Fold(VecFold()); }
};

// Lane32 dot of a[0..n) and b[0..n): lane j = fma(a[i], b[i], lane j) over
// i = j mod 32 ascending from +0, then the butterfly (ref::Lane32Dot).
template <class Isa>
float Lane32Dot(const float* a, const float* b, int64_t n) {
  constexpr int kW = Isa::kW;
  Lane32Acc<Isa> acc;
  acc.Clear();
  int64_t i = 0;
  for (; i + kLane32 <= n; i += kLane32) {
    LP_SIMD_UNROLL
    for (int k = 0; k < acc.kVecs; ++k) {
      acc.v[k] = Isa::Fma(Isa::Load(a + i + k * kW), Isa::Load(b + i + k * kW),
                          acc.v[k]);
    }
  }
  // The tail: lanes past n keep their value (a padded +0 term could turn a
  // -0 lane into +0).
  LP_SIMD_UNROLL
  for (int k = 0; k < acc.kVecs; ++k) {
    const int64_t j = i + k * kW;
    if (j >= n) break;
    const auto m = Isa::FirstN(n - j < kW ? n - j : kW);
    acc.v[k] =
        Isa::FmaN(Isa::LoadN(a + j, m), Isa::LoadN(b + j, m), acc.v[k], m);
  }
  return acc.Fold();
}

// Reads gamma[i .. i + kW) (or the first n of them, rest +0) widened to fp32.
template <class Isa>
typename Isa::V LoadWeights(const WeightView& w, int64_t i, int64_t n) {
  if (w.dtype == DType::kF32) {
    const float* p = static_cast<const float*>(w.data) + i;
    return n >= Isa::kW ? Isa::Load(p) : Isa::LoadN(p, Isa::FirstN(n));
  }
  const uint16_t* p = static_cast<const uint16_t*>(w.data) + i;
  if (w.dtype == DType::kBF16) {
    return n >= Isa::kW ? Isa::LoadBf16(p) : Isa::LoadBf16N(p, n);
  }
  return n >= Isa::kW ? Isa::LoadF16(p) : Isa::LoadF16N(p, n);
}

// Calls body(i, len, mask) for [i, i + len) covering [0, n) in kW steps;
// the last piece may be short (len < kW).
template <class Isa, typename Body>
void ForEachVector(int64_t n, Body body) {
  const auto full = Isa::FirstN(Isa::kW);
  int64_t i = 0;
  for (; i + Isa::kW <= n; i += Isa::kW) body(i, int64_t{Isa::kW}, full);
  if (i < n) body(i, n - i, Isa::FirstN(n - i));
}

// §3.3: sum_sq in Lane32 fma order, mean = sum_sq / dim, inv = 1 / sqrt(mean
// + eps), y = (x * inv) * gamma.
template <class Isa>
void RmsNormRows(const float* x, int64_t rows, int64_t dim,
                 const WeightView& gamma, float eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    const float sum_sq = Lane32Dot<Isa>(xr, xr, dim);
    const float mean = sum_sq / static_cast<float>(dim);
    const auto inv = Isa::Set1(1.0f / std::sqrt(mean + eps));
    ForEachVector<Isa>(dim, [&](int64_t i, int64_t len, auto m) {
      const auto g = LoadWeights<Isa>(gamma, i, len);
      const auto xv =
          len == Isa::kW ? Isa::Load(xr + i) : Isa::LoadN(xr + i, m);
      const auto yv = Isa::CanonNan(Isa::Mul(Isa::Mul(xv, inv), g));
      if (len == Isa::kW) {
        Isa::Store(yr + i, yv);
      } else {
        Isa::StoreN(yr + i, m, yv);
      }
    });
  }
}

// §3.4: rotate_half pairs (i, i + half); each product rounded, then the sum
// (no fma).
template <class Isa>
void RopeRows(float* x, int64_t rows, int64_t n_heads, const int64_t* positions,
              const RopeTable& table) {
  const int64_t d = table.head_dim;
  const int64_t half = d / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const float* c = table.cos.data() + positions[r] * half;
    const float* s = table.sin.data() + positions[r] * half;
    for (int64_t h = 0; h < n_heads; ++h) {
      float* v = x + (r * n_heads + h) * d;
      ForEachVector<Isa>(half, [&](int64_t i, int64_t len, auto m) {
        const bool full = len == Isa::kW;
        const auto x1 = full ? Isa::Load(v + i) : Isa::LoadN(v + i, m);
        const auto x2 =
            full ? Isa::Load(v + half + i) : Isa::LoadN(v + half + i, m);
        const auto cv = full ? Isa::Load(c + i) : Isa::LoadN(c + i, m);
        const auto sv = full ? Isa::Load(s + i) : Isa::LoadN(s + i, m);
        const auto y1 =
            Isa::CanonNan(Isa::Sub(Isa::Mul(x1, cv), Isa::Mul(x2, sv)));
        const auto y2 =
            Isa::CanonNan(Isa::Add(Isa::Mul(x2, cv), Isa::Mul(x1, sv)));
        if (full) {
          Isa::Store(v + i, y1);
          Isa::Store(v + half + i, y2);
        } else {
          Isa::StoreN(v + i, m, y1);
          Isa::StoreN(v + half + i, m, y2);
        }
      });
    }
  }
}

// Applies y[i] = f(a[i], b[i]) elementwise over n floats; y may equal a or b.
template <class Isa, typename F>
void Elementwise2(const float* a, const float* b, int64_t n, float* y, F f) {
  int64_t i = 0;
  for (; i + 2 * Isa::kW <= n; i += 2 * Isa::kW) {
    const auto y0 = f(Isa::Load(a + i), Isa::Load(b + i));
    const auto y1 = f(Isa::Load(a + i + Isa::kW), Isa::Load(b + i + Isa::kW));
    Isa::Store(y + i, y0);
    Isa::Store(y + i + Isa::kW, y1);
  }
  for (; i < n; i += Isa::kW) {
    const auto m = Isa::FirstN(n - i < Isa::kW ? n - i : Isa::kW);
    Isa::StoreN(y + i, m, f(Isa::LoadN(a + i, m), Isa::LoadN(b + i, m)));
  }
}

// §3.6: y = (g / (1 + ExpF(-g))) * u.
template <class Isa>
void SwiGlu(const float* gate, const float* up, int64_t n, float* y) {
  const auto one = Isa::Set1(1.0f);
  Elementwise2<Isa>(gate, up, n, y, [&](auto g, auto u) {
    const auto silu = Isa::Div(g, Isa::Add(one, Isa::Exp(Isa::Neg(g))));
    return Isa::CanonNan(Isa::Mul(silu, u));
  });
}

// §3.8: y = a + b.
template <class Isa>
void Add(const float* a, const float* b, int64_t n, float* y) {
  Elementwise2<Isa>(
      a, b, n, y, [](auto x, auto z) { return Isa::CanonNan(Isa::Add(x, z)); });
}

// §3.7 ref::RowMax: canonical NaN if any element is NaN, else the maximum
// with +0 for a zero maximum (max is exact, so its order does not matter).
template <class Isa>
float RowMax(const float* x, int64_t n) {
  const auto neg_inf = Isa::Set1(-INFINITY);
  auto m0 = neg_inf;
  auto m1 = neg_inf;
  uint32_t nan = 0;
  int64_t i = 0;
  for (; i + 2 * Isa::kW <= n; i += 2 * Isa::kW) {
    const auto a = Isa::Load(x + i);
    const auto b = Isa::Load(x + i + Isa::kW);
    nan |= Isa::NanBits(a) | Isa::NanBits(b);
    m0 = Isa::Max(m0, a);
    m1 = Isa::Max(m1, b);
  }
  for (; i < n; i += Isa::kW) {
    const auto m = Isa::FirstN(n - i < Isa::kW ? n - i : Isa::kW);
    const auto a = Isa::LoadNOr(x + i, m, neg_inf);
    nan |= Isa::NanBits(a);
    m0 = Isa::Max(m0, a);
  }
  if (nan != 0) return CanonicalNan();
  const float mx = Isa::ReduceMax(Isa::Max(m0, m1));
  return mx == 0.0f ? 0.0f : mx;
}

// §3.7 ref::SoftmaxRow: m = RowMax, y = ExpF(x - m) with their Lane32 sum,
// then y / sum. y may equal x.
template <class Isa>
void SoftmaxRow(const float* x, int64_t n, float* y) {
  constexpr int kW = Isa::kW;
  const auto m = Isa::Set1(RowMax<Isa>(x, n));
  Lane32Acc<Isa> acc;
  acc.Clear();
  int64_t i = 0;
  for (; i + kLane32 <= n; i += kLane32) {
    LP_SIMD_UNROLL
    for (int k = 0; k < acc.kVecs; ++k) {
      const auto e = Isa::Exp(Isa::Sub(Isa::Load(x + i + k * kW), m));
      Isa::Store(y + i + k * kW, e);
      acc.v[k] = Isa::Add(acc.v[k], e);
    }
  }
  LP_SIMD_UNROLL
  for (int k = 0; k < acc.kVecs; ++k) {
    const int64_t j = i + k * kW;
    if (j >= n) break;
    const auto mask = Isa::FirstN(n - j < kW ? n - j : kW);
    const auto e = Isa::Exp(Isa::Sub(Isa::LoadN(x + j, mask), m));
    Isa::StoreN(y + j, mask, e);
    acc.v[k] = Isa::AddN(acc.v[k], e, mask);
  }
  const auto sum = Isa::Set1(acc.Fold());
  ForEachVector<Isa>(n, [&](int64_t j, int64_t len, auto mask) {
    if (len == kW) {
      Isa::Store(y + j, Isa::CanonNan(Isa::Div(Isa::Load(y + j), sum)));
    } else {
      Isa::StoreN(y + j, mask,
                  Isa::CanonNan(Isa::Div(Isa::LoadN(y + j, mask), sum)));
    }
  });
}

template <class Isa>
void SoftmaxRows(const float* x, int64_t rows, int64_t n, float* y) {
  for (int64_t r = 0; r < rows; ++r) SoftmaxRow<Isa>(x + r * n, n, y + r * n);
}

// §3.9: rows of the table widened exactly, NaN canonicalised.
template <class Isa>
void Embedding(const WeightView& table, const int32_t* ids, int64_t n_ids,
               float* y) {
  const int64_t dim = table.cols;
  for (int64_t r = 0; r < n_ids; ++r) {
    const WeightView row = {static_cast<const unsigned char*>(table.data) +
                                ids[r] * dim * DTypeSize(table.dtype),
                            table.dtype, 1, dim};
    float* yr = y + r * dim;
    ForEachVector<Isa>(dim, [&](int64_t i, int64_t len, auto m) {
      const auto v = Isa::CanonNan(LoadWeights<Isa>(row, i, len));
      if (len == Isa::kW) {
        Isa::Store(yr + i, v);
      } else {
        Isa::StoreN(yr + i, m, v);
      }
    });
  }
}

// §3.10 ref::ArgmaxRow: the first NaN if there is one, else the lowest index
// holding the maximum (== compares, so -0 and +0 tie).
template <class Isa>
int64_t ArgmaxRow(const float* x, int64_t n) {
  const float m = RowMax<Isa>(x, n);
  if (m != m) {
    for (int64_t i = 0;; ++i) {
      if (x[i] != x[i]) return i;
    }
  }
  const auto mv = Isa::Set1(m);
  int64_t i = 0;
  for (; i + Isa::kW <= n; i += Isa::kW) {
    const uint32_t eq = Isa::EqBits(Isa::Load(x + i), mv);
    if (eq != 0) return i + __builtin_ctz(eq);
  }
  for (; i < n; ++i) {
    if (x[i] == m) return i;
  }
  return 0;  // unreachable: some element equals the maximum.
}

template <class Isa>
void ArgmaxRows(const float* x, int64_t rows, int64_t n, int64_t* out) {
  for (int64_t r = 0; r < rows; ++r) out[r] = ArgmaxRow<Isa>(x + r * n, n);
}

}  // namespace layerproof::kernels::cpu::simd

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_SIMD_OPS_H_
