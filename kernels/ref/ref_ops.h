// The scalar oracle's ops as free functions: the spec in code
// (docs/determinism.md §3). Short and readable, never fast. Every other
// backend must equal these bit for bit. Arguments are assumed validated
// (kernels/backend.cc). Thread safety: pure functions over caller buffers.
#ifndef LAYERPROOF_KERNELS_REF_REF_OPS_H_
#define LAYERPROOF_KERNELS_REF_REF_OPS_H_

#include <cstdint>

#include "kernels/backend.h"
#include "kernels/quant.h"

namespace layerproof::kernels::ref {

// §3.1: y[m][n] = ChunkTree_k(x[m][k] * W[n][k]) (+ bias[n]).
void Gemm(const float* x, int64_t m, const WeightView& w, const float* bias,
          float* y);
// Columns [n_begin, n_end) only (y keeps its full row stride w.rows).
void GemmColumns(const float* x, int64_t m, const WeightView& w,
                 const float* bias, float* y, int64_t n_begin, int64_t n_end);

// §3.12: one output of a block-quantized GEMM before the bias, for a
// weight row stored as t and one quantized activation row (k elements):
// each chunk of 8 units is an fma chain from +0 of UnitProduct * the unit's
// activation scale, in ascending unit order; the chunks meet in the halving
// tree.
float QuantRowDot(DType t, const unsigned char* w_row, const int8_t* q,
                  const quant::ActUnit* units, int64_t k);
// Columns [n_begin, n_end) of y[x.m][w.rows] for activations already
// quantized: QuantRowDot, + bias, canonical NaN. GemmColumns quantizes x and
// calls this for block-quantized weights.
void QuantGemmColumns(const quant::QuantizedRows& x, const WeightView& w,
                      const float* bias, float* y, int64_t n_begin,
                      int64_t n_end);

// §3.3.
void RmsNorm(const float* x, int64_t rows, int64_t dim, const WeightView& gamma,
             float eps, float* y);

// §3.4.
void Rope(float* x, int64_t rows, int64_t n_heads, const int64_t* positions,
          const RopeTable& table);

// §3.5.
void Attention(const AttentionArgs& a);
// One (row, head) of Attention; scores holds at least n_kv floats.
void AttentionRowHead(const AttentionArgs& a, int64_t row, int64_t head,
                      float* scores);

// §3.6.
void SwiGlu(const float* gate, const float* up, int64_t n, float* y);

// §3.7: the row maximum: NaN if any element is NaN, +0 for a zero maximum.
float RowMax(const float* x, int64_t n);
// §3.7: one softmax row; y may equal x.
void SoftmaxRow(const float* x, int64_t n, float* y);

// §3.8.
void Add(const float* a, const float* b, int64_t n, float* y);

// §3.9.
void Embedding(const WeightView& table, const int32_t* ids, int64_t n_ids,
               float* y);

// §3.10: NaN ranks above every number; ties go to the lowest index.
int64_t ArgmaxRow(const float* x, int64_t n);

}  // namespace layerproof::kernels::ref

#endif  // LAYERPROOF_KERNELS_REF_REF_OPS_H_
