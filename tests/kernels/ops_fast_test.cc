// The x86 fast backends (avx512, avx2) against kernels/ref, bit for bit, for
// every op but Gemm: random lengths with every tail, special values (±0,
// subnormals, ±inf, NaNs of both signs and several payloads) mixed in,
// attention in prefill, chunked-prefill and decode shapes over several
// 256-key chunks, GQA groups 1/2/4, and 1, 2 and 7 threads. A backend the CPU
// cannot run is skipped.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/dispatch.h"
#include "kernels/dtype.h"
#include "kernels/ref/rope_table.h"
#if defined(__x86_64__)
#include "kernels/cpu/internal/isa_ops.h"
#endif

namespace layerproof::kernels {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Values that stress the contract, as bit patterns: ±0, the smallest and
// largest subnormals, the smallest normal, ±inf, NaNs (quiet and signalling,
// both signs, odd payloads) and overflow-prone magnitudes.
const uint32_t kSpecialBits[] = {
    0x00000000u, 0x80000000u,          0x00000001u, 0x80000001u, 0x007FFFFFu,
    0x807FFFFFu, 0x00800000u,          0x7F800000u, 0xFF800000u, 0x7FC00000u,
    0xFFC00000u, 0x7F800001u,          0xFFA5A5A5u, 0x7FFFFFFFu, 0x7F7FFFFFu,
    0xFF7FFFFFu, 0x42B00000u /* 88 */, 0xC2D00000u /* -104 */};

class Values {
 public:
  explicit Values(uint64_t seed) : rng_(seed) {}

  // n values ~ scale * N(0, 1); a fraction `special` of them replaced by
  // kSpecialBits and as many by tiny (subnormal-producing) values.
  std::vector<float> Floats(int64_t n, float scale = 1.0f,
                            double special = 0.0) {
    std::vector<float> v(n);
    std::normal_distribution<float> normal(0.0f, scale);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::uniform_int_distribution<size_t> pick(0, std::size(kSpecialBits) - 1);
    for (float& f : v) {
      const double r = u(rng_);
      if (r < special) {
        f = BitsToFloat(kSpecialBits[pick(rng_)]);
      } else if (r < 2 * special) {
        f = normal(rng_) * 1e-38f;
      } else {
        f = normal(rng_);
      }
    }
    return v;
  }

  int64_t Int(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

 private:
  std::mt19937_64 rng_;
};

// Lengths that cover every tail of 8-, 16- and 32-lane code: the edges and
// random ones up to 3 * 512 + odd.
std::vector<int64_t> Lengths(Values& values) {
  std::vector<int64_t> n = {1,  2,   3,   7,   8,   9,   15,   16,  17,
                            31, 32,  33,  47,  63,  64,  65,   95,  96,
                            97, 255, 256, 257, 511, 513, 1024, 1537};
  for (int i = 0; i < 12; ++i) n.push_back(values.Int(1, 3 * 512 + 1));
  return n;
}

template <typename T>
void ExpectSameBits(const std::vector<T>& want, const std::vector<T>& got,
                    const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    uint64_t w = 0, g = 0;
    std::memcpy(&w, &want[i], sizeof(T));
    std::memcpy(&g, &got[i], sizeof(T));
    if (w != g) {
      ADD_FAILURE() << what << ": first difference at " << i << " of "
                    << want.size() << ": want " << want[i] << " (0x" << std::hex
                    << w << "), got " << got[i] << " (0x" << g << ")"
                    << std::dec;
      return;
    }
  }
}

std::vector<uint16_t> ToHalves(const std::vector<float>& f, DType t) {
  std::vector<uint16_t> h(f.size());
  for (size_t i = 0; i < f.size(); ++i) {
    h[i] = t == DType::kBF16 ? FloatToBf16(f[i]) : FloatToF16(f[i]);
  }
  return h;
}

class FastOpsTest : public ::testing::TestWithParam<BackendKind> {
 protected:
  void SetUp() override {
    auto fast = GetBackend(GetParam());
    if (!fast.ok()) {
      GTEST_SKIP() << BackendName(GetParam())
                   << " does not run here: " << fast.status().ToString();
    }
    fast_ = *fast;
    ref_ = *GetBackend(BackendKind::kRef);
    fast_->SetThreads(2);
  }

