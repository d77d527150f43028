#include "kernels/cuda/cross_check.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <utility>

#include "kernels/golden.h"
#include "kernels/quant.h"
#include "kernels/ref/rope_table.h"

namespace layerproof::kernels {
namespace {

std::string Hex(float f) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08x", FloatBits(f));
  return buf;
}

const char* Name(DType t) {
  return t == DType::kF32 ? "f32" : t == DType::kBF16 ? "bf16" : "f16";
}

CrossCheckResult Start(std::string name) {
  CrossCheckResult r;
  r.name = std::move(name);
  return r;
}

// Records the first failing status of the candidate or ref call.
bool Failed(CrossCheckResult& r, const Status& s, const char* who) {
  if (s.ok()) return false;
  r.status = Status(s.code(), std::string(who) + ": " + s.message());
  return true;
}

template <typename... Args>
std::string Format(const char* fmt, Args... args) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), fmt, args...);
  return buf;
}

const char* QuantScalesName(QuantScales s) {
  switch (s) {
    case QuantScales::kSane:
      return "sane";
    case QuantScales::kSomeZero:
      return "some-zero";
    case QuantScales::kExtreme:
      return "extreme";
    case QuantScales::kRandomBits:
      return "random-bits";
  }
  return "?";
}

// Offsets of the fp16 scales inside one stored block.
// m rows of k activations for the quantized GEMM (see CheckQuantGemmShape).
std::vector<float> QuantActivations(uint32_t seed, int64_t m, int64_t k,
                                    bool specials) {
  constexpr int64_t kUnit = quant::kUnit;
  std::vector<float> x = GoldenFloats(seed, m * k, 2.0f, false);
  std::mt19937_64 rng(seed ^ 0x51554E54u);
  const int64_t units = k / kUnit;
  for (int64_t u = 0; u < m * units; ++u) {
    float* e = x.data() + u * kUnit;
    switch (rng() % 8) {
      case 0:  // a zero unit (signed zeros)
        for (int64_t i = 0; i < kUnit; ++i) e[i] *= 0.0f;
        break;
      case 1: {  // magnitudes 2^-100 .. 2^99
        const float f = std::ldexp(1.0f, int(rng() % 200) - 100);
        for (int64_t i = 0; i < kUnit; ++i) e[i] *= f;
        break;
      }
      case 2: {  // exact ties: d = s, x_i / d = integer + 1/2
        const float f = std::ldexp(1.0f, int(rng() % 40) - 20);
        e[0] = 127.0f * f;
        for (int64_t i = 1; i < kUnit; ++i) {
          e[i] = (float(i - 16) + 0.5f) * f;
        }
        break;
      }
      case 3:  // subnormal units: d rounds to 2^-149 and q clamps at 127
        for (int64_t i = 0; i < kUnit; ++i) {
          e[i] = std::ldexp(float(i % 2 ? 6 * i : -6 * i), -149);
        }
        break;
      case 4:  // so small that d underflows to +0
        for (int64_t i = 0; i < kUnit; ++i) {
          e[i] = std::ldexp(float(i % 60), -149);
        }
        break;
      default:
        break;
    }
  }
  if (!specials) return x;
  const float kFinite[] = {-0.0f, std::numeric_limits<float>::denorm_min(),
                           -1e-40f, 3.4e38f, -3.4e38f};
  for (int64_t r = 0; r < m; ++r) {
    float* row = x.data() + r * k;
    row[rng() % k] = kFinite[rng() % 5];
    row[rng() % k] = kFinite[rng() % 5];
    // Two rows of three get a non-finite unit: all their outputs are NaN.
    const int64_t kind = (r + seed) % 3;
    if (kind == 0) row[rng() % k] = std::numeric_limits<float>::quiet_NaN();
    if (kind == 1) {
      row[rng() % k] = rng() % 2 ? INFINITY : -INFINITY;
    }
  }
  return x;
}

}  // namespace

