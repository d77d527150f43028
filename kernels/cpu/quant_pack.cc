// Packing of block-quantized weights (layout in internal/quant_packed.h) and
// the portable quantized GEMM. Baseline code: no ISA flags.
#include <algorithm>
#include <cstring>

#include "kernels/cpu/internal/quant_packed.h"
#include "kernels/ref/ref_ops.h"

namespace layerproof::kernels::cpu {
namespace {

using quant::kUnit;

// Byte offsets of the fp16 scales inside one stored block.
int64_t StoredDOffset(DType t) { return t == DType::kQ6_K ? 208 : 0; }

// Raw little-endian fp16 bits at p, copied (never converted) into the pack.
void CopyHalf(const unsigned char* p, unsigned char* out) {
  std::memcpy(out, p, 2);
}

}  // namespace

QuantPacked::QuantPacked(BackendKind kind, const WeightView& w, int64_t nr,
                         int byte_bias)
    : PackedWeights(kind, w.rows, w.cols, w.dtype),
      layout_(QuantLayout::Make(w.dtype, nr, byte_bias, w.cols)),
      panels_((w.rows + nr - 1) / nr),
      bytes_(new unsigned char[size_t(panels_ * layout_.panel_bytes)]()) {
  for (int64_t p = 0; p < panels_; ++p) PackPanel(w, p);
}

void QuantPacked::PackPanel(const WeightView& w, int64_t p) {
  const QuantLayout& l = layout_;
  const DType t = l.dtype;
  const int64_t nr = l.nr;
  const int64_t row_bytes = RowBytes(t, w.cols);
  const int64_t cols = std::min(nr, w.rows - p * nr);
  const auto* src = static_cast<const unsigned char*>(w.data);
  unsigned char* panel = bytes_.get() + p * l.panel_bytes;
  quant::WeightUnit unit;
  for (int64_t j = 0; j < cols; ++j) {
    const unsigned char* row = src + (p * nr + j) * row_bytes;
    for (int64_t g = 0; g < l.groups; ++g) {
      unsigned char* group = panel + g * l.group_bytes;
      unsigned char* gscales = group + l.units_per_group * l.unit_bytes;
      const unsigned char* block = row + g * BlockBytes(t);
      if (t == DType::kQ4_K) {
        CopyHalf(block, gscales + 2 * j);
        CopyHalf(block + 2, gscales + 2 * nr + 2 * j);
      } else if (t == DType::kQ6_K) {
        CopyHalf(block + StoredDOffset(t), gscales + 2 * j);
      }
      for (int64_t ui = 0; ui < l.units_per_group; ++ui) {
        const int64_t u = g * l.units_per_group + ui;
        quant::DecodeUnit(t, row, u, &unit);
        unsigned char* wts = group + ui * l.unit_bytes;
        unsigned char* scales = wts + l.unit_weight_bytes;
        if (l.nibbles()) {
          const int offset = t == DType::kQ4_0 ? 8 : 0;
          for (int gi = 0; gi < 4; ++gi) {
            for (int i = 0; i < 4; ++i) {
              const int lo = unit.w[4 * gi + i] + offset;
              const int hi = unit.w[16 + 4 * gi + i] + offset;
              wts[(gi * nr + j) * 4 + i] = uint8_t(lo | (hi << 4));
            }
          }
        } else {
          for (int gi = 0; gi < 8; ++gi) {
            for (int i = 0; i < 4; ++i) {
              wts[(gi * nr + j) * 4 + i] =
                  uint8_t(unit.w[4 * gi + i] + l.byte_bias);
            }
          }
        }
        switch (t) {
          case DType::kQ8_0:
          case DType::kQ4_0:
            CopyHalf(block, scales + 2 * j);
            break;
          case DType::kQ4_K:
            scales[j] = uint8_t(unit.sc[0]);
            scales[nr + j] = uint8_t(unit.mn);
            break;
          case DType::kQ6_K:
            scales[j] = uint8_t(int8_t(unit.sc[0]));
            scales[nr + j] = uint8_t(int8_t(unit.sc[1]));
            break;
          default:
            break;
        }
      }
    }
  }
}

namespace {

// Weights as stored, for the portable kernel.
class StoredQuantWeights final : public PackedWeights {
 public:
  StoredQuantWeights(BackendKind kind, const WeightView& w)
      : PackedWeights(kind, w.rows, w.cols, w.dtype),
        bytes_(static_cast<const unsigned char*>(w.data),
               static_cast<const unsigned char*>(w.data) +
                   w.rows * RowBytes(w.dtype, w.cols)) {}
  WeightView view() const { return {bytes_.data(), dtype(), n(), k()}; }

 private:
  std::vector<unsigned char> bytes_;
};

std::unique_ptr<PackedWeights> PortablePack(BackendKind kind,
                                            const WeightView& w) {
  return std::make_unique<StoredQuantWeights>(kind, w);
}

void PortableGemm(const quant::QuantizedRows& x, const PackedWeights& w,
                  const float* bias, float* y, int64_t n_begin, int64_t n_end) {
  ref::QuantGemmColumns(x, static_cast<const StoredQuantWeights&>(w).view(),
                        bias, y, n_begin, n_end);
}

}  // namespace

const QuantGemmOps& PortableQuantOps() {
  static const QuantGemmOps ops = {1, PortablePack, quant::QuantizeRow,
                                   PortableGemm};
  return ops;
}

}  // namespace layerproof::kernels::cpu
