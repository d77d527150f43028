// kernels::Printable: what outside bytes look like in an error message.
#include "kernels/printable.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace layerproof::kernels {
namespace {

TEST(PrintableTest, KeepsAsciiAndValidUtf8) {
  EXPECT_EQ(Printable("model.layers.0.mlp"), "model.layers.0.mlp");
  EXPECT_EQ(Printable("C:\\models\\x"), "C:\\models\\x");  // backslash kept
  EXPECT_EQ(Printable("caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80"),
            "caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80");
  EXPECT_TRUE(IsPrintable("caf\xC3\xA9"));
}

TEST(PrintableTest, EscapesControlsAndTerminalSequences) {
  EXPECT_EQ(Printable("a\nb\r\tc"), "a\\nb\\r\\tc");
  EXPECT_EQ(Printable(std::string("\x1B[31mred\x00", 9)), "\\x1b[31mred\\x00");
  EXPECT_EQ(Printable("\x7F"), "\\x7f");
  EXPECT_EQ(Printable("\xC2\x9B"), "\\xc2\\x9b");  // U+009B, the C1 CSI
  EXPECT_FALSE(IsPrintable("a\nb"));
}

TEST(PrintableTest, EscapesEveryByteOfInvalidUtf8) {
  EXPECT_EQ(Printable("\xFF\xFE"), "\\xff\\xfe");
  EXPECT_EQ(Printable("\xC0\xAF"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(Printable("\xE0\x80\xAF"), "\\xe0\\x80\\xaf");  // overlong
  EXPECT_EQ(Printable("\xED\xA0\x80"), "\\xed\\xa0\\x80");  // surrogate
  EXPECT_EQ(Printable("\xF4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // > 10FFFF
  EXPECT_EQ(Printable("\xE6\x97"), "\\xe6\\x97");  // cut short
  EXPECT_EQ(Printable("ok\xC3"), "ok\\xc3");
}

TEST(PrintableTest, CapsTheLength) {
  EXPECT_EQ(Printable(std::string(10, 'a'), 4), "aaaa...");
  EXPECT_EQ(Printable(std::string(4, 'a'), 4), "aaaa");
}

// Over random bytes: the output is always printable, and printing it again
// changes nothing.
TEST(PrintableTest, OutputIsPrintableAndAFixedPoint) {
  std::mt19937 rng(7);
  for (int round = 0; round < 20000; ++round) {
    std::string bytes(rng() % 24, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    const std::string p = Printable(bytes);
    ASSERT_TRUE(IsPrintable(p)) << p;
    ASSERT_EQ(Printable(p), p);
    if (IsPrintable(bytes)) ASSERT_EQ(p, bytes);
  }
}

}  // namespace
}  // namespace layerproof::kernels