StoredMatrix QuantMatrix(uint32_t seed, int64_t rows, int64_t cols, DType dtype,
                         QuantScales scales) {
  StoredMatrix m;
  m.dtype = dtype;
  m.rows = rows;
  m.cols = cols;
  m.bytes.resize(static_cast<size_t>(rows * RowBytes(dtype, cols)));
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < m.bytes.size(); i += 8) {
    const uint64_t v = rng();
    for (size_t j = 0; j < 8 && i + j < m.bytes.size(); ++j) {
      m.bytes[i + j] = static_cast<unsigned char>(v >> (8 * j));
    }
  }
  if (scales == QuantScales::kRandomBits) return m;
  std::uniform_real_distribution<float> uniform(1e-3f, 0.1f);
  const uint16_t kExtreme[] = {0x7C00, 0xFC00, 0x7E01, 0x0003,
                               0x8001, 0x7BFF, 0x8000, 0x0000};
  const int64_t blocks =
      static_cast<int64_t>(m.bytes.size()) / BlockBytes(dtype);
  for (int64_t b = 0; b < blocks; ++b) {
    int s = 0;
    for (size_t off : quant::HalfScaleOffsets(dtype)) {
      float v = uniform(rng);
      if (rng() % 2) v = -v;
      uint16_t h = FloatToF16(v);
      if (scales == QuantScales::kSomeZero && b % 4 == 3) h = 0;
      if (scales == QuantScales::kExtreme && b % 3 == 1) {
        h = kExtreme[(b / 3 + s) % 8];
      }
      std::memcpy(&m.bytes[size_t(b * BlockBytes(dtype)) + off], &h, 2);
      ++s;
    }
  }
  return m;
}

StoredMatrix StoreMatrix(const std::vector<float>& values, int64_t rows,
                         int64_t cols, DType dtype) {
  StoredMatrix m;
  m.dtype = dtype;
  m.rows = rows;
  m.cols = cols;
  m.bytes.resize(values.size() * DTypeSize(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kF32) {
      std::memcpy(&m.bytes[4 * i], &values[i], 4);
    } else {
      const uint16_t h = dtype == DType::kBF16 ? FloatToBf16(values[i])
                                               : FloatToF16(values[i]);
      std::memcpy(&m.bytes[2 * i], &h, 2);
    }
  }
  return m;
}

void CompareBits(const std::vector<float>& got, const std::vector<float>& want,
                 CrossCheckResult& r) {
  r.elements = static_cast<int64_t>(want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (FloatBits(got[i]) == FloatBits(want[i])) continue;
    if (r.mismatches++ == 0) {
      r.first_mismatch = "index " + std::to_string(i) + ": got " + Hex(got[i]) +
                         ", want " + Hex(want[i]);
    }
  }
}

CrossCheckResult CheckGemm(Backend& b, Backend& ref, std::string name,
                           const std::vector<float>& x, int64_t m,
                           const StoredMatrix& w,
                           const std::vector<float>& bias) {
  CrossCheckResult r = Start(std::move(name));
  const float* bp = bias.empty() ? nullptr : bias.data();
  std::vector<float> got(m * w.rows), want(m * w.rows);
  auto packed = b.PackWeights(w.view());
  if (Failed(r, packed.status(), b.name().data())) return r;
  auto ref_packed = ref.PackWeights(w.view());
  if (Failed(r, ref_packed.status(), "ref")) return r;
  if (Failed(r, b.Gemm(x.data(), m, **packed, bp, got.data()),
             b.name().data()) ||
      Failed(r, ref.Gemm(x.data(), m, **ref_packed, bp, want.data()), "ref")) {
    return r;
  }
  CompareBits(got, want, r);
  return r;
}

