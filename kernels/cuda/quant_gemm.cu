// §3.12 of docs/determinism.md on the GPU: y[m][n] = x[m][k] . W[n][k]^T
// (+ bias[n]) with W in GGUF blocks (Q8_0, Q4_0, Q4_K, Q6_K), kept as stored
// (gemm_layout.h). Two kernels:
//
//  1. QuantizeActivationsKernel: one warp per 32-element unit of x, lane i
//     holding element i, exactly quant::QuantizeActUnit: a = max |x_i| (a
//     warp max; max has no order), d = NaN and q = 0 when any element is
//     non-finite, else d = a / 127 (__fdiv_rn), d == 0 -> d = +0 and q = 0,
//     else q_i = clamp(rne(x_i / d), +-127) (__fdiv_rn, __float2int_rn). The
//     half sums S0, S1 are integer shuffle sums. Output to scratch: q [m][k]
//     int8, d [m][k/32] fp32, (S0, S1) [m][k/32] int2.
//  2. QuantGemmKernel: one warp per output column j, for MR activation rows
//     at a time; a block is 8 warps (8 columns) that share the activation
//     slab staged in shared memory. k is walked in slabs of 32 units; lane l
//     owns unit 32s + l of the slab, decodes its weights from the stored
//     block, and computes for every row the unit product of
//     quant::UnitProduct: the integer dot with __dp4a (exact, so any order),
//     I = sc0 * D0 + sc1 * D1 (exact, |I| < 2^24), u = __fmul_rn(d, float(I)),
//     Q4_K: u = __fmaf_rn(-dmin, float(mn * (S0 + S1)), u). A chunk of 256 k
//     is 8 units = 8 consecutive lanes, so lanes 8g .. 8g+7 hold chunk
//     4s + g; its chain p = +0; p = __fmaf_rn(u_b, d_b, p) runs over the
//     chunk's units in ascending order (shuffles of width 8; units past k are
//     skipped, never multiplied). Lane r keeps row r's halving-tree stack:
//     the chunk partials are pushed in ascending order and folded with
//     TreeMergesAfterLeaf (reduction.cuh), exactly ref::HalvingTree. Then
//     + bias once (__fadd_rn), NaN canonicalised.
//
// Every output is computed by the same sequence of operations for every m,
// row pass and launch shape, so prefill equals decode and every result is
// bit-identical to kernels/ref QuantRowDot / QuantGemmColumns.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/cuda/internal/cuda_status.h"
#include "kernels/cuda/internal/dtype.cuh"
#include "kernels/cuda/internal/grid.h"
#include "kernels/cuda/internal/quant.cuh"
#include "kernels/cuda/internal/quant_gemm.h"
#include "kernels/cuda/internal/reduction.cuh"
#include "kernels/quant.h"

