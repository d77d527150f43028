// Packed block-quantized weights for the CPU GEMMs (docs/determinism.md
// §3.12) and the per-ISA quantized GEMM entry points.
//
// Packed layout. W[n][k] in a block format (kernels/quant.h) is cut into
// column panels of nr consecutive outputs. A panel is a sequence of *groups*:
// one unit (32 k) for Q8_0 and Q4_0, one super-block (8 units, 256 k) for
// Q4_K and Q6_K. A group holds its units, then the group's scales:
//   unit  = weights, then the unit's scales
//   weights, byte formats (Q8_0, Q6_K): 8 vectors g = 0..7 of nr lanes x 4
//           bytes; lane j, byte i of vector g = w_{4g+i} of output j, stored
//           as (w + byte_bias) mod 256 (byte_bias 128 makes them unsigned for
//           VNNI's u8 x s8 dot; 0 keeps them signed for AVX2's sign trick)
//   weights, nibble formats (Q4_0, Q4_K): 4 vectors g = 0..3 of nr lanes x 4
//           bytes; byte i of lane j = n_{4g+i} | n_{16+4g+i} << 4, where the
//           nibble n is the unsigned stored value (Q4_0: w + 8; Q4_K: w)
//   unit scales:  Q8_0, Q4_0: fp16 d[nr]; Q4_K: u8 sc[nr], u8 mn[nr];
//                 Q6_K: int8 sc0[nr], int8 sc1[nr]
//   group scales: Q4_K: fp16 d[nr], fp16 dmin[nr]; Q6_K: fp16 d[nr]
// So one vector load gives a lane per output and four consecutive k per
// lane: the shape of vpdpbusd, vpmaddubsw and sdot. The last panel is padded
// with zero weights and scales; padded outputs are never stored. Packing
// only moves bits (the encodings above are bijections of the stored
// integers): it never rounds.
//
// Thread safety: QuantPacked is immutable after construction.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_QUANT_PACKED_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_QUANT_PACKED_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/backend.h"
#include "kernels/quant.h"

namespace layerproof::kernels::cpu {

// The byte sizes of a panel's parts for one format and panel width.
struct QuantLayout {
  DType dtype = DType::kQ8_0;
  int64_t nr = 0;
  int byte_bias = 0;
  int64_t units_per_group = 1;
  int64_t unit_weight_bytes = 0;
  int64_t unit_bytes = 0;  // weights + unit scales
  int64_t group_bytes = 0;
  int64_t groups = 0;  // per panel
  int64_t panel_bytes = 0;

  // constexpr, so that a kernel knows its format's unit and group sizes at
  // compile time (quant_kernels.h).
  static constexpr QuantLayout Make(DType t, int64_t nr, int byte_bias,
                                    int64_t k) {
    QuantLayout l;
    l.dtype = t;
    l.nr = nr;
    l.byte_bias = byte_bias;
    const bool super = t == DType::kQ4_K || t == DType::kQ6_K;
    l.units_per_group = super ? 8 : 1;
    l.unit_weight_bytes = (l.nibbles() ? 16 : 32) * nr;
    l.unit_bytes = l.unit_weight_bytes + 2 * nr;
    const int64_t group_scales =
        t == DType::kQ4_K ? 4 * nr : (t == DType::kQ6_K ? 2 * nr : 0);
    l.group_bytes = l.units_per_group * l.unit_bytes + group_scales;
    l.groups = k / (quant::kUnit * l.units_per_group);
    l.panel_bytes = l.groups * l.group_bytes;
    return l;
  }
  constexpr bool nibbles() const {
    return dtype == DType::kQ4_0 || dtype == DType::kQ4_K;
  }
};

class QuantPacked final : public PackedWeights {
 public:
  QuantPacked(BackendKind kind, const WeightView& w, int64_t nr, int byte_bias);
  const QuantLayout& layout() const { return layout_; }
  int64_t panels() const { return panels_; }
  const unsigned char* panel(int64_t p) const {
    return bytes_.get() + p * layout_.panel_bytes;
  }

 private:
  void PackPanel(const WeightView& w, int64_t p);

  QuantLayout layout_;
  int64_t panels_;
  std::unique_ptr<unsigned char[]> bytes_;
};

// The quantized GEMM of one ISA: its panel width, packing, activation
// quantization and column-slice kernel. quantize_row is quant::QuantizeRow,
// bit for bit (x[k] to q[k] and units[k / 32]). gemm computes columns
// [n_begin, n_end) of y[x.m][w.n()] from the quantized rows, n_begin a
// multiple of n_align, bit-identical to kernels/ref.
struct QuantGemmOps {
  int64_t n_align;
  std::unique_ptr<PackedWeights> (*pack)(BackendKind kind, const WeightView& w);
  void (*quantize_row)(const float* x, int64_t k, int8_t* q,
                       quant::ActUnit* units);
  void (*gemm)(const quant::QuantizedRows& x, const PackedWeights& w,
               const float* bias, float* y, int64_t n_begin, int64_t n_end);
};

// The portable version: weights kept as stored, each output computed by
// kernels/ref's QuantRowDot, activations by quant::QuantizeRow. Bit-identical
// by construction. NEON quantizes its activations with quant::QuantizeRow
// too; AVX2 and AVX-512 have vector versions (avx2_quant.cc,
// avx512_quant.cc).
const QuantGemmOps& PortableQuantOps();

// Defined only in builds for the matching architecture. Avx512QuantOps uses
// VNNI when the CPU has it and the AVX2 kernels otherwise. NeonQuantOps uses
// sdot when the CPU has it (HWCAP_ASIMDDP) and LAYERPROOF_NEON_DOTPROD is not
// "0", and Armv8.0 widening multiplies otherwise; chosen once per process.
const QuantGemmOps& Avx2QuantOps();
const QuantGemmOps& Avx512QuantOps();
const QuantGemmOps& NeonQuantOps();

}  // namespace layerproof::kernels::cpu

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_QUANT_PACKED_H_