CrossCheckResult CheckAttention(Backend& b, Backend& ref, std::string name,
                                const AttentionArgs& shape,
                                const std::vector<float>& q,
                                const std::vector<float>& k,
                                const std::vector<float>& v) {
  CrossCheckResult r = Start(std::move(name));
  const size_t out_size = shape.nq * shape.n_heads * shape.head_dim;
  std::vector<float> got(out_size), want(out_size);
  AttentionArgs a = shape;
  a.q = q.data();
  a.k = k.data();
  a.v = v.data();
  a.out = got.data();
  if (Failed(r, b.Attention(a), b.name().data())) return r;
  a.out = want.data();
  if (Failed(r, ref.Attention(a), "ref")) return r;
  CompareBits(got, want, r);
  return r;
}

CrossCheckResult CheckGemmShape(Backend& b, Backend& ref, uint32_t seed,
                                int64_t m, int64_t k, int64_t n, DType dtype,
                                bool bias, bool specials) {
  const std::vector<float> x = GoldenFloats(seed, m * k, 2.0f, specials);
  const StoredMatrix w =
      StoreMatrix(GoldenFloats(seed + 1, n * k, 0.05f, specials), n, k, dtype);
  const std::vector<float> bv =
      bias ? GoldenFloats(seed + 2, n, 0.5f, false) : std::vector<float>();
  return CheckGemm(
      b, ref,
      Format("gemm %s m=%lld k=%lld n=%lld%s%s seed=%u", Name(dtype),
             (long long)m, (long long)k, (long long)n, bias ? " bias" : "",
             specials ? " specials" : "", seed),
      x, m, w, bv);
}

CrossCheckResult CheckAttentionShape(Backend& b, Backend& ref, uint32_t seed,
                                     int64_t nq, int64_t q_pos0,
                                     int64_t n_heads, int64_t n_kv_heads,
                                     int64_t head_dim, bool specials) {
  AttentionArgs a;
  a.nq = nq;
  a.q_pos0 = q_pos0;
  a.n_kv = q_pos0 + nq;
  a.n_heads = n_heads;
  a.n_kv_heads = n_kv_heads;
  a.head_dim = head_dim;
  const std::vector<float> q =
      GoldenFloats(seed, nq * n_heads * head_dim, 1.0f, false);
  const std::vector<float> k =
      GoldenFloats(seed + 1, a.n_kv * n_kv_heads * head_dim, 1.0f, specials);
  const std::vector<float> v =
      GoldenFloats(seed + 2, a.n_kv * n_kv_heads * head_dim, 1.0f, specials);
  return CheckAttention(
      b, ref,
      Format("attention nq=%lld q_pos0=%lld heads=%lld kv_heads=%lld "
             "head_dim=%lld%s seed=%u",
             (long long)nq, (long long)q_pos0, (long long)n_heads,
             (long long)n_kv_heads, (long long)head_dim,
             specials ? " specials" : "", seed),
      a, q, k, v);
}

CrossCheckResult CheckRmsNormShape(Backend& b, Backend& ref, uint32_t seed,
                                   int64_t rows, int64_t dim, DType gamma,
                                   bool specials) {
  CrossCheckResult r = Start(Format(
      "rmsnorm %s rows=%lld dim=%lld%s seed=%u", Name(gamma), (long long)rows,
      (long long)dim, specials ? " specials" : "", seed));
  const std::vector<float> x = GoldenFloats(seed, rows * dim, 3.0f, specials);
  const StoredMatrix g =
      StoreMatrix(GoldenFloats(seed + 1, dim, 1.5f, false), 1, dim, gamma);
  std::vector<float> got(rows * dim), want(rows * dim);
  if (Failed(r, b.RmsNorm(x.data(), rows, dim, g.view(), 1e-5f, got.data()),
             b.name().data()) ||
      Failed(r, ref.RmsNorm(x.data(), rows, dim, g.view(), 1e-5f, want.data()),
             "ref")) {
    return r;
  }
  CompareBits(got, want, r);
  return r;
}

