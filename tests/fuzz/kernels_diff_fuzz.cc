// Differential fuzzing of the kernels (STYLE.md: every fast backend equals
// kernels/ref bit for bit): one op per input, on fuzzed small shapes and
// values, run on ref and on every fast CPU backend this machine has (AVX2,
// AVX-512, NEON); both must succeed or fail alike, and outputs must be
// bit-identical. Values come from the input either as small multiples of
// 1/16 or as raw fp32 bits (every NaN, infinity and subnormal), and
// block-quantized weights (Q8_0, Q4_0, Q4_K, Q6_K) as raw blocks.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "kernels/backend.h"
#include "kernels/dispatch.h"
#include "kernels/dtype.h"
#include "kernels/ref/rope_table.h"
#include "tests/fuzz/fuzz_check.h"

namespace fuzz = layerproof::fuzz;
namespace kernels = layerproof::kernels;
using kernels::Backend;
using kernels::DType;

namespace {

const std::vector<Backend*>& FastBackends() {
  static const auto* backends = [] {
    auto* out = new std::vector<Backend*>;
    for (kernels::BackendKind k : kernels::AvailableBackends()) {
      if (k == kernels::BackendKind::kRef || k == kernels::BackendKind::kCuda) {
        continue;
      }
      auto b = kernels::GetBackend(k);
      LP_FUZZ_CHECK(b.ok());
      (*b)->SetThreads(1);
      out->push_back(*b);
    }
    return out;
  }();
  return *backends;
}

Backend& Ref() {
  static Backend* ref = *kernels::GetBackend(kernels::BackendKind::kRef);
  return *ref;
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

void CheckSame(const std::vector<float>& want, const std::vector<float>& got) {
  LP_FUZZ_CHECK(want.size() == got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (Bits(want[i]) != Bits(got[i])) {
      std::fprintf(stderr, "element %zu: ref %a (0x%08x), fast %a (0x%08x)\n",
                   i, want[i], Bits(want[i]), got[i], Bits(got[i]));
      LP_FUZZ_CHECK(Bits(want[i]) == Bits(got[i]));
    }
  }
}

// Both succeed, or both fail with the same code (messages are printable).
bool SameOutcome(const kernels::Status& ref, const kernels::Status& fast) {
  LP_FUZZ_CHECK_PRINTABLE(ref);
  LP_FUZZ_CHECK_PRINTABLE(fast);
  LP_FUZZ_CHECK(ref.code() == fast.code());
  return ref.ok();
}

class Values {
 public:
  explicit Values(fuzz::FuzzInput& in) : in_(in), raw_(in.U8() & 1) {}
  float Next() {
    if (raw_) return in_.F32();
    return static_cast<float>(static_cast<int8_t>(in_.U8())) / 16.0f;
  }
  std::vector<float> Take(int64_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = Next();
    return v;
  }

 private:
  fuzz::FuzzInput& in_;
  bool raw_;
};

// Weights [rows][cols] in `dtype`: float formats encoded from values,
// quantized formats as raw blocks from the input.
std::vector<unsigned char> Weights(fuzz::FuzzInput& in, Values& values,
                                   DType dtype, int64_t rows, int64_t cols) {
  if (!kernels::IsBlockQuantized(dtype)) {
    return kernels::EncodeWeights(values.Take(rows * cols), dtype);
  }
  const std::string raw = in.Bytes(rows * kernels::RowBytes(dtype, cols));
  std::vector<unsigned char> out(rows * kernels::RowBytes(dtype, cols));
  std::memcpy(out.data(), raw.data(), raw.size());
  return out;
}

void Gemm(fuzz::FuzzInput& in) {
  static constexpr DType kTypes[] = {DType::kF32,  DType::kBF16, DType::kF16,
                                     DType::kQ8_0, DType::kQ4_0, DType::kQ4_K,
                                     DType::kQ6_K};
  const DType dtype = kTypes[in.U8() % 7];
  const int64_t m = 1 + in.U8() % 5;
  int64_t k = 1 + in.U16() % 600;
  const int64_t block = kernels::BlockElems(dtype);
  k = (k + block - 1) / block * block;
  const int64_t n = 1 + in.U8() % 48;
  const bool bias = in.U8() & 1;
  Values values(in);
  const std::vector<float> x = values.Take(m * k);
  const std::vector<float> b = values.Take(n);
  const std::vector<unsigned char> w = Weights(in, values, dtype, n, k);
  const kernels::WeightView view{w.data(), dtype, n, k};
  auto ref_w = Ref().PackWeights(view);
  std::vector<float> want(m * n, 0.0f);
  const kernels::Status r =
      ref_w.ok() ? Ref().Gemm(x.data(), m, **ref_w, bias ? b.data() : nullptr,
                              want.data())
                 : ref_w.status();
  for (Backend* fast : FastBackends()) {
    auto fast_w = fast->PackWeights(view);
    std::vector<float> got(m * n, 7.0f);
    const kernels::Status f =
        fast_w.ok() ? fast->Gemm(x.data(), m, **fast_w,
                                 bias ? b.data() : nullptr, got.data())
                    : fast_w.status();
    if (SameOutcome(r, f)) CheckSame(want, got);
  }
}

void RmsNorm(fuzz::FuzzInput& in) {
  const int64_t rows = 1 + in.U8() % 4;
  const int64_t dim = 1 + in.U16() % 700;
  const DType dtype = in.U8() & 1 ? DType::kBF16 : DType::kF32;
  Values values(in);
  const float eps = in.U8() & 1 ? 1e-6f : values.Next();
  const std::vector<float> x = values.Take(rows * dim);
  const std::vector<unsigned char> g =
      kernels::EncodeWeights(values.Take(dim), dtype);
  const kernels::WeightView gamma{g.data(), dtype, 1, dim};
  std::vector<float> want(rows * dim, 0.0f);
  const kernels::Status r =
      Ref().RmsNorm(x.data(), rows, dim, gamma, eps, want.data());
  for (Backend* fast : FastBackends()) {
    std::vector<float> got(rows * dim, 7.0f);
    if (SameOutcome(
            r, fast->RmsNorm(x.data(), rows, dim, gamma, eps, got.data()))) {
      CheckSame(want, got);
    }
  }
}

void Softmax(fuzz::FuzzInput& in) {
  const int64_t rows = 1 + in.U8() % 4;
  const int64_t n = 1 + in.U16() % 700;
  Values values(in);
  const std::vector<float> x = values.Take(rows * n);
  std::vector<float> want(rows * n, 0.0f);
  const kernels::Status r = Ref().Softmax(x.data(), rows, n, want.data());
  for (Backend* fast : FastBackends()) {
    std::vector<float> got(rows * n, 7.0f);
    if (SameOutcome(r, fast->Softmax(x.data(), rows, n, got.data()))) {
      CheckSame(want, got);
    }
  }
  // Argmax of the same rows.
  std::vector<int64_t> want_idx(rows, -1);
  const kernels::Status ra = Ref().Argmax(x.data(), rows, n, want_idx.data());
  for (Backend* fast : FastBackends()) {
    std::vector<int64_t> got_idx(rows, -2);
    if (SameOutcome(ra, fast->Argmax(x.data(), rows, n, got_idx.data()))) {
      LP_FUZZ_CHECK(want_idx == got_idx);
    }
  }
}

void Elementwise(fuzz::FuzzInput& in) {
  const int64_t n = 1 + in.U16() % 2000;
  Values values(in);
  const std::vector<float> a = values.Take(n);
  const std::vector<float> b = values.Take(n);
  std::vector<float> want_s(n, 0.0f), want_a(n, 0.0f);
  const kernels::Status rs = Ref().SwiGlu(a.data(), b.data(), n, want_s.data());
  const kernels::Status ra = Ref().Add(a.data(), b.data(), n, want_a.data());
  for (Backend* fast : FastBackends()) {
    std::vector<float> got(n, 7.0f);
    if (SameOutcome(rs, fast->SwiGlu(a.data(), b.data(), n, got.data()))) {
      CheckSame(want_s, got);
    }
    std::fill(got.begin(), got.end(), 7.0f);
    if (SameOutcome(ra, fast->Add(a.data(), b.data(), n, got.data()))) {
      CheckSame(want_a, got);
    }
  }
}

void Attention(fuzz::FuzzInput& in) {
  kernels::AttentionArgs a;
  a.n_kv_heads = 1 + in.U8() % 3;
  a.n_heads = a.n_kv_heads * (1 + in.U8() % 3);
  a.head_dim = 1 + in.U8() % 80;
  a.n_kv = 1 + in.U8() % 24;
  a.nq = 1 + in.U8() % a.n_kv;
  a.q_pos0 = a.n_kv - a.nq;
  Values values(in);
  const std::vector<float> q = values.Take(a.nq * a.n_heads * a.head_dim);
  const std::vector<float> k = values.Take(a.n_kv * a.n_kv_heads * a.head_dim);
  const std::vector<float> v = values.Take(a.n_kv * a.n_kv_heads * a.head_dim);
  a.q = q.data();
  a.k = k.data();
  a.v = v.data();
  std::vector<float> want(q.size(), 0.0f);
  a.out = want.data();
  const kernels::Status r = Ref().Attention(a);
  for (Backend* fast : FastBackends()) {
    std::vector<float> got(q.size(), 7.0f);
    a.out = got.data();
    if (SameOutcome(r, fast->Attention(a))) CheckSame(want, got);
  }
}

void Rope(fuzz::FuzzInput& in) {
  static std::map<int64_t, kernels::RopeTable>* tables =
      new std::map<int64_t, kernels::RopeTable>;
  constexpr int64_t kMaxPositions = 64;
  const int64_t head_dim = 2 * (1 + in.U8() % 64);
  auto it = tables->find(head_dim);
  if (it == tables->end()) {
    auto table = kernels::BuildRopeTable(head_dim, 10000.0, kMaxPositions);
    LP_FUZZ_CHECK(table.ok());
    it = tables->emplace(head_dim, *std::move(table)).first;
  }
  const int64_t rows = 1 + in.U8() % 4;
  const int64_t heads = 1 + in.U8() % 4;
  std::vector<int64_t> positions(rows);
  for (int64_t& p : positions) p = in.U8() % (kMaxPositions + 1);  // 64: bad
  Values values(in);
  const std::vector<float> x = values.Take(rows * heads * head_dim);
  std::vector<float> want = x;
  const kernels::Status r =
      Ref().Rope(want.data(), rows, heads, positions.data(), it->second);
  for (Backend* fast : FastBackends()) {
    std::vector<float> got = x;
    if (SameOutcome(r, fast->Rope(got.data(), rows, heads, positions.data(),
                                  it->second))) {
      CheckSame(want, got);
    }
  }
}

void Embedding(fuzz::FuzzInput& in) {
  static constexpr DType kTypes[] = {DType::kF32,  DType::kBF16, DType::kF16,
                                     DType::kQ8_0, DType::kQ4_0, DType::kQ4_K,
                                     DType::kQ6_K};
  const DType dtype = kTypes[in.U8() % 7];
  const int64_t rows = 1 + in.U8() % 16;
  const int64_t block = kernels::BlockElems(dtype);
  const int64_t cols = (1 + in.U16() % 300 + block - 1) / block * block;
  std::vector<int32_t> ids(1 + in.U8() % 6);
  for (int32_t& id : ids) id = static_cast<int8_t>(in.U8()) % (rows + 2);
  Values values(in);
  const std::vector<unsigned char> table =
      Weights(in, values, dtype, rows, cols);
  const kernels::WeightView view{table.data(), dtype, rows, cols};
  std::vector<float> want(ids.size() * cols, 0.0f);
  const kernels::Status r = Ref().Embedding(
      view, ids.data(), static_cast<int64_t>(ids.size()), want.data());
  for (Backend* fast : FastBackends()) {
    std::vector<float> got(want.size(), 7.0f);
    if (SameOutcome(
            r, fast->Embedding(view, ids.data(),
                               static_cast<int64_t>(ids.size()), got.data()))) {
      CheckSame(want, got);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput in(data, size);
  switch (in.U8() % 7) {
    case 0:
      Gemm(in);
      break;
    case 1:
      RmsNorm(in);
      break;
    case 2:
      Softmax(in);
      break;
    case 3:
      Elementwise(in);
      break;
    case 4:
      Attention(in);
      break;
    case 5:
      Rope(in);
      break;
    default:
      Embedding(in);
      break;
  }
  return 0;
}
