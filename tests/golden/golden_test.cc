// The cross-hardware contract: every backend this machine has reproduces
// every golden hash in tests/golden/kernels.golden (compiled in). The same
// binary runs under qemu-aarch64 (ref, neon) and on GPU machines (cuda).
#include "kernels/golden.h"

#include <gtest/gtest.h>

#include <set>

#include "kernels/dispatch.h"

namespace layerproof::kernels {
namespace {

TEST(GoldenFileTest, ParsesAndListsExactlyTheCases) {
  auto golden = ParseGoldenFile(EmbeddedGoldenFile());
  ASSERT_TRUE(golden.ok()) << golden.status().ToString();
  std::set<std::string> in_file;
  for (const auto& [name, hash] : *golden) in_file.insert(name);
  const std::vector<std::string> names = GoldenCaseNames();
  EXPECT_EQ(in_file, std::set<std::string>(names.begin(), names.end()));
}

TEST(GoldenFileTest, RejectsMalformedFiles) {
  EXPECT_FALSE(ParseGoldenFile("gemm abc\n").ok());  // no spec_version
  EXPECT_FALSE(ParseGoldenFile("spec_version 999\n").ok());
  EXPECT_FALSE(ParseGoldenFile("spec_version 1\nx 1234\n").ok());
  EXPECT_FALSE(ParseGoldenFile("spec_version 1\nx " + std::string(64, 'a') +
                               "\nx " + std::string(64, 'b') + "\n")
                   .ok());
}

class GoldenTest : public ::testing::TestWithParam<BackendKind> {};

TEST_P(GoldenTest, ReproducesEveryGoldenHash) {
  auto golden = ParseGoldenFile(EmbeddedGoldenFile());
  ASSERT_TRUE(golden.ok());
  Backend* b = *GetBackend(GetParam());
  for (const GoldenResult& r : RunGoldenCases(*b)) {
    ASSERT_TRUE(r.status.ok()) << r.name << ": " << r.status.ToString();
    auto it = golden->find(r.name);
    ASSERT_NE(it, golden->end()) << r.name;
    EXPECT_EQ(r.sha256_hex, it->second) << r.name << " on " << b->name();
  }
}

INSTANTIATE_TEST_SUITE_P(AllBackends, GoldenTest,
                         ::testing::ValuesIn(AvailableBackends()),
                         [](const auto& info) {
                           return std::string(BackendName(info.param));
                         });

}  // namespace
}  // namespace layerproof::kernels