CrossCheckResult CheckRopeShape(Backend& b, Backend& ref, uint32_t seed,
                                int64_t rows, int64_t n_heads, int64_t head_dim,
                                bool specials) {
  CrossCheckResult r =
      Start(Format("rope rows=%lld heads=%lld head_dim=%lld%s seed=%u",
                   (long long)rows, (long long)n_heads, (long long)head_dim,
                   specials ? " specials" : "", seed));
  constexpr int64_t kPositions = 4096;
  StatusOr<RopeTable> table = BuildRopeTable(head_dim, 10000.0, kPositions);
  if (Failed(r, table.status(), "BuildRopeTable")) return r;
  std::mt19937_64 rng(seed);
  std::vector<int64_t> pos(rows);
  for (int64_t& p : pos) p = static_cast<int64_t>(rng() % kPositions);
  std::vector<float> got =
      GoldenFloats(seed, rows * n_heads * head_dim, 4.0f, specials);
  std::vector<float> want = got;
  if (Failed(r, b.Rope(got.data(), rows, n_heads, pos.data(), *table),
             b.name().data()) ||
      Failed(r, ref.Rope(want.data(), rows, n_heads, pos.data(), *table),
             "ref")) {
    return r;
  }
  CompareBits(got, want, r);
  return r;
}

CrossCheckResult CheckSoftmaxShape(Backend& b, Backend& ref, uint32_t seed,
                                   int64_t rows, int64_t n, bool specials) {
  CrossCheckResult r =
      Start(Format("softmax rows=%lld n=%lld%s seed=%u", (long long)rows,
                   (long long)n, specials ? " specials" : "", seed));
  std::vector<float> x = GoldenFloats(seed, rows * n, 30.0f, specials);
  if (rows > 1) {  // one all -inf row: 0/0 everywhere
    for (int64_t i = 0; i < n; ++i) x[n + i] = -INFINITY;
  }
  std::vector<float> got(rows * n), want(rows * n);
  if (Failed(r, b.Softmax(x.data(), rows, n, got.data()), b.name().data()) ||
      Failed(r, ref.Softmax(x.data(), rows, n, want.data()), "ref")) {
    return r;
  }
  CompareBits(got, want, r);
  return r;
}

CrossCheckResult CheckSwiGluShape(Backend& b, Backend& ref, uint32_t seed,
                                  int64_t n) {
  CrossCheckResult r =
      Start(Format("swiglu n=%lld specials seed=%u", (long long)n, seed));
  const std::vector<float> g = GoldenFloats(seed, n, 120.0f, true);
  const std::vector<float> u = GoldenFloats(seed + 1, n, 12.0f, true);
  std::vector<float> got(n), want(n);
  if (Failed(r, b.SwiGlu(g.data(), u.data(), n, got.data()), b.name().data()) ||
      Failed(r, ref.SwiGlu(g.data(), u.data(), n, want.data()), "ref")) {
    return r;
  }
  CompareBits(got, want, r);
  return r;
}

CrossCheckResult CheckAddShape(Backend& b, Backend& ref, uint32_t seed,
                               int64_t n) {
  CrossCheckResult r =
      Start(Format("add n=%lld specials seed=%u", (long long)n, seed));
  const std::vector<float> x = GoldenFloats(seed, n, 1e38f, true);
  const std::vector<float> y = GoldenFloats(seed + 1, n, 3e38f, true);
  std::vector<float> got(n), want(n);
  if (Failed(r, b.Add(x.data(), y.data(), n, got.data()), b.name().data()) ||
      Failed(r, ref.Add(x.data(), y.data(), n, want.data()), "ref")) {
    return r;
  }
  CompareBits(got, want, r);
  return r;
}

// Looks up n_ids random rows (drawn from `seed`) of table t on b and on ref
// and compares the bits.
CrossCheckResult CompareEmbedding(Backend& b, Backend& ref,
                                  const StoredMatrix& t, uint32_t seed,
                                  int64_t vocab, int64_t dim, int64_t n_ids,
                                  CrossCheckResult r) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> ids(n_ids);
  for (int32_t& id : ids) id = static_cast<int32_t>(rng() % vocab);
  std::vector<float> got(n_ids * dim), want(n_ids * dim);
  if (Failed(r, b.Embedding(t.view(), ids.data(), n_ids, got.data()),
             b.name().data()) ||
      Failed(r, ref.Embedding(t.view(), ids.data(), n_ids, want.data()),
             "ref")) {
    return r;
  }
  CompareBits(got, want, r);
  return r;
}

