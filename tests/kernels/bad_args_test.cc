// Bad arguments return InvalidArgument naming the argument; nothing crashes
// and no output is written. Runs on every backend.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "kernels/ref/rope_table.h"
#include "tests/kernels/test_util.h"

namespace layerproof::kernels {
namespace {

using ::testing::HasSubstr;

class BadArgsTest : public ::testing::TestWithParam<BackendKind> {
 protected:
  Backend* B() { return *GetBackend(GetParam()); }
};

#define EXPECT_INVALID(expr, needle)                                     \
  do {                                                                   \
    const Status s_ = (expr);                                            \
    EXPECT_EQ(s_.code(), StatusCode::kInvalidArgument) << s_.ToString(); \
    EXPECT_THAT(s_.message(), HasSubstr(needle));                        \
  } while (0)

TEST_P(BadArgsTest, Gemm) {
  std::vector<float> w(12, 1.0f), x(8, 1.0f), y(6, 9.0f);
  auto pw = B()->PackWeights({w.data(), DType::kF32, 3, 4});
  ASSERT_TRUE(pw.ok());
  EXPECT_INVALID(B()->Gemm(nullptr, 2, **pw, nullptr, y.data()), "x: is null");
  EXPECT_INVALID(B()->Gemm(x.data(), 0, **pw, nullptr, y.data()), "m: got 0");
  EXPECT_INVALID(B()->Gemm(x.data(), -3, **pw, nullptr, y.data()), "m: got -3");
  EXPECT_INVALID(B()->Gemm(x.data(), 2, **pw, nullptr, nullptr), "y: is null");
  // A float pointer that is not 4-byte aligned.
  const float* odd = reinterpret_cast<const float*>(
      reinterpret_cast<const char*>(x.data()) + 1);
  EXPECT_INVALID(B()->Gemm(odd, 1, **pw, nullptr, y.data()), "misaligned");
  EXPECT_EQ(y[0], 9.0f);  // nothing written
  // Weights packed by another backend.
  if (GetParam() != BackendKind::kRef) {
    auto other = testing::Ref()->PackWeights({w.data(), DType::kF32, 3, 4});
    EXPECT_INVALID(B()->Gemm(x.data(), 2, **other, nullptr, y.data()),
                   "packed for backend ref");
  }
}

TEST_P(BadArgsTest, PackWeights) {
  std::vector<float> w(12, 1.0f);
  auto s1 = B()->PackWeights({nullptr, DType::kF32, 3, 4});
  EXPECT_THAT(s1.status().message(), HasSubstr("w: data is null"));
  auto s2 = B()->PackWeights({w.data(), DType::kF32, 0, 4});
  EXPECT_THAT(s2.status().message(), HasSubstr("w.rows: got 0"));
  auto s3 = B()->PackWeights({w.data(), static_cast<DType>(9), 3, 4});
  EXPECT_THAT(s3.status().message(), HasSubstr("unknown dtype 9"));
  auto s4 = B()->PackWeights({w.data(), DType::kF32, 3, int64_t{1} << 40});
  EXPECT_THAT(s4.status().message(), HasSubstr("w.cols: got 1099511627776"));
  // Each dimension is fine, but the element count would overflow byte sizes.
  auto s5 = B()->PackWeights(
      {w.data(), DType::kF32, int64_t{1} << 21, int64_t{1} << 21});
  EXPECT_THAT(s5.status().message(), HasSubstr("elements, want at most"));
}

TEST_P(BadArgsTest, NormRopeAttention) {
  std::vector<float> x(64, 1.0f), y(64);
  std::vector<float> g(16, 1.0f);
  const WeightView gamma{g.data(), DType::kF32, 1, 16};
  EXPECT_INVALID(B()->RmsNorm(x.data(), 4, 8, gamma, 1e-5f, y.data()),
                 "gamma: shape 1x16, want 1x8");
  EXPECT_INVALID(B()->RmsNorm(x.data(), 4, 16, gamma, -1.0f, y.data()),
                 "eps: got -1");
  EXPECT_INVALID(B()->RmsNorm(x.data(), 4, 16, gamma, NAN, y.data()), "eps");

  auto table = BuildRopeTable(8, 10000.0, 16);
  ASSERT_TRUE(table.ok());
  const int64_t pos[2] = {3, 16};
  EXPECT_INVALID(B()->Rope(x.data(), 2, 4, pos, *table),
                 "positions[1]: got 16, want 0 <= p < 16");
  RopeTable broken = *table;
  broken.cos.pop_back();
  EXPECT_INVALID(B()->Rope(x.data(), 1, 4, pos, broken), "table: malformed");

  AttentionArgs a{x.data(), x.data(), x.data(), y.data(), 2, 0, 2, 3, 2, 8};
  EXPECT_INVALID(B()->Attention(a), "n_heads: got 3, want a multiple of");
  a.n_heads = 4;
  a.n_kv = 1;
  EXPECT_INVALID(B()->Attention(a), "n_kv: got 1, want >= q_pos0 + nq = 2");
  a.n_kv = 2;
  a.k = nullptr;
  EXPECT_INVALID(B()->Attention(a), "k: is null");
}

TEST_P(BadArgsTest, EmbeddingIdsOutOfRange) {
  std::vector<float> t(40, 1.0f), y(20, 5.0f);
  const int32_t ids[2] = {1, 10};
  EXPECT_INVALID(
      B()->Embedding({t.data(), DType::kF32, 4, 10}, ids, 2, y.data()),
      "ids[1]: got 10, want 0 <= id < 4");
  const int32_t neg[1] = {-1};
  EXPECT_INVALID(
      B()->Embedding({t.data(), DType::kF32, 4, 10}, neg, 1, y.data()),
      "ids[0]: got -1");
  EXPECT_EQ(y[0], 5.0f);
}

TEST_P(BadArgsTest, ElementwiseAndArgmax) {
  std::vector<float> a(8), y(8);
  int64_t out;
  EXPECT_INVALID(B()->SwiGlu(a.data(), nullptr, 8, y.data()), "up: is null");
  EXPECT_INVALID(B()->Add(a.data(), a.data(), 0, y.data()), "n: got 0");
  EXPECT_INVALID(B()->Softmax(a.data(), 0, 8, y.data()), "rows: got 0");
  EXPECT_INVALID(B()->Argmax(a.data(), 1, 8, nullptr), "out: is null");
  EXPECT_INVALID(B()->Argmax(a.data(), 1, -8, &out), "n: got -8");
}

INSTANTIATE_TEST_SUITE_P(AllBackends, BadArgsTest,
                         ::testing::ValuesIn(AvailableBackends()),
                         testing::KindName);

}  // namespace
}  // namespace layerproof::kernels
