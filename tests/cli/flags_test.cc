// cli::Flags: both spellings of a valued flag, and the refusals.
#include "cli/flags.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace layerproof::cli {
namespace {

Flags Make() { return Flags({"--model", "--listen"}, {"--insecure"}); }

TEST(FlagsTest, SeparateAndEqualsSpellingsAgree) {
  Flags flags = Make();
  std::string error;
  ASSERT_TRUE(flags.Parse(
      {"--model", "/m", "--listen=0.0.0.0:7000", "--insecure"}, &error))
      << error;
  EXPECT_EQ(flags.Get("--model"), "/m");
  EXPECT_EQ(flags.Get("--listen"), "0.0.0.0:7000");
  EXPECT_TRUE(flags.Has("--insecure"));
}

TEST(FlagsTest, EqualsKeepsTheRestOfTheValue) {
  Flags flags = Make();
  std::string error;
  ASSERT_TRUE(flags.Parse({"--model=a=b", "--listen="}, &error)) << error;
  EXPECT_EQ(flags.Get("--model"), "a=b");
  EXPECT_TRUE(flags.Has("--listen"));
  EXPECT_EQ(flags.Get("--listen", "default"), "");
}

TEST(FlagsTest, RefusalsNameTheArgument) {
  std::string error;
  EXPECT_FALSE(Make().Parse({"--insecure=yes"}, &error));
  EXPECT_EQ(error, "--insecure takes no value");
  EXPECT_FALSE(Make().Parse({"--bogus=1"}, &error));
  EXPECT_EQ(error, "unknown argument \"--bogus\"");
  EXPECT_FALSE(Make().Parse({"--model"}, &error));
  EXPECT_EQ(error, "--model: missing value");
  EXPECT_FALSE(Make().Parse({"stray"}, &error));
  EXPECT_EQ(error, "unknown argument \"stray\"");
}

}  // namespace
}  // namespace layerproof::cli