  Backend* fast_ = nullptr;
  Backend* ref_ = nullptr;
};

TEST_P(FastOpsTest, RmsNormMatchesRef) {
  Values values(1);
  for (int64_t dim : Lengths(values)) {
    const int64_t rows = values.Int(1, 3);
    const std::vector<float> x = values.Floats(rows * dim, 3.0f, 0.01);
    const std::vector<float> g32 = values.Floats(dim, 1.0f, 0.01);
    for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
      const std::vector<uint16_t> g16 = ToHalves(g32, t);
      const WeightView gamma = {
          t == DType::kF32 ? static_cast<const void*>(g32.data()) : g16.data(),
          t, 1, dim};
      for (float eps : {1e-5f, 0.0f}) {
        std::vector<float> want(x.size()), got(x.size());
        ASSERT_TRUE(
            ref_->RmsNorm(x.data(), rows, dim, gamma, eps, want.data()).ok());
        ASSERT_TRUE(
            fast_->RmsNorm(x.data(), rows, dim, gamma, eps, got.data()).ok());
        ExpectSameBits(want, got,
                       "RmsNorm dim " + std::to_string(dim) + " dtype " +
                           std::string(DTypeName(t)));
      }
    }
  }
  // Tiny inputs: the sum of squares is subnormal or zero.
  for (int64_t dim : {5, 33, 100}) {
    std::vector<float> x = values.Floats(dim, 1.0f);
    for (float& f : x) f *= 1e-22f;
    const std::vector<float> g(dim, 1.0f);
    std::vector<float> want(dim), got(dim);
    ASSERT_TRUE(ref_->RmsNorm(x.data(), 1, dim, {g.data(), DType::kF32, 1, dim},
                              0.0f, want.data())
                    .ok());
    ASSERT_TRUE(fast_
                    ->RmsNorm(x.data(), 1, dim, {g.data(), DType::kF32, 1, dim},
                              0.0f, got.data())
                    .ok());
    ExpectSameBits(want, got, "RmsNorm tiny dim " + std::to_string(dim));
  }
}

TEST_P(FastOpsTest, RopeMatchesRef) {
  Values values(2);
  for (int64_t d : {2, 8, 34, 64, 80, 128}) {
    auto table = BuildRopeTable(d, 500000.0, 4096);
    ASSERT_TRUE(table.ok());
    const int64_t rows = values.Int(1, 9);
    const int64_t heads = values.Int(1, 5);
    std::vector<int64_t> pos(rows);
    for (int64_t& p : pos) p = values.Int(0, 4095);
    const std::vector<float> x = values.Floats(rows * heads * d, 2.0f, 0.02);
    std::vector<float> want = x, got = x;
    ASSERT_TRUE(ref_->Rope(want.data(), rows, heads, pos.data(), *table).ok());
    ASSERT_TRUE(fast_->Rope(got.data(), rows, heads, pos.data(), *table).ok());
    ExpectSameBits(want, got, "Rope head_dim " + std::to_string(d));
  }
}

TEST_P(FastOpsTest, SwiGluAndAddMatchRef) {
  Values values(3);
  std::vector<int64_t> lengths = Lengths(values);
  lengths.push_back(40000);  // several of the backend's 16384-element blocks
  for (int64_t n : lengths) {
    // Gates up to ±200 reach exp's overflow, underflow and subnormal ranges.
    const std::vector<float> gate = values.Floats(n, 40.0f, 0.02);
    const std::vector<float> up = values.Floats(n, 1.0f, 0.02);
    std::vector<float> want(n), got(n);
    ASSERT_TRUE(ref_->SwiGlu(gate.data(), up.data(), n, want.data()).ok());
    ASSERT_TRUE(fast_->SwiGlu(gate.data(), up.data(), n, got.data()).ok());
    ExpectSameBits(want, got, "SwiGlu n " + std::to_string(n));
    got = gate;  // in place, y == gate
    ASSERT_TRUE(fast_->SwiGlu(got.data(), up.data(), n, got.data()).ok());
    ExpectSameBits(want, got, "SwiGlu in place n " + std::to_string(n));

    ASSERT_TRUE(ref_->Add(gate.data(), up.data(), n, want.data()).ok());
    ASSERT_TRUE(fast_->Add(gate.data(), up.data(), n, got.data()).ok());
    ExpectSameBits(want, got, "Add n " + std::to_string(n));
  }
}

