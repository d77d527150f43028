// Shared helpers for the kernel tests: seeded inputs with special values,
// stored-format weights, and bit-exact comparison with a useful message.
#ifndef LAYERPROOF_TESTS_KERNELS_TEST_UTIL_H_
#define LAYERPROOF_TESTS_KERNELS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/dispatch.h"
#include "kernels/dtype.h"

namespace layerproof::kernels::testing {

// Special values every fast path must treat exactly like ref.
inline const std::vector<float>& SpecialValues() {
  static const std::vector<float> v = {
      0.0f,     -0.0f,     1e-45f, -1e-45f, 1e-40f,  -2.5e-39f, 1.17549435e-38f,
      INFINITY, -INFINITY, NAN,    -NAN,    3.4e38f, -3.4e38f,  65504.0f,
      1e30f,    -1e-30f,   88.7f,  -103.9f};
  return v;
}

// n floats uniform in [-scale, scale); with probability `special_rate` an
// element is replaced by a special value.
inline std::vector<float> RandomFloats(std::mt19937_64& rng, int64_t n,
                                       float scale, double special_rate = 0) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::uniform_real_distribution<double> coin(0, 1);
  std::vector<float> v(n);
  const auto& sp = SpecialValues();
  for (auto& x : v) {
    x = coin(rng) < special_rate ? sp[rng() % sp.size()] : u(rng);
  }
  return v;
}

struct TestWeights {
  std::vector<unsigned char> bytes;
  WeightView view;
};

inline TestWeights MakeTestWeights(const std::vector<float>& f, int64_t rows,
                                   int64_t cols, DType dtype) {
  TestWeights w;
  w.bytes = EncodeWeights(f, dtype);
  w.view = {w.bytes.data(), dtype, rows, cols};
  return w;
}

// Bit-exact equality of two float buffers; the failure names the first
// differing element and both bit patterns.
inline ::testing::AssertionResult BitsEqual(const float* want, const float* got,
                                            int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (FloatBits(want[i]) != FloatBits(got[i])) {
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "element %lld: want %a (0x%08x), got %a (0x%08x)",
                    static_cast<long long>(i), want[i], FloatBits(want[i]),
                    got[i], FloatBits(got[i]));
      return ::testing::AssertionFailure() << buf;
    }
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult BitsEqual(const std::vector<float>& want,
                                            const std::vector<float>& got) {
  if (want.size() != got.size()) {
    return ::testing::AssertionFailure()
           << "size " << got.size() << ", want " << want.size();
  }
  return BitsEqual(want.data(), got.data(), want.size());
}

inline Backend* Ref() { return *GetBackend(BackendKind::kRef); }

// Packs w for ref and for `fast`, runs Gemm on both and compares every output
// bit. Fails on any error, on weights packed for the wrong backend, or on the
// first differing element.
inline ::testing::AssertionResult GemmMatchesRef(Backend& fast,
                                                 const std::vector<float>& x,
                                                 int64_t m, const WeightView& w,
                                                 const float* bias) {
  auto ref_w = Ref()->PackWeights(w);
  auto fast_w = fast.PackWeights(w);
  if (!ref_w.ok() || !fast_w.ok()) {
    return ::testing::AssertionFailure()
           << "PackWeights: ref " << ref_w.status().ToString() << ", "
           << fast.name() << " " << fast_w.status().ToString();
  }
  if ((*fast_w)->backend() != fast.kind()) {
    return ::testing::AssertionFailure()
           << "weights packed for the wrong backend";
  }
  std::vector<float> want(m * w.rows), got(m * w.rows, 7.0f);
  const Status r = Ref()->Gemm(x.data(), m, **ref_w, bias, want.data());
  const Status f = fast.Gemm(x.data(), m, **fast_w, bias, got.data());
  if (!r.ok() || !f.ok()) {
    return ::testing::AssertionFailure() << "Gemm: ref " << r.ToString() << ", "
                                         << fast.name() << " " << f.ToString();
  }
  return BitsEqual(want, got);
}

// Every backend this build has and this machine runs, other than ref.
inline std::vector<BackendKind> FastBackends() {
  std::vector<BackendKind> out;
  for (BackendKind k : AvailableBackends()) {
    if (k != BackendKind::kRef) out.push_back(k);
  }
  return out;
}

inline std::string KindName(const ::testing::TestParamInfo<BackendKind>& info) {
  return std::string(BackendName(info.param));
}

}  // namespace layerproof::kernels::testing

#endif  // LAYERPROOF_TESTS_KERNELS_TEST_UTIL_H_
