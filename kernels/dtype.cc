#include "kernels/dtype.h"

namespace layerproof::kernels {

std::string_view DTypeName(DType t) {
  switch (t) {
    case DType::kF32:
      return "F32";
    case DType::kBF16:
      return "BF16";
    case DType::kF16:
      return "F16";
    case DType::kQ8_0:
      return "Q8_0";
    case DType::kQ4_0:
      return "Q4_0";
    case DType::kQ4_K:
      return "Q4_K";
    case DType::kQ6_K:
      return "Q6_K";
  }
  return "?";
}

uint16_t FloatToBf16(float f) {
  uint32_t u = FloatBits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((u >> 16) | 0x40u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

uint16_t FloatToF16(float f) {
  const uint32_t u = FloatBits(f);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return sign | 0x7E00u;   // NaN
  if (a >= 0x477FF000u) return sign | 0x7C00u;  // rounds to inf
  if (a < 0x33000001u) return sign;             // rounds to 0
  int exp = int(a >> 23) - 127;
  uint32_t man = (a & 0x7FFFFFu) | 0x800000u;
  int shift = exp >= -14 ? 13 : 13 + (-14 - exp);  // subnormal: more
  uint32_t rounded = man >> shift;
  const uint32_t rem = man & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (rounded & 1u))) ++rounded;
  if (exp >= -14) {
    // rounded holds the 11-bit significand; a carry bumps the exponent.
    return sign | uint16_t(((uint32_t(exp + 15) << 10) + (rounded - 0x400u)));
  }
  return sign | uint16_t(rounded);
}

std::vector<unsigned char> EncodeWeights(const std::vector<float>& values,
                                         DType t) {
  std::vector<unsigned char> bytes(values.size() * DTypeSize(t));
  for (size_t i = 0; i < values.size(); ++i) {
    if (t == DType::kF32) {
      std::memcpy(&bytes[4 * i], &values[i], 4);
    } else {
      const uint16_t h =
          t == DType::kBF16 ? FloatToBf16(values[i]) : FloatToF16(values[i]);
      std::memcpy(&bytes[2 * i], &h, 2);
    }
  }
  return bytes;
}

}  // namespace layerproof::kernels