namespace layerproof::kernels::cuda {

static_assert(kQuantUnit == quant::kUnit, "the unit is a spec constant");
static_assert(kQuantUnitsPerChunk * kQuantUnit == kChunk, "a chunk is 8 units");
static_assert(quant::kActMax == 127, "activations are int8 in [-127, 127]");

namespace {

constexpr int64_t AlignUp16(int64_t v) { return (v + 15) / 16 * 16; }

// Byte offsets of the three parts of the activation scratch.
struct ActScratch {
  int64_t d_offset = 0;    // fp32 unit scales
  int64_t sum_offset = 0;  // int2 half sums
  int64_t bytes = 0;
};

ActScratch MakeActScratch(int64_t m, int64_t k) {
  const int64_t units = m * (k / kQuantUnit);
  ActScratch s;
  s.d_offset = AlignUp16(m * k);
  s.sum_offset = s.d_offset + AlignUp16(units * 4);
  s.bytes = s.sum_offset + units * 8;
  return s;
}

// ------------------------------------------------------- activations ----

constexpr int kQuantizeThreads = 256;
constexpr int kQuantizeWarps = kQuantizeThreads / 32;

__global__ void __launch_bounds__(kQuantizeThreads)
    QuantizeActivationsKernel(const float* __restrict__ x, int64_t units,
                              int8_t* __restrict__ q, float* __restrict__ d_out,
                              int2* __restrict__ sums) {
  const int lane = threadIdx.x % 32;
  const int64_t stride = int64_t{gridDim.x} * kQuantizeWarps;
  // u is uniform across the warp, so every shuffle below is converged.
  for (int64_t u = int64_t{blockIdx.x} * kQuantizeWarps + threadIdx.x / 32;
       u < units; u += stride) {
    const float v = x[u * kQuantUnit + lane];
    const bool finite = __all_sync(
        kFullMask, (__float_as_uint(v) & 0x7F800000u) != 0x7F800000u);
    float a = fabsf(v);
#pragma unroll
    for (int off = 16; off >= 1; off /= 2) {
      a = fmaxf(a, __shfl_xor_sync(kFullMask, a, off));
    }
    float d = 0.0f;
    int qi = 0;
    if (!finite) {
      d = __uint_as_float(kCanonicalNanBits);
    } else {
      d = __fdiv_rn(a, static_cast<float>(quant::kActMax));
      if (d == 0.0f) {
        d = 0.0f;  // a zero unit, or one whose scale underflows: +0
      } else {
        qi = __float2int_rn(__fdiv_rn(v, d));  // |v / d| < 2^8: no overflow
        qi = min(max(qi, -quant::kActMax), quant::kActMax);
      }
    }
    q[u * kQuantUnit + lane] = static_cast<int8_t>(qi);
    // Half sums: the xor offsets 8..1 stay inside lanes 0-15 and 16-31.
    int s = qi;
#pragma unroll
    for (int off = 8; off >= 1; off /= 2) {
      s += __shfl_xor_sync(kFullMask, s, off);
    }
    const int s1 = __shfl_sync(kFullMask, s, 16);
    if (lane == 0) {
      d_out[u] = d;
      sums[u] = make_int2(s, s1);
    }
  }
}

// -------------------------------------------------------------- GEMM ----

constexpr int kQuantWarps = 8;  // output columns per block
constexpr int kQuantThreads = kQuantWarps * 32;
constexpr int kSlabUnits = 32;  // one unit per lane
constexpr int kChunksPerSlab = kSlabUnits / kQuantUnitsPerChunk;
constexpr int kUnitWords = kQuantUnit / 4;  // 8 words of 4 int8
// Word stride of one (row, word) line of the staged slab: 36 makes both the
// coalesced staging writes and the per-lane reads conflict-free.
constexpr int kSlabStride = kSlabUnits + 4;
constexpr int kQuantMaxRows = 8;
static_assert(kChunksPerSlab == 4, "a slab is four chunks");

// One weight unit in registers: w[v] holds elements 4v .. 4v+3, one int8
// each (Q4_0's unsigned nibbles and Q6_K's 6-bit values before their
// offsets, which the integer dot subtracts).
struct UnitWeights {
  int w[kUnitWords];
  float d;
  float dmin;  // Q4_K
  int sc0;     // Q4_K: sc_j; Q6_K: the scale of elements 0-15
  int sc1;     // Q4_K: m_j; Q6_K: the scale of elements 16-31
};

// Unit b of a row stored as T (quant::DecodeUnit, integer for integer).
template <DType T>
__device__ __forceinline__ void DecodeWeights(const unsigned char* row,
                                              int64_t b, UnitWeights* uw) {
  if constexpr (T == DType::kQ8_0) {
    const unsigned char* blk = row + b * 34;
    uw->d = F16BitsToFloat(*reinterpret_cast<const uint16_t*>(blk));
#pragma unroll
    for (int v = 0; v < kUnitWords; ++v) {
      uw->w[v] = static_cast<int>(LoadWordHalves(blk + 2 + 4 * v));
    }
  } else if constexpr (T == DType::kQ4_0) {
    // Element i < 16 is the low nibble of qs[i], i >= 16 the high nibble of
    // qs[i - 16]; stored value = w + 8.
    const unsigned char* blk = row + b * 18;
    uw->d = F16BitsToFloat(*reinterpret_cast<const uint16_t*>(blk));
#pragma unroll
    for (int v = 0; v < 4; ++v) {
      const uint32_t qs = LoadWordHalves(blk + 2 + 4 * v);
      uw->w[v] = static_cast<int>(qs & 0x0F0F0F0Fu);
      uw->w[v + 4] = static_cast<int>((qs >> 4) & 0x0F0F0F0Fu);
    }
  } else if constexpr (T == DType::kQ4_K) {
    // Super-blocks are 144 bytes, so 16-byte aligned in an aligned row.
    const unsigned char* blk = row + (b / 8) * 144;
    const int j = static_cast<int>(b % 8);
    const uint32_t dd = *reinterpret_cast<const uint32_t*>(blk);
    uw->d = F16BitsToFloat(static_cast<uint16_t>(dd & 0xFFFFu));
    uw->dmin = F16BitsToFloat(static_cast<uint16_t>(dd >> 16));
    Q4KScaleMin(blk + 4, j, &uw->sc0, &uw->sc1);
    const auto* qs = reinterpret_cast<const uint4*>(blk + 16 + 32 * (j / 2));
    const uint4 lo = qs[0];
    const uint4 hi = qs[1];
    const uint32_t words[kUnitWords] = {lo.x, lo.y, lo.z, lo.w,
                                        hi.x, hi.y, hi.z, hi.w};
    const int shift = 4 * (j % 2);
#pragma unroll
    for (int v = 0; v < kUnitWords; ++v) {
      uw->w[v] = static_cast<int>((words[v] >> shift) & 0x0F0F0F0Fu);
    }
  } else {
    static_assert(T == DType::kQ6_K, "a block-quantized format");
    const unsigned char* blk = row + (b / 8) * 210;
    const int h = static_cast<int>(b % 8) / 4;
    const int q = static_cast<int>(b % 4);
    const unsigned char* ql = blk + 64 * h + 32 * (q & 1);
    const unsigned char* qh = blk + 128 + 32 * h;
    const int lo_shift = q < 2 ? 0 : 4;
    const int hi_shift = 2 * q;
#pragma unroll
    for (int v = 0; v < kUnitWords; ++v) {
      const uint32_t l = LoadWordHalves(ql + 4 * v);
      const uint32_t hb = LoadWordHalves(qh + 4 * v);
      uw->w[v] = static_cast<int>(((l >> lo_shift) & 0x0F0F0F0Fu) |
                                  (((hb >> hi_shift) & 0x03030303u) << 4));
    }
    const uint16_t sc =
        *reinterpret_cast<const uint16_t*>(blk + 192 + 8 * h + 2 * q);
    uw->sc0 = static_cast<int8_t>(sc & 0xFFu);
    uw->sc1 = static_cast<int8_t>(sc >> 8);
    uw->d = F16BitsToFloat(*reinterpret_cast<const uint16_t*>(blk + 208));
  }
}

// quant::UnitProduct for one decoded unit and one activation unit (q: its
// 8 words; sums: S0, S1).
template <DType T>
__device__ __forceinline__ float UnitProduct(const UnitWeights& uw,
                                             const int* q, int2 sums) {
  int d0 = 0;
  int d1 = 0;
#pragma unroll
  for (int v = 0; v < 4; ++v) {
    d0 = __dp4a(uw.w[v], q[v], d0);
    d1 = __dp4a(uw.w[v + 4], q[v + 4], d1);
  }
  if constexpr (T == DType::kQ8_0) {
    return __fmul_rn(uw.d, __int2float_rn(d0 + d1));
  } else if constexpr (T == DType::kQ4_0) {
    const int dot = d0 + d1 - 8 * (sums.x + sums.y);  // w = nibble - 8
    return __fmul_rn(uw.d, __int2float_rn(dot));
  } else if constexpr (T == DType::kQ4_K) {
    const float u = __fmul_rn(uw.d, __int2float_rn(uw.sc0 * (d0 + d1)));
    const int mins = uw.sc1 * (sums.x + sums.y);
    return __fmaf_rn(-uw.dmin, __int2float_rn(mins), u);
  } else {
    // w = 6-bit value - 32, per half.
    const int dot = uw.sc0 * (d0 - 32 * sums.x) + uw.sc1 * (d1 - 32 * sums.y);
    return __fmul_rn(uw.d, __int2float_rn(dot));
  }
}

template <DType T, int MR>
__global__ void __launch_bounds__(kQuantThreads)
    QuantGemmKernel(const int8_t* __restrict__ xq, const float* __restrict__ xd,
                    const int2* __restrict__ xsum, int64_t m, int64_t units,
                    const unsigned char* __restrict__ w, int64_t row_bytes,
                    int64_t n, const float* __restrict__ bias,
                    float* __restrict__ y) {
  __shared__ int q_sh[MR][kUnitWords][kSlabStride];
  __shared__ float d_sh[MR][kSlabUnits];
  __shared__ int2 s_sh[MR][kSlabUnits];
  const int tid = threadIdx.x;
  const int lane = tid % 32;
  const int group = lane / kQuantUnitsPerChunk;
  const int64_t j = int64_t{blockIdx.x} * kQuantWarps + tid / 32;
  const bool active = j < n;  // uniform across the warp
  const unsigned char* wrow = w + (active ? j : 0) * row_bytes;
  const int64_t chunks =
      (units + kQuantUnitsPerChunk - 1) / kQuantUnitsPerChunk;
  const int64_t slabs = (units + kSlabUnits - 1) / kSlabUnits;
  const int* xq_words = reinterpret_cast<const int*>(xq);
  const int64_t row_words = units * kUnitWords;

  for (int64_t r0 = int64_t{blockIdx.y} * MR; r0 < m;
       r0 += int64_t{gridDim.y} * MR) {
    float stack[kTreeStackMax];  // lane r < MR: row r0 + r's open subtrees
    int sp = 0;
    for (int64_t s = 0; s < slabs; ++s) {
      const int64_t b0 = s * kSlabUnits;
      __syncthreads();  // every warp is done with the previous slab
      for (int idx = tid; idx < MR * kSlabUnits * kUnitWords;
           idx += kQuantThreads) {
        const int r = idx / (kSlabUnits * kUnitWords);
        const int l = (idx / kUnitWords) % kSlabUnits;
        const int v = idx % kUnitWords;
        const int64_t row = r0 + r;
        const int64_t b = b0 + l;
        q_sh[r][v][l] = row < m && b < units
                            ? xq_words[row * row_words + b * kUnitWords + v]
                            : 0;
      }
      for (int idx = tid; idx < MR * kSlabUnits; idx += kQuantThreads) {
        const int r = idx / kSlabUnits;
        const int l = idx % kSlabUnits;
        const int64_t row = r0 + r;
        const int64_t b = b0 + l;
        const bool ok = row < m && b < units;
        d_sh[r][l] = ok ? xd[row * units + b] : 0.0f;
        s_sh[r][l] = ok ? xsum[row * units + b] : make_int2(0, 0);
      }
      __syncthreads();
      if (!active) continue;

      // Unit products: lane l, unit b0 + l, every row.
      float u[MR];
      const int64_t b = b0 + lane;
      if (b < units) {
        UnitWeights uw;
        DecodeWeights<T>(wrow, b, &uw);
#pragma unroll
        for (int r = 0; r < MR; ++r) {
          int q[kUnitWords];
#pragma unroll
          for (int v = 0; v < kUnitWords; ++v) q[v] = q_sh[r][v][lane];
          u[r] = UnitProduct<T>(uw, q, s_sh[r][lane]);
        }
      } else {
#pragma unroll
        for (int r = 0; r < MR; ++r) u[r] = 0.0f;
      }

      // Chunk chains: lanes 8g .. 8g+7 each compute chunk 4s + g's partial.
      float p[MR];
#pragma unroll
      for (int r = 0; r < MR; ++r) p[r] = 0.0f;
#pragma unroll
      for (int i = 0; i < kQuantUnitsPerChunk; ++i) {
        const int src = group * kQuantUnitsPerChunk + i;
        const bool live = b0 + src < units;
#pragma unroll
        for (int r = 0; r < MR; ++r) {
          const float ui = __shfl_sync(kFullMask, u[r], i, kQuantUnitsPerChunk);
          if (live) p[r] = __fmaf_rn(ui, d_sh[r][src], p[r]);
        }
      }

      // Leaves in ascending chunk order onto lane r's stack for row r.
#pragma unroll
      for (int g = 0; g < kChunksPerSlab; ++g) {
        const int64_t c = s * kChunksPerSlab + g;
        if (c >= chunks) break;  // uniform
        float leaf = 0.0f;
#pragma unroll
        for (int r = 0; r < MR; ++r) {
          const float v = __shfl_sync(kFullMask, p[r], g * kQuantUnitsPerChunk);
          if (lane == r) leaf = v;
        }
        if (lane < MR) {
          stack[sp++] = leaf;
          for (int merges = TreeMergesAfterLeaf(c, chunks); merges > 0;
               --merges) {
            --sp;
            stack[sp - 1] = __fadd_rn(stack[sp - 1], stack[sp]);
          }
        }
      }
    }
    if (active && lane < MR && r0 + lane < m) {
      float out = stack[0];
      if (bias != nullptr) out = __fadd_rn(out, bias[j]);
      y[(r0 + lane) * n + j] = CanonNan(out);
    }
  }
}

template <DType T, int MR>
void LaunchRows(const int8_t* xq, const float* xd, const int2* xsum, int64_t m,
                int64_t units, const DeviceGemmWeights& w, const float* bias,
                float* y, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(CeilDiv(w.layout.n, kQuantWarps)),
                  static_cast<unsigned>(std::min(CeilDiv(m, MR), kMaxGridYZ)));
  QuantGemmKernel<T, MR><<<grid, kQuantThreads, 0, stream>>>(
      xq, xd, xsum, m, units, static_cast<const unsigned char*>(w.data),
      w.layout.row_bytes, w.layout.n, bias, y);
}

template <DType T>
void LaunchTyped(const int8_t* xq, const float* xd, const int2* xsum, int64_t m,
                 int64_t units, const DeviceGemmWeights& w, const float* bias,
                 float* y, cudaStream_t stream) {
  static_assert(kQuantMaxRows == 8, "the largest row pass below");
  if (m == 1) {
    LaunchRows<T, 1>(xq, xd, xsum, m, units, w, bias, y, stream);
  } else if (m == 2) {
    LaunchRows<T, 2>(xq, xd, xsum, m, units, w, bias, y, stream);
  } else if (m <= 4) {
    LaunchRows<T, 4>(xq, xd, xsum, m, units, w, bias, y, stream);
  } else {
    LaunchRows<T, 8>(xq, xd, xsum, m, units, w, bias, y, stream);
  }
}

bool Aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

}  // namespace