TEST_P(FastOpsTest, SoftmaxMatchesRef) {
  Values values(4);
  for (int64_t n : Lengths(values)) {
    for (double special : {0.0, 0.002}) {
      const int64_t rows = values.Int(1, 3);
      // Scale 30: most exp(x - max) are subnormal or +0.
      for (float scale : {1.0f, 30.0f}) {
        const std::vector<float> x = values.Floats(rows * n, scale, special);
        std::vector<float> want(x.size()), got(x.size());
        ASSERT_TRUE(ref_->Softmax(x.data(), rows, n, want.data()).ok());
        ASSERT_TRUE(fast_->Softmax(x.data(), rows, n, got.data()).ok());
        ExpectSameBits(want, got, "Softmax n " + std::to_string(n));
        got = x;  // in place
        ASSERT_TRUE(fast_->Softmax(got.data(), rows, n, got.data()).ok());
        ExpectSameBits(want, got, "Softmax in place n " + std::to_string(n));
      }
    }
  }
  // Rows of one kind: all -inf, all ±0, a +inf, a single NaN at the end.
  for (int64_t n : {1, 17, 40}) {
    std::vector<std::vector<float>> rows = {std::vector<float>(n, -kInf),
                                            std::vector<float>(n, -0.0f),
                                            values.Floats(n), values.Floats(n)};
    rows[2][n / 2] = kInf;
    rows[3][n - 1] = BitsToFloat(0xFFC00001u);
    for (size_t r = 0; r < rows.size(); ++r) {
      std::vector<float> want(n), got(n);
      ASSERT_TRUE(ref_->Softmax(rows[r].data(), 1, n, want.data()).ok());
      ASSERT_TRUE(fast_->Softmax(rows[r].data(), 1, n, got.data()).ok());
      ExpectSameBits(want, got, "Softmax special row " + std::to_string(r));
    }
  }
}

TEST_P(FastOpsTest, EmbeddingMatchesRef) {
  Values values(5);
  for (int64_t dim : {1, 7, 16, 33, 100, 4096}) {
    const int64_t vocab = 50;
    const std::vector<float> t32 = values.Floats(vocab * dim, 1.0f, 0.05);
    std::vector<int32_t> ids(values.Int(1, 9));
    for (int32_t& id : ids) id = static_cast<int32_t>(values.Int(0, vocab - 1));
    for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
      std::vector<uint16_t> t16 = ToHalves(t32, t);
      if (t != DType::kF32) {
        // Half-precision specials: subnormals, signalling and negative NaNs.
        for (size_t i = 0; i < t16.size(); i += 7) {
          const uint16_t s[] = {0x0001, 0x83FF, 0x7C01, 0xFE00, 0x8000};
          t16[i] = s[(i / 7) % 5];
        }
      }
      const WeightView table = {
          t == DType::kF32 ? static_cast<const void*>(t32.data()) : t16.data(),
          t, vocab, dim};
      const int64_t n = static_cast<int64_t>(ids.size());
      std::vector<float> want(n * dim), got(n * dim);
      ASSERT_TRUE(ref_->Embedding(table, ids.data(), n, want.data()).ok());
      ASSERT_TRUE(fast_->Embedding(table, ids.data(), n, got.data()).ok());
      ExpectSameBits(want, got,
                     "Embedding dim " + std::to_string(dim) + " dtype " +
                         std::string(DTypeName(t)));
    }
  }
}

TEST_P(FastOpsTest, ArgmaxMatchesRef) {
  Values values(6);
  for (int64_t n : Lengths(values)) {
    const int64_t rows = 6;
    std::vector<float> x = values.Floats(rows * n, 1.0f, 0.0);
    float* r = x.data();
    r[values.Int(0, n - 1)] = BitsToFloat(0xFFC00000u);  // row 0: a NaN
    r += n;                                              // row 1: ties
    for (int64_t i = 0; i < n; i += 3) r[i] = 5.0f;
    r += n;  // row 2: ±0
    for (int64_t i = 0; i < n; ++i) r[i] = i % 2 ? 0.0f : -0.0f;
    r += n;  // row 3: -inf
    for (int64_t i = 0; i < n; ++i) r[i] = -kInf;
    r += n;  // row 4: NaNs
    r[n - 1] = BitsToFloat(0x7FC00000u);
    r[(n - 1) / 2] = BitsToFloat(0x7F800001u);
    std::vector<int64_t> want(rows), got(rows);
    ASSERT_TRUE(ref_->Argmax(x.data(), rows, n, want.data()).ok());
    ASSERT_TRUE(fast_->Argmax(x.data(), rows, n, got.data()).ok());
    ExpectSameBits(want, got, "Argmax n " + std::to_string(n));
  }
}

struct AttentionCase {
  int64_t nq, q_pos0, n_kv, n_heads, n_kv_heads, head_dim;
  float q_scale;   // 8+: scores spread far, many probabilities subnormal
  double special;  // fraction of special values in q, k and v
};

std::string Describe(const AttentionCase& c) {
  return "nq " + std::to_string(c.nq) + " q_pos0 " + std::to_string(c.q_pos0) +
         " n_kv " + std::to_string(c.n_kv) + " heads " +
         std::to_string(c.n_heads) + "/" + std::to_string(c.n_kv_heads) +
         " head_dim " + std::to_string(c.head_dim) + " q_scale " +
         std::to_string(c.q_scale) + " special " + std::to_string(c.special);
}

