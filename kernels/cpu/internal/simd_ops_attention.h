// ISA-generic vector causal grouped-query attention (docs/determinism.md
// §3.5), instantiated by each ISA's ops table (kernels/cpu/avx512_ops.cc,
// avx2_ops.cc).
//
// One call computes a range of query heads [h0, h1) of one query row, which
// may span several KV groups. The heads of one KV group are processed in
// units of up to Isa::kMaxHeadGroup heads that share every load of a key or
// value row, so a decode step reads each KV head's cache once, not once per
// query head. Per (row, head) the arithmetic is exactly ref's:
//
//  1. scores: p[t] = Lane32Dot(q, k[t]) * scale (§3.2 order: kW-lane vector
//     accumulators from +0, fma in ascending element order, tails masked,
//     then the butterfly 16, 8, 4, 2, 1);
//  2. p = SoftmaxRow(p) (simd::SoftmaxRow, §3.7);
//  3. out[e] = ChunkTree over t of p[t] * v[t][e] (§3.1): vectorised over e,
//     within each chunk of 256 keys an fma chain from +0 in ascending t, the
//     chunk partials combined by the halving tree T(n) = T(ceil(n/2)) +
//     T(floor(n/2)), evaluated depth first.
//
// Memory order: a K or V row holds all KV heads of one position (4 KiB for
// 8 heads x 128), and one KV head's slice of it is too short for the
// hardware prefetchers. Both passes therefore walk the keys in tiles of
// kKeyTile and, within a tile, every unit of the range, so a range of several
// KV groups reads whole rows nearly in order; each unit also prefetches its
// slice one tile ahead. In step 3 a unit's accumulators live in registers
// within a tile and in the chunk's partial buffer between tiles. A range of a
// whole row is the fast case: one task per query head (the ref's cut) reads
// every KV head's cache once per query head.
//
// Contract: bit-identical to ref::AttentionRowHead for every (row, head),
// however the heads are cut into ranges. Everything is a template on the ISA
// (see simd_ops.h). Thread safety: pure functions over caller buffers.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_SIMD_OPS_ATTENTION_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_SIMD_OPS_ATTENTION_H_

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/backend.h"
#include "kernels/cpu/internal/simd_ops.h"

