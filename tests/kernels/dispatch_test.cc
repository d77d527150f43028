// LAYERPROOF_BACKEND selects the default backend; unknown names and backends
// this machine cannot run are clear errors.
#include "kernels/dispatch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

namespace layerproof::kernels {
namespace {

using ::testing::HasSubstr;

class DispatchTest : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv("LAYERPROOF_BACKEND"); }
};

TEST_F(DispatchTest, ParsesEveryBackendName) {
  for (const char* name : {"ref", "avx2", "avx512", "neon", "cuda"}) {
    auto kind = ParseBackendKind(name);
    ASSERT_TRUE(kind.ok()) << name;
    EXPECT_EQ(BackendName(*kind), name);
  }
  auto bad = ParseBackendKind("avx1024");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("got \"avx1024\""));
}

TEST_F(DispatchTest, RefIsAlwaysAvailableAndFirst) {
  const auto kinds = AvailableBackends();
  ASSERT_FALSE(kinds.empty());
  EXPECT_EQ(kinds.front(), BackendKind::kRef);
}

TEST_F(DispatchTest, EnvironmentForcesEachAvailableBackend) {
  for (BackendKind kind : AvailableBackends()) {
    setenv("LAYERPROOF_BACKEND", std::string(BackendName(kind)).c_str(), 1);
    auto b = DefaultBackend();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_EQ((*b)->kind(), kind);
  }
}

TEST_F(DispatchTest, AutoPicksTheFastestCpuBackend) {
  // What this CPU supports, asked independently of dispatch.cc.
#if defined(__x86_64__)
  const BackendKind want =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
          ? BackendKind::kAvx512
      : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
          ? BackendKind::kAvx2
          : BackendKind::kRef;
#elif defined(__aarch64__)
  const BackendKind want = BackendKind::kNeon;
#else
  const BackendKind want = BackendKind::kRef;
#endif
  setenv("LAYERPROOF_BACKEND", "auto", 1);
  EXPECT_EQ((*DefaultBackend())->kind(), want);
  unsetenv("LAYERPROOF_BACKEND");
  EXPECT_EQ((*DefaultBackend())->kind(), want);
}

TEST_F(DispatchTest, UnknownOrUnavailableBackendIsAnError) {
  setenv("LAYERPROOF_BACKEND", "tpu", 1);
  EXPECT_EQ(DefaultBackend().status().code(), StatusCode::kInvalidArgument);
  // On every machine at least one ISA backend cannot run: NEON on x86,
  // AVX on aarch64.
#if defined(__x86_64__)
  setenv("LAYERPROOF_BACKEND", "neon", 1);
#else
  setenv("LAYERPROOF_BACKEND", "avx512", 1);
#endif
  auto s = DefaultBackend();
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(s.status().message(), HasSubstr("cannot run on this machine"));
}

}  // namespace
}  // namespace layerproof::kernels
