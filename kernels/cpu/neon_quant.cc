// The NEON block-quantized GEMM (docs/determinism.md §3.12): the vocabulary
// of internal/quant_kernels.h on AArch64 Advanced SIMD, in two versions that
// compute the same exact integers:
//  * sdot (FEAT_DotProd, vdotq_laneq_s32): each instruction adds four exact
//    s8 x s8 products to an int32 lane;
//  * baseline Armv8.0 (vmull_s8 / vmlal_s8 into int16, then vpadalq_s16 /
//    vpaddlq_s16 and vpaddq_s32 into int32), arranged so that no int16 sum
//    can overflow:
//      - byte formats (signed weights, byte bias 0): |w * q| <= 128 * 127 =
//        16256, and an int16 lane adds two of them (<= 32512 < 2^15) before
//        the pairwise widening;
//      - nibbles (0..15): |n * q| <= 15 * 127 = 1905, and an int16 lane adds
//        the eight groups of a unit (<= 15240) before the widening.
// Nibbles are 0..15, so the signed s8 products of both versions are the
// stored nibbles'. Integer sums have no order, so both versions give the
// spec's integers; the fp32 steps after them are quant_kernels.h's, shared by
// both: results are bit-identical to kernels/ref.
//
// One lane is one output column; VF and VI are pairs of q-registers, so the
// panel width is 8 (quant_packed.h: a weight vector g is 8 lanes x 4 bytes,
// lanes 0-3 in the first 16 bytes, 4-7 in the next).
//
// Selection, once per process: the sdot version when getauxval(AT_HWCAP) has
// HWCAP_ASIMDDP, unless the environment sets LAYERPROOF_NEON_DOTPROD=0 (the
// baseline then runs everywhere; any other value changes nothing, so a CPU
// without the instruction is never sent to it).
//
// Target regions. quant_kernels.h and everything shared are baseline Armv8.0
// code. Only the sdot vocabulary's dot functions (below, under
// #pragma GCC target) and the one entry point that runs them are built for
// armv8.2-a+dotprod; that entry point is `flatten`, so GCC inlines the
// baseline kernel templates into it and then the sdot functions into them
// (an inline target check is made against the function inlined into). The
// baseline instantiation never contains an Armv8.2 instruction, and no weak
// (shared) function is compiled for dotprod: everything here has internal
// linkage. Fused multiply-adds are explicit vfmaq_f32 / vfmsq_f32 where the
// spec has an fma, and the build's -ffp-contract=off keeps every separate
// multiply and add rounded on its own.
#include <arm_neon.h>
#include <sys/auxv.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "kernels/cpu/internal/gemm_panels.h"
#include "kernels/cpu/internal/quant_kernels.h"
#include "kernels/cpu/internal/quant_packed.h"
#include "kernels/dtype.h"

#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)  // asm/hwcap.h; older sysroots lack it
#endif

namespace layerproof::kernels::cpu {
namespace {

// Eight lanes as two q-registers: v[0] = lanes 0-3, v[1] = lanes 4-7.
struct I32x8 {
  int32x4_t v[2];
};
struct F32x8 {
  float32x4_t v[2];
};

// Everything but the integer dots: loads, the fp32 steps and the store.
// Baseline Armv8.0.
struct NeonQuantCommon {
  static constexpr int64_t kNR = 8;
  static constexpr int kByteBias = 0;
  using VI = I32x8;
  using VF = F32x8;
  // The eight k-groups of one unit: g[g][h] = lanes 4h..4h+3 of vector g
  // (four bytes per lane; nibble formats: g < 4 low nibbles, g >= 4 high).
  struct UnitW {
    int8x16_t g[8][2];
  };