CrossCheckResult CheckEmbeddingShape(Backend& b, Backend& ref, uint32_t seed,
                                     int64_t vocab, int64_t dim, int64_t n_ids,
                                     DType dtype) {
  CrossCheckResult r = Start(Format(
      "embedding %s vocab=%lld dim=%lld ids=%lld specials seed=%u", Name(dtype),
      (long long)vocab, (long long)dim, (long long)n_ids, seed));
  const StoredMatrix t = StoreMatrix(
      GoldenFloats(seed, vocab * dim, 1.0f, true), vocab, dim, dtype);
  return CompareEmbedding(b, ref, t, seed, vocab, dim, n_ids, std::move(r));
}

CrossCheckResult CheckArgmaxShape(Backend& b, Backend& ref, uint32_t seed,
                                  int64_t rows, int64_t n, bool specials) {
  CrossCheckResult r =
      Start(Format("argmax rows=%lld n=%lld%s seed=%u", (long long)rows,
                   (long long)n, specials ? " specials" : "", seed));
  std::vector<float> x = GoldenFloats(seed, rows * n, 5.0f, specials);
  // Coarse values make ties likely; one row of equal values, one of -inf.
  for (float& f : x) {
    if (f == f && f > -1e9f && f < 1e9f) f = static_cast<float>(int(f));
  }
  if (rows > 1) {
    for (int64_t i = 0; i < n; ++i) x[i] = (i % 2) ? 0.0f : -0.0f;
  }
  if (rows > 2) {
    for (int64_t i = 0; i < n; ++i) x[2 * n + i] = -INFINITY;
  }
  std::vector<int64_t> got(rows), want(rows);
  if (Failed(r, b.Argmax(x.data(), rows, n, got.data()), b.name().data()) ||
      Failed(r, ref.Argmax(x.data(), rows, n, want.data()), "ref")) {
    return r;
  }
  r.elements = rows;
  for (int64_t i = 0; i < rows; ++i) {
    if (got[i] != want[i] && r.mismatches++ == 0) {
      r.first_mismatch = "row " + std::to_string(i) + ": got " +
                         std::to_string(got[i]) + ", want " +
                         std::to_string(want[i]);
    }
  }
  return r;
}

CrossCheckResult CheckQuantGemmShape(Backend& b, Backend& ref, uint32_t seed,
                                     int64_t m, int64_t k, int64_t n,
                                     DType dtype, bool bias, QuantScales scales,
                                     bool specials) {
  const std::vector<float> x = QuantActivations(seed, m, k, specials);
  const StoredMatrix w = QuantMatrix(seed + 1, n, k, dtype, scales);
  const std::vector<float> bv =
      bias ? GoldenFloats(seed + 2, n, 0.5f, false) : std::vector<float>();
  return CheckGemm(
      b, ref,
      Format("qgemm %s m=%lld k=%lld n=%lld%s scales=%s%s seed=%u",
             DTypeName(dtype).data(), (long long)m, (long long)k, (long long)n,
             bias ? " bias" : "", QuantScalesName(scales),
             specials ? " specials" : "", seed),
      x, m, w, bv);
}

CrossCheckResult CheckQuantEmbeddingShape(Backend& b, Backend& ref,
                                          uint32_t seed, int64_t vocab,
                                          int64_t dim, int64_t n_ids,
                                          DType dtype) {
  CrossCheckResult r =
      Start(Format("qembedding %s vocab=%lld dim=%lld ids=%lld seed=%u",
                   DTypeName(dtype).data(), (long long)vocab, (long long)dim,
                   (long long)n_ids, seed));
  const StoredMatrix t =
      QuantMatrix(seed, vocab, dim, dtype, QuantScales::kRandomBits);
  return CompareEmbedding(b, ref, t, seed, vocab, dim, n_ids, std::move(r));
}

