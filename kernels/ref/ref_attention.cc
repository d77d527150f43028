// §3.5 of docs/determinism.md: causal grouped-query attention.
//
// Row i of head h depends only on q[i][h] and keys/values 0 .. q_pos0 + i of
// KV head h / (n_heads / n_kv_heads), so a row computed in prefill and the
// same row computed by decode against the cache are bit-identical.
#include <cmath>
#include <vector>

#include "kernels/ref/reduction.h"
#include "kernels/ref/ref_ops.h"

namespace layerproof::kernels::ref {

void AttentionRowHead(const AttentionArgs& a, int64_t row, int64_t head,
                      float* p) {
  const int64_t d = a.head_dim;
  const int64_t kv_row = a.n_kv_heads * d;
  const int64_t g = head / (a.n_heads / a.n_kv_heads);
  const int64_t keys = a.q_pos0 + row + 1;
  // The score scale, rounded once: 1 / sqrt(head_dim), both ops IEEE.
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const float* q = a.q + (row * a.n_heads + head) * d;
  for (int64_t t = 0; t < keys; ++t) {
    const float* k = a.k + t * kv_row + g * d;
    p[t] = Lane32Dot(q, d, [&](int64_t e) { return k[e]; }) * scale;
  }
  SoftmaxRow(p, keys, p);
  float* out = a.out + (row * a.n_heads + head) * d;
  for (int64_t e = 0; e < d; ++e) {
    const float* v = a.v + g * d + e;
    out[e] = CanonicalizeNan(ChunkTreeDot(
        keys, [&](int64_t t) { return p[t]; },
        [&](int64_t t) { return v[t * kv_row]; }));
  }
}

void Attention(const AttentionArgs& a) {
  std::vector<float> p(a.n_kv);
  for (int64_t i = 0; i < a.nq; ++i) {
    for (int64_t h = 0; h < a.n_heads; ++h) AttentionRowHead(a, i, h, p.data());
  }
}

}  // namespace layerproof::kernels::ref
