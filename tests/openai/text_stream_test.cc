// Stop strings and stream deltas (openai/text_stream.h): generation ends on
// the token that completes a stop string, the text is cut before it, and
// the deltas of a stream never send what a later token could still change,
// and add up to the whole text.
#include "openai/text_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/openai/text_fixture.h"

namespace layerproof::openai {
namespace {

TEST(FindStop, EarliestOfAll) {
  EXPECT_EQ(FindStop("hello world", {"world", "lo"}), 3u);
  EXPECT_EQ(FindStop("hello", {"x"}), std::string::npos);
  EXPECT_EQ(FindStop("hello", {}), std::string::npos);
}

// Feeds `ids` one by one, collecting the deltas; returns where it stopped.
size_t Feed(TextStream& s, const std::vector<int32_t>& ids,
            std::string* streamed) {
  for (size_t i = 0; i < ids.size(); ++i) {
    const bool stop = s.Add(ids[i]);
    *streamed += s.TakeDelta();
    if (stop) return i + 1;
  }
  *streamed += s.Flush();
  return ids.size();
}

TEST(TextStream, StopsOnTheTokenThatCompletesTheStopString) {
  auto text = testing::SyntheticText();
  const std::string sentence = "the cat sat on the mat and then it slept";
  auto ids = text->tokenizer().Encode(sentence, false);
  ASSERT_TRUE(ids.ok());
  ASSERT_GT(ids->size(), 4u);
  TextStream s(&text->tokenizer(), {"mat"});
  std::string streamed;
  const size_t used = Feed(s, *ids, &streamed);
  EXPECT_TRUE(s.stopped());
  EXPECT_EQ(s.Text(), "the cat sat on the ");
  EXPECT_EQ(streamed, s.Text());
  // The token that completed "mat" is the last one fed: the text of one
  // token fewer does not contain it.
  std::vector<int32_t> before(ids->begin(), ids->begin() + used - 1);
  auto shorter = text->tokenizer().Decode(before, true);
  ASSERT_TRUE(shorter.ok());
  EXPECT_EQ(shorter->find("mat"), std::string::npos);
}

TEST(TextStream, HoldsBackWhatMayBeginAStopString) {
  auto text = testing::SyntheticText();
  // Byte tokens, one per character, so every prefix is seen.
  const std::string sentence = "abcabd";
  std::vector<int32_t> ids;
  for (char c : sentence) {
    auto id = text->tokenizer().TokenId(std::string(1, c));
    ASSERT_TRUE(id.has_value()) << c;
    ids.push_back(*id);
  }
  TextStream s(&text->tokenizer(), {"abd"});
  std::vector<std::string> deltas;
  for (int32_t id : ids) {
    const bool stop = s.Add(id);
    deltas.push_back(s.TakeDelta());
    if (stop) break;
  }
  // "a", "ab" may begin "abd": held; at "abc" all three go; "a", "ab" are
  // held again; "abd" stops with nothing more to send.
  EXPECT_EQ(deltas, (std::vector<std::string>{"", "", "abc", "", "", ""}));
  EXPECT_EQ(s.Text(), "abc");
  EXPECT_TRUE(s.stopped());
}

TEST(TextStream, HoldsBackACharacterCutMidSequence) {
  auto text = testing::SyntheticText();
  // "é" is C3 A9; byte-level BPE spells those bytes as U+00C3 and U+00A9.
  auto c3 = text->tokenizer().TokenId("\xC3\x83");
  auto a9 = text->tokenizer().TokenId("\xC2\xA9");
  ASSERT_TRUE(c3.has_value() && a9.has_value());
  TextStream s(&text->tokenizer(), {});
  EXPECT_FALSE(s.Add(*c3));
  EXPECT_EQ(s.TakeDelta(), "");  // U+FFFD until the character is whole
  EXPECT_FALSE(s.Add(*a9));
  EXPECT_EQ(s.TakeDelta(), "\xC3\xA9");
  EXPECT_EQ(s.Flush(), "");
}

TEST(CheckStopStrings, HoldsTheOutputToItsStopStrings) {
  auto text = testing::SyntheticText();
  const text::Tokenizer& t = text->tokenizer();
  auto ids = t.Encode("the cat sat on the mat and then it slept", false);
  ASSERT_TRUE(ids.ok());
  // Where "mat" completes.
  TextStream s(&t, {"mat"});
  size_t k = 0;
  while (k < ids->size() && !s.Add((*ids)[k])) ++k;
  ASSERT_LT(k, ids->size());
  const std::vector<int32_t> honest(ids->begin(), ids->begin() + k + 1);
  EXPECT_TRUE(
      CheckStopStrings(honest, v1::FINISH_REASON_CANCELLED, {"mat"}, t).ok());
  // Ran on past the stop string to bill more tokens.
  const absl::Status past =
      CheckStopStrings(*ids, v1::FINISH_REASON_MAX_TOKENS, {"mat"}, t);
  EXPECT_EQ(past.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(past.message().find("ran past a stop string"),
            absl::string_view::npos);
  // Cut short, blaming a stop string that is not there.
  const std::vector<int32_t> short_cut(ids->begin(), ids->begin() + k);
  const absl::Status cut =
      CheckStopStrings(short_cut, v1::FINISH_REASON_CANCELLED, {"mat"}, t);
  EXPECT_EQ(cut.code(), absl::StatusCode::kDataLoss);
  // No stop strings at all: any honest finish but CANCELLED.
  EXPECT_TRUE(CheckStopStrings(*ids, v1::FINISH_REASON_MAX_TOKENS, {}, t).ok());
}

TEST(TextStream, WithoutATokenizerThereIsNoText) {
  TextStream s(nullptr, {"x"});
  EXPECT_FALSE(s.Add(5));
  EXPECT_EQ(s.TakeDelta(), "");
  EXPECT_EQ(s.Text(), "");
  EXPECT_EQ(s.ids(), std::vector<int32_t>{5});
}

}  // namespace
}  // namespace layerproof::openai