namespace layerproof::kernels::cpu::simd {

// Chunk length of the ChunkTree order (docs/determinism.md §3.1).
inline constexpr int64_t kAttnChunk = 256;
// Keys each unit of a range works through before the next unit; K and V
// rows are prefetched one tile ahead.
inline constexpr int64_t kKeyTile = 16;

// Prefetches `bytes` bytes at p, one touch per 64-byte line.
template <class Isa>
void PrefetchRow(const float* p, int64_t bytes) {
  const char* c = reinterpret_cast<const char*>(p);
  for (int64_t off = 0; off < bytes; off += 64) Isa::Prefetch(c + off);
}

// What a pass prefetches: `bytes` bytes at base + t * kv_row for rows
// t < end. A plain aggregate: no inline code shared between ISA TUs.
struct Prefetch {
  const float* base;
  int64_t bytes;
  int64_t end;
};

// Calls fn(head, kh) for the units of heads [h0, h1): runs of kh heads (4,
// 2 or 1, at most Isa::kMaxHeadGroup) that share one KV head.
template <class Isa, typename Fn>
void ForEachUnit(int64_t h0, int64_t h1, int64_t group, Fn fn) {
  int64_t h = h0;
  while (h < h1) {
    const int64_t group_end = (h / group + 1) * group;
    const int64_t n = (group_end < h1 ? group_end : h1) - h;
    const int kh = n >= 4 && Isa::kMaxHeadGroup >= 4   ? 4
                   : n >= 2 && Isa::kMaxHeadGroup >= 2 ? 2
                                                       : 1;
    fn(h, kh);
    h += kh;
  }
}

// Step 1 for one key row kt and kH heads: the Lane32 accumulators of
// q[h] . kt, folded down to one vector each (Lane32Acc::VecFold) in s[h].
template <class Isa, int kH>
void AttentionKeyDot(const float* const* q, const float* kt, int64_t d,
                     typename Isa::V* s) {
  constexpr int kW = Isa::kW;
  using V = typename Isa::V;
  Lane32Acc<Isa> acc[kH];
  LP_SIMD_UNROLL
  for (int h = 0; h < kH; ++h) acc[h].Clear();
  int64_t i = 0;
  for (; i + kLane32 <= d; i += kLane32) {
    LP_SIMD_UNROLL
    for (int j = 0; j < Lane32Acc<Isa>::kVecs; ++j) {
      const V kv = Isa::Load(kt + i + j * kW);
      LP_SIMD_UNROLL
      for (int h = 0; h < kH; ++h) {
        acc[h].v[j] = Isa::Fma(Isa::Load(q[h] + i + j * kW), kv, acc[h].v[j]);
      }
    }
  }
  // The tail: lanes past d keep their value (a padded +0 term could turn a
  // -0 lane into +0).
  LP_SIMD_UNROLL
  for (int j = 0; j < Lane32Acc<Isa>::kVecs; ++j) {
    const int64_t e = i + j * kW;
    if (e >= d) break;
    const auto m = Isa::FirstN(d - e < kW ? d - e : kW);
    const V kv = Isa::LoadN(kt + e, m);
    LP_SIMD_UNROLL
    for (int h = 0; h < kH; ++h) {
      acc[h].v[j] = Isa::FmaN(Isa::LoadN(q[h] + e, m), kv, acc[h].v[j], m);
    }
  }
  LP_SIMD_UNROLL
  for (int h = 0; h < kH; ++h) s[h] = acc[h].VecFold();
}

// Step 1 for the kH heads q[0..kH) and keys [t0, t1):
// p[h][t] = Lane32Dot(q[h], k + t * kv_row) * scale.
template <class Isa, int kH>
void AttentionScores(const float* const* q, const float* k, int64_t t0,
                     int64_t t1, const Prefetch& pf, int64_t d, int64_t kv_row,
                     float scale, float* const* p) {
  for (int64_t t = t0; t < t1; ++t) {
    if (t + kKeyTile < pf.end) {
      PrefetchRow<Isa>(pf.base + (t + kKeyTile) * kv_row, pf.bytes);
    }
    typename Isa::V s[kH];
    AttentionKeyDot<Isa, kH>(q, k + t * kv_row, d, s);
    LP_SIMD_UNROLL
    for (int h = 0; h < kH; ++h) p[h][t] = Isa::Fold(s[h]) * scale;
  }
}

// Step 3, keys [t0, t1) of a chunk for kH heads and kVecs vectors of
// columns: out[h][j kW ..] continues its fma chain over ascending t with
// p[h][t] * v[t][j kW ..]. v points at the first column of key 0; out rows
// are d floats apart. The last vector holds only the columns in `last`.
template <class Isa, int kH, int kVecs>
void AttentionPvChunk(const float* const* p, const float* v, int64_t t0,
                      int64_t t1, const Prefetch& pf, int64_t kv_row,
                      typename Isa::Mask last, float* out, int64_t d) {
  constexpr int kW = Isa::kW;
  using V = typename Isa::V;
  V acc[kH][kVecs];
  LP_SIMD_UNROLL
  for (int h = 0; h < kH; ++h) {
    LP_SIMD_UNROLL
    for (int j = 0; j < kVecs; ++j) {
      acc[h][j] = j + 1 < kVecs ? Isa::Load(out + h * d + j * kW)
                                : Isa::LoadN(out + h * d + j * kW, last);
    }
  }
  for (int64_t t = t0; t < t1; ++t) {
    const float* vt = v + t * kv_row;
    if (t + kKeyTile < pf.end) {
      PrefetchRow<Isa>(pf.base + (t + kKeyTile) * kv_row, pf.bytes);
    }
    V pt[kH];
    LP_SIMD_UNROLL
    for (int h = 0; h < kH; ++h) pt[h] = Isa::Set1(p[h][t]);
    LP_SIMD_UNROLL
    for (int j = 0; j < kVecs; ++j) {
      const V vv = j + 1 < kVecs ? Isa::Load(vt + j * kW)
                                 : Isa::LoadN(vt + j * kW, last);
      LP_SIMD_UNROLL
      for (int h = 0; h < kH; ++h) acc[h][j] = Isa::Fma(pt[h], vv, acc[h][j]);
    }
  }
  LP_SIMD_UNROLL
  for (int h = 0; h < kH; ++h) {
    LP_SIMD_UNROLL
    for (int j = 0; j < kVecs; ++j) {
      if (j + 1 < kVecs) {
        Isa::Store(out + h * d + j * kW, acc[h][j]);
      } else {
        Isa::StoreN(out + h * d + j * kW, last, acc[h][j]);
      }
    }
  }
}

// Widest column block, in vectors, for kH heads.
template <class Isa, int kH>
constexpr int MaxPvVecs() {
  return Isa::kMaxAcc / kH < 8 ? Isa::kMaxAcc / kH : 8;
}

// AttentionPvChunk for `vecs` (1 .. MaxPvVecs<Isa, kH>()) vectors.
template <class Isa, int kH, int kVecs = MaxPvVecs<Isa, kH>()>
void AttentionPvChunkN(int vecs, const float* const* p, const float* v,
                       int64_t t0, int64_t t1, const Prefetch& pf,
                       int64_t kv_row, typename Isa::Mask last, float* out,
                       int64_t d) {
  if constexpr (kVecs > 1) {
    if (vecs < kVecs) {
      AttentionPvChunkN<Isa, kH, kVecs - 1>(vecs, p, v, t0, t1, pf, kv_row,
                                            last, out, d);
      return;
    }
  }
  AttentionPvChunk<Isa, kH, kVecs>(p, v, t0, t1, pf, kv_row, last, out, d);
}

// One query row and heads [h0, h1) of it; `scratch` holds
// ScratchFloats(h1 - h0, keys(), head_dim) floats.
template <class Isa>
struct AttendRange {
  const AttentionArgs* a;
  int64_t row, h0, h1;
  float* scratch;