const AttentionCase kAttentionCases[] = {
    // Prefill (q_pos0 = 0, nq = n_kv).
    {37, 0, 37, 4, 4, 2, 1.0f, 0.0},
    {300, 0, 300, 4, 2, 8, 1.0f, 0.0},
    {700, 0, 700, 2, 1, 64, 1.0f, 0.0},
    {280, 0, 280, 4, 1, 80, 8.0f, 0.0},
    {530, 0, 530, 4, 1, 128, 1.0f, 0.0},
    {129, 0, 129, 4, 2, 128, 1.0f, 0.001},
    // Chunked prefill, and decode (nq = 1) over 1 .. 3 chunks.
    {5, 510, 520, 8, 2, 128, 1.0f, 0.0},
    {1, 699, 700, 8, 2, 128, 1.0f, 0.0},
    {1, 768, 769, 32, 8, 128, 1.0f, 0.0},
    {1, 256, 257, 4, 1, 80, 8.0f, 0.0},
    {1, 611, 640, 4, 4, 64, 1.0f, 0.0},
    {1, 100, 101, 8, 2, 8, 1.0f, 0.0},
    {1, 300, 301, 6, 2, 2, 1.0f, 0.0},
    {1, 513, 514, 8, 2, 128, 1.0f, 0.002},
};

struct AttentionData {
  std::vector<float> q, k, v;
  AttentionArgs Args(std::vector<float>& out, const AttentionCase& c) {
    AttentionArgs a;
    a.q = q.data();
    a.k = k.data();
    a.v = v.data();
    a.out = out.data();
    a.nq = c.nq;
    a.q_pos0 = c.q_pos0;
    a.n_kv = c.n_kv;
    a.n_heads = c.n_heads;
    a.n_kv_heads = c.n_kv_heads;
    a.head_dim = c.head_dim;
    return a;
  }
};

AttentionData MakeAttentionData(Values& values, const AttentionCase& c) {
  return {values.Floats(c.nq * c.n_heads * c.head_dim, c.q_scale, c.special),
          values.Floats(c.n_kv * c.n_kv_heads * c.head_dim, 1.0f, c.special),
          values.Floats(c.n_kv * c.n_kv_heads * c.head_dim, 1.0f, c.special)};
}

TEST_P(FastOpsTest, AttentionMatchesRef) {
  Values values(7);
  for (const AttentionCase& c : kAttentionCases) {
    AttentionData data = MakeAttentionData(values, c);
    const size_t out_size = c.nq * c.n_heads * c.head_dim;
    std::vector<float> want(out_size);
    ASSERT_TRUE(ref_->Attention(data.Args(want, c)).ok());
    for (int threads : {1, 2, 7}) {
      fast_->SetThreads(threads);
      std::vector<float> got(out_size, 1.0f);
      ASSERT_TRUE(fast_->Attention(data.Args(got, c)).ok());
      ExpectSameBits(
          want, got,
          "Attention " + Describe(c) + " threads " + std::to_string(threads));
    }
  }
}

#if defined(__x86_64__)
// The IsaOps entry directly, with task ranges that cover whole GQA groups
// (the heads-share-one-KV-pass path) and ranges that cut groups and rows
// anywhere: the result must not depend on how the tasks are cut.
TEST_P(FastOpsTest, AttentionTaskRangesMatchRef) {
  const cpu::IsaOps& ops =
      GetParam() == BackendKind::kAvx512 ? cpu::Avx512Ops() : cpu::Avx2Ops();
  Values values(8);
  for (const AttentionCase& c : kAttentionCases) {
    if (c.nq * c.n_kv > 100000) continue;  // the prefill ones are slow in ref
    AttentionData data = MakeAttentionData(values, c);
    const size_t out_size = c.nq * c.n_heads * c.head_dim;
    std::vector<float> want(out_size);
    ASSERT_TRUE(ref_->Attention(data.Args(want, c)).ok());
    const int64_t tasks = c.nq * c.n_heads;
    std::vector<float> scratch(c.n_kv);
    for (int cut : {0, 1, 2}) {
      std::vector<float> got(out_size, 1.0f);
      const AttentionArgs a = data.Args(got, c);
      int64_t t = 0;
      while (t < tasks) {
        // 0: everything at once; 1: one KV group per call; 2: random cuts.
        const int64_t len = cut == 0   ? tasks
                            : cut == 1 ? c.n_heads / c.n_kv_heads
                                       : values.Int(1, 7);
        const int64_t end = t + len < tasks ? t + len : tasks;
        ops.attention(a, t, end, scratch.data());
        t = end;
      }
      ExpectSameBits(
          want, got,
          "Attention tasks " + Describe(c) + " cut " + std::to_string(cut));
    }
  }
}
#endif

INSTANTIATE_TEST_SUITE_P(X86, FastOpsTest,
                         ::testing::Values(BackendKind::kAvx512,
                                           BackendKind::kAvx2),
                         [](const auto& info) {
                           return std::string(BackendName(info.param));
                         });

}  // namespace
}  // namespace layerproof::kernels