size_t QuantGemmScratchBytes(int64_t m, int64_t k) {
  return static_cast<size_t>(MakeActScratch(m, k).bytes);
}

Status LaunchQuantGemm(const float* x, int64_t m, const DeviceGemmWeights& w,
                       const float* bias, float* y, void* scratch,
                       size_t scratch_bytes, cudaStream_t stream) {
  const GemmLayout& l = w.layout;
  if (!IsBlockQuantized(l.dtype)) {
    return InvalidArgument("LaunchGemm: w.layout.dtype: not block-quantized");
  }
  if (l.k % BlockElems(l.dtype) != 0 || l.row_bytes != RowBytes(l.dtype, l.k)) {
    return InvalidArgument("LaunchGemm: w.layout: not a " +
                           std::string(DTypeName(l.dtype)) + " layout of k " +
                           std::to_string(l.k));
  }
  if (!Aligned16(w.data)) {
    return InvalidArgument("LaunchGemm: w.data: want 16-byte alignment");
  }
  const ActScratch a = MakeActScratch(m, l.k);
  if (scratch == nullptr || !Aligned16(scratch) ||
      scratch_bytes < static_cast<size_t>(a.bytes)) {
    return InvalidArgument(
        "LaunchGemm: scratch: got " + std::to_string(scratch_bytes) +
        " bytes, want >= " + std::to_string(a.bytes) + ", 16-byte aligned");
  }
  const int64_t units = m * (l.k / kQuantUnit);
  auto* base = static_cast<unsigned char*>(scratch);
  auto* xq = reinterpret_cast<int8_t*>(base);
  auto* xd = reinterpret_cast<float*>(base + a.d_offset);
  auto* xsum = reinterpret_cast<int2*>(base + a.sum_offset);
  QuantizeActivationsKernel<<<StrideGrid(units, kQuantizeWarps),
                              kQuantizeThreads, 0, stream>>>(x, units, xq, xd,
                                                             xsum);
  const int64_t row_units = l.k / kQuantUnit;
  switch (l.dtype) {
    case DType::kQ8_0:
      LaunchTyped<DType::kQ8_0>(xq, xd, xsum, m, row_units, w, bias, y, stream);
      break;
    case DType::kQ4_0:
      LaunchTyped<DType::kQ4_0>(xq, xd, xsum, m, row_units, w, bias, y, stream);
      break;
    case DType::kQ4_K:
      LaunchTyped<DType::kQ4_K>(xq, xd, xsum, m, row_units, w, bias, y, stream);
      break;
    case DType::kQ6_K:
      LaunchTyped<DType::kQ6_K>(xq, xd, xsum, m, row_units, w, bias, y, stream);
      break;
    default:
      return InvalidArgument("LaunchGemm: w.layout.dtype: not block-quantized");
  }
  return LaunchStatus("quantized Gemm launch");
}

}  // namespace layerproof::kernels::cuda