  __attribute__((always_inline)) static void LoadBytes(const unsigned char* p,
                                                       UnitW* w) {
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
      w->g[g][0] = vreinterpretq_s8_u8(vld1q_u8(p + 32 * g));
      w->g[g][1] = vreinterpretq_s8_u8(vld1q_u8(p + 32 * g + 16));
    }
  }
  __attribute__((always_inline)) static void LoadNibbles(const unsigned char* p,
                                                         UnitW* w) {
    const uint8x16_t low = vdupq_n_u8(0x0F);
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
      for (int h = 0; h < 2; ++h) {
        const uint8x16_t v = vld1q_u8(p + 32 * g + 16 * h);
        w->g[g][h] = vreinterpretq_s8_u8(vandq_u8(v, low));
        w->g[g + 4][h] = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));
      }
    }
  }

  static VF ToF(VI v) {  // exact: |v| < 2^24
    return {{vcvtq_f32_s32(v.v[0]), vcvtq_f32_s32(v.v[1])}};
  }
  static VI SubScalar(VI v, int32_t s) {
    const int32x4_t d = vdupq_n_s32(s);
    return {{vsubq_s32(v.v[0], d), vsubq_s32(v.v[1], d)}};
  }
  static VI Add(VI a, VI b) {
    return {{vaddq_s32(a.v[0], b.v[0]), vaddq_s32(a.v[1], b.v[1])}};
  }

  static VF Zero() { return {{vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)}}; }
  static VF Set1(float f) { return {{vdupq_n_f32(f), vdupq_n_f32(f)}}; }
  static VF Mul(VF a, VF b) {
    return {{vmulq_f32(a.v[0], b.v[0]), vmulq_f32(a.v[1], b.v[1])}};
  }
  static VF AddF(VF a, VF b) {
    return {{vaddq_f32(a.v[0], b.v[0]), vaddq_f32(a.v[1], b.v[1])}};
  }
  // a * b + c, one rounding (FMLA).
  static VF Fma(VF a, VF b, VF c) {
    return {
        {vfmaq_f32(c.v[0], a.v[0], b.v[0]), vfmaq_f32(c.v[1], a.v[1], b.v[1])}};
  }
  // c - a * b, one rounding (FMLS): fma(-a, b, c).
  static VF Fnmadd(VF a, VF b, VF c) {
    return {
        {vfmsq_f32(c.v[0], a.v[0], b.v[0]), vfmsq_f32(c.v[1], a.v[1], b.v[1])}};
  }
  // Eight fp16 bit patterns, widened exactly (FCVTL).
  static VF LoadHalfs(const unsigned char* p) {
    return {{vcvt_f32_f16(vreinterpret_f16_u8(vld1_u8(p))),
             vcvt_f32_f16(vreinterpret_f16_u8(vld1_u8(p + 8)))}};
  }
  static VF LoadU8(const unsigned char* p) {
    const uint16x8_t v = vmovl_u8(vld1_u8(p));
    return {{vcvtq_f32_u32(vmovl_u16(vget_low_u16(v))),
             vcvtq_f32_u32(vmovl_high_u16(v))}};
  }
  static VF LoadS8(const unsigned char* p) {
    const int16x8_t v = vmovl_s8(vreinterpret_s8_u8(vld1_u8(p)));
    return {{vcvtq_f32_s32(vmovl_s16(vget_low_s16(v))),
             vcvtq_f32_s32(vmovl_high_s16(v))}};
  }
  static VF Load(const float* p) { return {{vld1q_f32(p), vld1q_f32(p + 4)}}; }
  static void Store(float* p, VF v) {
    vst1q_f32(p, v.v[0]);
    vst1q_f32(p + 4, v.v[1]);
  }
  // + bias (once, after the tree), canonical NaN, store the first `count`
  // lanes (count clamped to [0, 8]). bias, if not null, has `count` entries.
  static void Finish(VF v, const float* bias, float* y, int64_t count) {
    if (count >= kNR) {
      for (int h = 0; h < 2; ++h) {
        float32x4_t s = v.v[h];
        if (bias != nullptr) s = vaddq_f32(s, vld1q_f32(bias + 4 * h));
        vst1q_f32(y + 4 * h, CanonicalizeNan4(s));
      }
      return;
    }
    float lanes[kNR];
    Store(lanes, v);
    for (int64_t j = 0; j < count; ++j) {
      float s = lanes[j];
      if (bias != nullptr) s = s + bias[j];
      y[j] = CanonicalizeNan(s);
    }
  }

 protected:
  static float32x4_t CanonicalizeNan4(float32x4_t v) {
    return vbslq_f32(vceqq_f32(v, v), v,
                     vreinterpretq_f32_u32(vdupq_n_u32(kCanonicalNanBits)));
  }
  // Four activation bytes x[0..4) in every 32-bit lane.
  static int8x16_t Broadcast4(const int8_t* x) {
    int32_t v;
    std::memcpy(&v, x, 4);
    return vreinterpretq_s8_s32(vdupq_n_s32(v));
  }
};