CrossCheckResult CheckQuantShapeRefused(Backend& b, Backend& ref, DType dtype,
                                        int64_t cols) {
  CrossCheckResult r = Start(Format("qgemm-refused %s cols=%lld",
                                    DTypeName(dtype).data(), (long long)cols));
  // More bytes than any reading of two such rows could touch.
  const std::vector<unsigned char> bytes(
      static_cast<size_t>(2 * (cols / 32 + 8) * BlockBytes(dtype)), 0);
  const WeightView w{bytes.data(), dtype, 2, cols};
  for (Backend* be : {&b, &ref}) {
    ++r.elements;
    const auto packed = be->PackWeights(w);
    const bool refused =
        !packed.ok() &&
        packed.status().code() == StatusCode::kInvalidArgument &&
        packed.status().message().find("w.cols") != std::string::npos;
    if (!refused && r.mismatches++ == 0) {
      r.first_mismatch =
          std::string(be->name()) + ": " +
          (packed.ok() ? std::string("accepted") : packed.status().ToString());
    }
  }
  return r;
}

namespace {

// The quantized cases of RunCrossChecks, from their own generator so that the
// float cases' shapes for a seed stay what they were. Every block format in
// turn; m <= 8 and m > 8, k of 1 to 257 blocks, n with and without tails.
void AppendQuantCrossChecks(Backend& b, Backend& ref,
                            const CrossCheckOptions& options,
                            std::vector<CrossCheckResult>& out) {
  std::mt19937_64 rng(options.seed * 0x9E3779B97F4A7C15ull + 0x5155414Eull);
  auto pick = [&](std::initializer_list<int64_t> values) {
    return *(values.begin() + rng() % values.size());
  };
  auto seed = [&] { return static_cast<uint32_t>(rng() & 0xFFFFFF); };
  const DType kQuant[] = {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K,
                          DType::kQ6_K};
  for (int c = 0; c < 2 * options.cases_per_op; ++c) {
    const DType dt = kQuant[c % 4];
    const bool k_quant = BlockElems(dt) == 256;
    const int64_t k =
        k_quant ? 256 * pick({1, 2, 3, 5, 9, 16})
                : 32 * pick({1, 2, 7, 8, 9, 31, 32, 33, 100, 129, 257});
    out.push_back(CheckQuantGemmShape(
        b, ref, seed(), pick({1, 1, 2, 3, 4, 5, 8, 9, 17, 33}), k,
        pick({1, 7, 8, 9, 31, 33, 64, 100, 257}), dt, rng() % 2 == 0,
        QuantScales(rng() % 4), rng() % 2 == 0));
    out.push_back(CheckQuantEmbeddingShape(b, ref, seed(), pick({1, 20, 300}),
                                           BlockElems(dt) * pick({1, 2, 5}),
                                           pick({1, 7, 40}), dt));
  }
  for (DType dt : kQuant) {
    out.push_back(CheckQuantShapeRefused(b, ref, dt, BlockElems(dt) + 16));
    if (BlockElems(dt) == 256) {
      out.push_back(CheckQuantShapeRefused(b, ref, dt, 288));
    }
  }
  if (options.large) {
    // Llama-sized decode and prefill, many chunks, and a 4096-chunk tree.
    out.push_back(CheckQuantGemmShape(b, ref, seed(), 1, 4096, 4096,
                                      DType::kQ4_0, false, QuantScales::kSane,
                                      false));
    out.push_back(CheckQuantGemmShape(b, ref, seed(), 1, 14336, 300,
                                      DType::kQ4_K, true, QuantScales::kSane,
                                      false));
    out.push_back(CheckQuantGemmShape(b, ref, seed(), 20, 70016, 33,
                                      DType::kQ8_0, true, QuantScales::kExtreme,
                                      true));
    out.push_back(CheckQuantGemmShape(b, ref, seed(), 70, 4096, 300,
                                      DType::kQ6_K, false,
                                      QuantScales::kSomeZero, false));
    out.push_back(CheckQuantGemmShape(b, ref, seed(), 3, int64_t{1} << 20, 2,
                                      DType::kQ4_0, true, QuantScales::kSane,
                                      true));
  }
}

}  // namespace

