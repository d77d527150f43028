// Number formats of the determinism contract (docs/determinism.md §1).
//
// Weights are stored as bf16, fp16 or fp32 and widened to fp32 exactly, or in
// one of llama.cpp's block-quantized formats (kernels/quant.h, §3.12); every
// activation is fp32. The widenings here are pure integer bit manipulation, so
// they give the same bits on every ISA and under every FP environment.
// Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_DTYPE_H_
#define LAYERPROOF_KERNELS_DTYPE_H_

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace layerproof::kernels {

// The numeric values are part of the model digest (kernels/model/digest.h):
// never renumber.
enum class DType : uint8_t {
  kF32 = 0,
  kBF16 = 1,
  kF16 = 2,
  // Block-quantized weights, llama.cpp's GGUF layouts (kernels/quant.h).
  kQ8_0 = 3,
  kQ4_0 = 4,
  kQ4_K = 5,
  kQ6_K = 6,
};

constexpr bool IsBlockQuantized(DType t) {
  return t == DType::kQ8_0 || t == DType::kQ4_0 || t == DType::kQ4_K ||
         t == DType::kQ6_K;
}
constexpr bool IsKnownDType(DType t) { return uint8_t(t) <= 6; }

// Bytes per element of a float format. Block-quantized formats have no
// per-element size: use BlockElems / BlockBytes / RowBytes.
constexpr int DTypeSize(DType t) { return t == DType::kF32 ? 4 : 2; }

// Elements per block (1 for float formats) and bytes per block.
constexpr int64_t BlockElems(DType t) {
  switch (t) {
    case DType::kQ8_0:
    case DType::kQ4_0:
      return 32;
    case DType::kQ4_K:
    case DType::kQ6_K:
      return 256;
    default:
      return 1;
  }
}
constexpr int64_t BlockBytes(DType t) {
  switch (t) {
    case DType::kQ8_0:
      return 34;
    case DType::kQ4_0:
      return 18;
    case DType::kQ4_K:
      return 144;
    case DType::kQ6_K:
      return 210;
    default:
      return DTypeSize(t);
  }
}
// Bytes of a row of `cols` elements; cols must be a multiple of BlockElems.
constexpr int64_t RowBytes(DType t, int64_t cols) {
  return cols / BlockElems(t) * BlockBytes(t);
}

std::string_view DTypeName(DType t);

// The one NaN every op writes (docs/determinism.md §4): positive quiet NaN.
// Platforms disagree on NaN payloads and signs, so outputs are canonicalised.
inline constexpr uint32_t kCanonicalNanBits = 0x7FC00000u;

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float BitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline float CanonicalNan() { return BitsToFloat(kCanonicalNanBits); }

// Returns x, or the canonical NaN when x is any NaN.
inline float CanonicalizeNan(float x) { return x != x ? CanonicalNan() : x; }

// bf16 -> fp32: exact, the bf16 bits are the top half of the fp32 bits.
inline float Bf16ToFloat(uint16_t h) { return BitsToFloat(uint32_t{h} << 16); }

// fp16 -> fp32: exact for every input, subnormals, infinities and NaN included.
inline float F16ToFloat(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t man = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (man << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {
    // Subnormal fp16: normalise the mantissa; the value is exact in fp32.
    exp = 113;
    while ((man & 0x400u) == 0) {
      man <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((man & 0x3FFu) << 13);
  }
  return BitsToFloat(bits);
}

// fp32 -> bf16 / fp16 with round-to-nearest-even, for tests and model
// synthesis; NaN maps to a quiet NaN.
uint16_t FloatToBf16(float f);
uint16_t FloatToF16(float f);

// Stores fp32 values in a weight format (round-to-nearest-even for bf16 and
// fp16), little-endian: for tests, golden inputs and model synthesis.
std::vector<unsigned char> EncodeWeights(const std::vector<float>& values,
                                         DType t);

// Reads element i of a row stored as dtype t, widened to fp32 exactly.
// `data` needs no alignment.
inline float LoadAsFloat(const void* data, DType t, int64_t i) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  if (t == DType::kF32) {
    float f;
    std::memcpy(&f, bytes + 4 * i, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, bytes + 2 * i, 2);
  return t == DType::kBF16 ? Bf16ToFloat(h) : F16ToFloat(h);
}

}  // namespace layerproof::kernels

#endif  // LAYERPROOF_KERNELS_DTYPE_H_