// Armv8.0 dots: widening multiplies into int16 (bounds in the file comment),
// then pairwise widening adds into int32.
struct NeonQuantBaseIsa : NeonQuantCommon {
  // Lanes 4h..4h+3 of the exact sum over groups g0..g0+3 of w * q.
  __attribute__((always_inline)) static int32x4_t DotBytesHalf(
      const UnitW& w, int h, int g0, const int8_t* x) {
    int32x4_t lo = vdupq_n_s32(0);  // lanes 0, 1 of the half, two pairs each
    int32x4_t hi = vdupq_n_s32(0);  // lanes 2, 3
#pragma GCC unroll 2
    for (int g = g0; g < g0 + 4; g += 2) {
      const int8x16_t xa = Broadcast4(x + 4 * g);
      const int8x16_t xb = Broadcast4(x + 4 * g + 4);
      int16x8_t pl = vmull_s8(vget_low_s8(w.g[g][h]), vget_low_s8(xa));
      pl = vmlal_s8(pl, vget_low_s8(w.g[g + 1][h]), vget_low_s8(xb));
      int16x8_t ph = vmull_high_s8(w.g[g][h], xa);
      ph = vmlal_high_s8(ph, w.g[g + 1][h], xb);
      lo = vpadalq_s16(lo, pl);
      hi = vpadalq_s16(hi, ph);
    }
    return vpaddq_s32(lo, hi);
  }
  __attribute__((always_inline)) static VI DotBytes(const UnitW& w, int g0,
                                                    const int8_t* x) {
    return {{DotBytesHalf(w, 0, g0, x), DotBytesHalf(w, 1, g0, x)}};
  }
  // Lanes 4h..4h+3 of the exact sum over all 32 k of n * q.
  __attribute__((always_inline)) static int32x4_t DotNibblesHalf(
      const UnitW& w, int h, const int8_t* x) {
    const int8x16_t x0 = Broadcast4(x);
    int16x8_t pl = vmull_s8(vget_low_s8(w.g[0][h]), vget_low_s8(x0));
    int16x8_t ph = vmull_high_s8(w.g[0][h], x0);
#pragma GCC unroll 8
    for (int g = 1; g < 8; ++g) {
      const int8x16_t xg = Broadcast4(x + 4 * g);
      pl = vmlal_s8(pl, vget_low_s8(w.g[g][h]), vget_low_s8(xg));
      ph = vmlal_high_s8(ph, w.g[g][h], xg);
    }
    return vpaddq_s32(vpaddlq_s16(pl), vpaddlq_s16(ph));
  }
  __attribute__((always_inline)) static VI DotNibbles(const UnitW& w,
                                                      const int8_t* x) {
    return {{DotNibblesHalf(w, 0, x), DotNibblesHalf(w, 1, x)}};
  }
};

std::unique_ptr<PackedWeights> NeonQuantPack(BackendKind kind,
                                             const WeightView& w) {
  return std::make_unique<QuantPacked>(kind, w, NeonQuantCommon::kNR,
                                       NeonQuantCommon::kByteBias);
}

// ------------------------------------------------ sdot (FEAT_DotProd) ---
#pragma GCC push_options
#pragma GCC target("arch=armv8.2-a+dotprod")

// Not always_inline: they are inlined where the flattened entry point below
// (a dotprod function) has absorbed their callers.
struct NeonQuantDotIsa : NeonQuantCommon {
  // Lanes 4h..4h+3: four sdot, group g0 + t against bytes 4t..4t+3 of xv.
  static int32x4_t DotHalf(const UnitW& w, int h, int g0, int8x16_t xv) {
    int32x4_t acc = vdotq_laneq_s32(vdupq_n_s32(0), w.g[g0][h], xv, 0);
    acc = vdotq_laneq_s32(acc, w.g[g0 + 1][h], xv, 1);
    acc = vdotq_laneq_s32(acc, w.g[g0 + 2][h], xv, 2);
    return vdotq_laneq_s32(acc, w.g[g0 + 3][h], xv, 3);
  }
  static VI DotBytes(const UnitW& w, int g0, const int8_t* x) {
    const int8x16_t xv = vld1q_s8(x + 4 * g0);
    return {{DotHalf(w, 0, g0, xv), DotHalf(w, 1, g0, xv)}};
  }
  static VI DotNibbles(const UnitW& w, const int8_t* x) {
    return Add(DotBytes(w, 0, x), DotBytes(w, 4, x));
  }
};

__attribute__((flatten)) void NeonQuantDotColumns(const quant::QuantizedRows& x,
                                                  const PackedWeights& w,
                                                  const float* bias, float* y,
                                                  int64_t n_begin,
                                                  int64_t n_end) {
  QuantColumns<NeonQuantDotIsa>(x, w, bias, y, n_begin, n_end);
}

#pragma GCC pop_options
// ---------------------------------------------------- end of dotprod ---

bool UseDotprod() {
  const char* env = std::getenv("LAYERPROOF_NEON_DOTPROD");
  if (env != nullptr && std::strcmp(env, "0") == 0) return false;
  return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
}

}  // namespace

const QuantGemmOps& NeonQuantOps() {
  static const QuantGemmOps base = {NeonQuantCommon::kNR, NeonQuantPack,
                                    quant::QuantizeRow,
                                    QuantColumns<NeonQuantBaseIsa>};
  static const QuantGemmOps dot = {NeonQuantCommon::kNR, NeonQuantPack,
                                   quant::QuantizeRow, NeonQuantDotColumns};
  static const bool use_dot = UseDotprod();
  return use_dot ? dot : base;
}

}  // namespace layerproof::kernels::cpu