std::vector<CrossCheckResult> RunCrossChecks(Backend& b, Backend& ref,
                                             const CrossCheckOptions& options) {
  std::mt19937_64 rng(options.seed);
  auto pick = [&](std::initializer_list<int64_t> values) {
    return *(values.begin() + rng() % values.size());
  };
  auto seed = [&] { return static_cast<uint32_t>(rng() & 0xFFFFFF); };
  const DType kDTypes[] = {DType::kF32, DType::kBF16, DType::kF16};
  std::vector<CrossCheckResult> out;
  for (int c = 0; c < options.cases_per_op; ++c) {
    const DType dt = kDTypes[rng() % 3];
    const bool specials = rng() % 2 == 0;
    // m <= 8 runs the split-K GEMV, larger m the tiled kernel.
    out.push_back(CheckGemmShape(
        b, ref, seed(), pick({1, 2, 3, 5, 8, 9, 17, 64, 65, 130}),
        pick({1, 7, 31, 255, 256, 257, 511, 513, 1000, 4099, 8197}),
        pick({1, 31, 32, 33, 64, 65, 100, 257}), dt, rng() % 2 == 0, specials));
    const int64_t kv_heads = pick({1, 2, 4});
    const int64_t nq = pick({1, 2, 7, 37, 100});
    out.push_back(CheckAttentionShape(
        b, ref, seed(), nq,
        nq == 1 ? pick({0, 1, 255, 256, 300, 700}) : pick({0, 5, 260}),
        kv_heads * pick({1, 2, 3}), kv_heads, pick({1, 16, 31, 64, 80, 128}),
        specials));
    out.push_back(CheckRmsNormShape(b, ref, seed(), pick({1, 3, 9}),
                                    pick({1, 31, 100, 4096, 5000}), dt,
                                    specials));
    out.push_back(CheckRopeShape(b, ref, seed(), pick({1, 5, 33}),
                                 pick({1, 4, 7}), pick({2, 64, 96, 128}),
                                 specials));
    out.push_back(CheckSoftmaxShape(b, ref, seed(), pick({1, 3, 10}),
                                    pick({1, 31, 33, 100, 1000, 32000}),
                                    specials));
    out.push_back(CheckSwiGluShape(b, ref, seed(), pick({1, 33, 1000, 70001})));
    out.push_back(CheckAddShape(b, ref, seed(), pick({1, 33, 1000, 70001})));
    out.push_back(CheckEmbeddingShape(b, ref, seed(), pick({1, 50, 1000}),
                                      pick({1, 96, 257}), pick({1, 7, 40}),
                                      dt));
    out.push_back(CheckArgmaxShape(b, ref, seed(), pick({1, 3, 6}),
                                   pick({1, 2, 333, 32000}), specials));
  }
  if (options.large) {
    // Long reductions: many chunks through both GEMM paths, the halving tree
    // at depth 9+, and decode against thousands of keys.
    out.push_back(
        CheckGemmShape(b, ref, seed(), 1, 70001, 37, DType::kBF16, true, true));
    out.push_back(CheckGemmShape(b, ref, seed(), 20, 70001, 33, DType::kF16,
                                 false, true));
    out.push_back(CheckGemmShape(b, ref, seed(), 1, 4096, 4096, DType::kBF16,
                                 false, false));
    out.push_back(CheckGemmShape(b, ref, seed(), 70, 4096, 300, DType::kF32,
                                 true, false));
    out.push_back(
        CheckAttentionShape(b, ref, seed(), 1, 5000, 8, 2, 128, true));
    out.push_back(CheckAttentionShape(b, ref, seed(), 300, 0, 4, 1, 64, false));
  }
  AppendQuantCrossChecks(b, ref, options, out);
  return out;
}

}  // namespace layerproof::kernels