  // Levels below the root of the halving tree over `count` chunks.
  static int64_t TreeDepth(int64_t count) {
    return count == 1 ? 0 : 1 + TreeDepth((count + 1) / 2);
  }
  static int64_t ScratchFloats(int64_t heads, int64_t keys, int64_t d) {
    const int64_t chunks = (keys + kAttnChunk - 1) / kAttnChunk;
    return heads * (keys + TreeDepth(chunks) * d);
  }

  int64_t keys() const { return a->q_pos0 + row + 1; }
  int64_t heads() const { return h1 - h0; }
  int64_t group() const { return a->n_heads / a->n_kv_heads; }
  // Scores (heads x keys), then one heads x head_dim buffer per tree level.
  float* Scores(int64_t h) const { return scratch + (h - h0) * keys(); }
  float* Level(int64_t level) const {
    return scratch + heads() * keys() + level * heads() * a->head_dim;
  }
};

// Step 3, one chunk [c0, c1) for all heads of the range into dst (heads x
// d), in tiles of kKeyTile keys: each unit's accumulators go through dst
// between tiles, which changes no operation or its order.
template <class Isa>
void AttentionPvLeaf(const AttendRange<Isa>& r, int64_t c0, int64_t c1,
                     float* dst) {
  const AttentionArgs& a = *r.a;
  const int64_t d = a.head_dim;
  const int64_t kv_row = a.n_kv_heads * d;
  const int64_t group = r.group();
  ForEachVector<Isa>(r.heads() * d, [&](int64_t i, int64_t len, auto m) {
    if (len == Isa::kW) {
      Isa::Store(dst + i, Isa::Zero());
    } else {
      Isa::StoreN(dst + i, m, Isa::Zero());
    }
  });
  for (int64_t t0 = c0; t0 < c1; t0 += kKeyTile) {
    const int64_t t1 = t0 + kKeyTile < c1 ? t0 + kKeyTile : c1;
    ForEachUnit<Isa>(r.h0, r.h1, group, [&](int64_t head, int kh) {
      const float* v = a.v + (head / group) * d;
      const float* p[4] = {r.Scores(head), r.Scores(head + (kh > 1)),
                           r.Scores(head + (kh > 2 ? 2 : 0)),
                           r.Scores(head + (kh > 3 ? 3 : 0))};
      float* out = dst + (head - r.h0) * d;
      auto block = [&](auto kh_const) {
        constexpr int kH = decltype(kh_const)::value;
        constexpr int64_t kBlock = MaxPvVecs<Isa, kH>() * Isa::kW;
        for (int64_t e0 = 0; e0 < d; e0 += kBlock) {
          const int64_t cols = d - e0 < kBlock ? d - e0 : kBlock;
          const int vecs = static_cast<int>((cols + Isa::kW - 1) / Isa::kW);
          const auto last = Isa::FirstN(cols - (vecs - 1) * Isa::kW);
          const Prefetch pf = {v + e0, cols * 4, r.keys()};
          AttentionPvChunkN<Isa, kH>(vecs, p, v + e0, t0, t1, pf, kv_row, last,
                                     out + e0, d);
        }
      };
      if (kh == 4) {
        block(std::integral_constant<int, 4>());
      } else if (kh == 2) {
        block(std::integral_constant<int, 2>());
      } else {
        block(std::integral_constant<int, 1>());
      }
    });
  }
}

// Step 3, chunks [c0, c0 + count) combined by the halving tree into dst;
// `level` is dst's depth in the tree (deeper levels use Level(level + 1)).
template <class Isa>
void AttentionPvTree(const AttendRange<Isa>& r, int64_t c0, int64_t count,
                     int64_t level, float* dst) {
  if (count == 1) {
    const int64_t t0 = c0 * kAttnChunk;
    const int64_t t1 = t0 + kAttnChunk < r.keys() ? t0 + kAttnChunk : r.keys();
    AttentionPvLeaf<Isa>(r, t0, t1, dst);
    return;
  }
  const int64_t left = (count + 1) / 2;
  AttentionPvTree<Isa>(r, c0, left, level, dst);
  float* right = r.Level(level);
  AttentionPvTree<Isa>(r, c0 + left, count - left, level + 1, right);
  const int64_t n = r.heads() * r.a->head_dim;
  ForEachVector<Isa>(n, [&](int64_t i, int64_t len, auto m) {
    if (len == Isa::kW) {
      Isa::Store(dst + i, Isa::Add(Isa::Load(dst + i), Isa::Load(right + i)));
    } else {
      Isa::StoreN(dst + i, m,
                  Isa::Add(Isa::LoadN(dst + i, m), Isa::LoadN(right + i, m)));
    }
  });
}

// Attention for one row and heads [h0, h1).
template <class Isa>
void Attend(const AttendRange<Isa>& r) {
  const AttentionArgs& a = *r.a;
  const int64_t d = a.head_dim;
  const int64_t kv_row = a.n_kv_heads * d;
  const int64_t group = r.group();
  const int64_t keys = r.keys();
  // The score scale, rounded once, as ref: 1 / sqrt(head_dim).
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  for (int64_t t0 = 0; t0 < keys; t0 += kKeyTile) {
    const int64_t t1 = t0 + kKeyTile < keys ? t0 + kKeyTile : keys;
    ForEachUnit<Isa>(r.h0, r.h1, group, [&](int64_t head, int kh) {
      const float* q[4];
      float* p[4];
      for (int h = 0; h < 4; ++h) {
        const int64_t hh = head + (h < kh ? h : 0);
        q[h] = a.q + (r.row * a.n_heads + hh) * d;
        p[h] = r.Scores(hh);
      }
      const float* k = a.k + (head / group) * d;
      const Prefetch pf = {k, d * 4, keys};
      if (kh == 4) {
        AttentionScores<Isa, 4>(q, k, t0, t1, pf, d, kv_row, scale, p);
      } else if (kh == 2) {
        AttentionScores<Isa, 2>(q, k, t0, t1, pf, d, kv_row, scale, p);
      } else {
        AttentionScores<Isa, 1>(q, k, t0, t1, pf, d, kv_row, scale, p);
      }
    });
  }
  for (int64_t h = r.h0; h < r.h1; ++h) {
    SoftmaxRow<Isa>(r.Scores(h), keys, r.Scores(h));
  }
  // The root of the tree is the output itself: the heads of a row are
  // contiguous there, d floats apart, like the tree's buffers.
  float* out = a.out + (r.row * a.n_heads + r.h0) * d;
  const int64_t chunks = (keys + kAttnChunk - 1) / kAttnChunk;
  AttentionPvTree<Isa>(r, 0, chunks, 0, out);
  ForEachVector<Isa>(r.heads() * d, [&](int64_t i, int64_t len, auto m) {
    if (len == Isa::kW) {
      Isa::Store(out + i, Isa::CanonNan(Isa::Load(out + i)));
    } else {
      Isa::StoreN(out + i, m, Isa::CanonNan(Isa::LoadN(out + i, m)));
    }
  });
}

// The IsaOps::attention entry: (row, head) tasks [task_begin, task_end),
// task = row * n_heads + head, done one row at a time. scratch(n) returns n
// floats of per-thread scratch.
template <class Isa, typename Scratch>
void AttentionTasks(const AttentionArgs& a, int64_t task_begin,
                    int64_t task_end, Scratch scratch) {
  int64_t t = task_begin;
  while (t < task_end) {
    const int64_t row = t / a.n_heads;
    const int64_t h0 = t % a.n_heads;
    const int64_t row_end = (row + 1) * a.n_heads;
    const int64_t h1 =
        (task_end < row_end ? task_end : row_end) - row * a.n_heads;
    const int64_t keys = a.q_pos0 + row + 1;
    AttendRange<Isa> r = {&a, row, h0, h1, nullptr};
    r.scratch =
        scratch(AttendRange<Isa>::ScratchFloats(h1 - h0, keys, a.head_dim));
    Attend<Isa>(r);
    t += h1 - h0;
  }
}

}  // namespace layerproof::kernels::cpu::simd

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_SIMD_OPS_ATTENTION_H_
