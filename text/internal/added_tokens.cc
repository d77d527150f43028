#include "text/internal/added_tokens.h"

#include <algorithm>

#include "text/internal/regex.h"
#include "text/internal/unicode.h"

namespace layerproof::text::internal {
namespace {

// The code point that ends at `end` in valid UTF-8 `text` (end > 0).
char32_t LastCodePoint(std::string_view text, size_t end) {
  size_t begin = end - 1;
  while (begin > 0 && (static_cast<uint8_t>(text[begin]) & 0xC0) == 0x80) {
    --begin;
  }
  size_t len = 0;
  return DecodeUtf8(text, begin, &len);
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(
    const std::vector<const AddedToken*>& tokens,
    const std::vector<std::string>& patterns)
    : tokens_(tokens) {
  nodes_.emplace_back();
  for (size_t i = 0; i < patterns.size(); ++i) {
    if (patterns[i].empty()) continue;  // An empty pattern never matches.
    int32_t node = 0;
    for (char c : patterns[i]) {
      const auto byte = static_cast<uint8_t>(c);
      int32_t child = Child(node, byte);
      if (child < 0) {
        child = static_cast<int32_t>(nodes_.size());
        auto& next = nodes_[node].next;
        next.insert(std::lower_bound(next.begin(), next.end(),
                                     std::pair<uint8_t, int32_t>{byte, 0}),
                    {byte, child});
        nodes_.emplace_back();
      }
      node = child;
    }
    // The first of two equal patterns wins, as in Aho-Corasick.
    if (nodes_[node].token < 0) nodes_[node].token = static_cast<int32_t>(i);
  }
}

int32_t AddedTokenMatcher::Child(int32_t node, uint8_t byte) const {
  const auto& next = nodes_[node].next;
  auto it = std::lower_bound(next.begin(), next.end(),
                             std::pair<uint8_t, int32_t>{byte, 0});
  return it != next.end() && it->first == byte ? it->second : -1;
}

std::vector<AddedMatch> AddedTokenMatcher::Find(std::string_view text) const {
  std::vector<AddedMatch> out;
  if (tokens_.empty()) return out;
  size_t start_offset = 0;  // End of the previous accepted match.
  for (size_t i = 0; i < text.size();) {
    int32_t node = 0, best = -1;
    size_t best_end = 0;
    for (size_t j = i; j < text.size(); ++j) {
      node = Child(node, static_cast<uint8_t>(text[j]));
      if (node < 0) break;
      if (nodes_[node].token >= 0) {
        best = nodes_[node].token;
        best_end = j + 1;
      }
    }
    if (best < 0) {
      ++i;
      continue;
    }
    const AddedToken& t = *tokens_[best];
    size_t begin = i, end = best_end;
    i = best_end;  // The search resumes after the match either way.
    if (t.single_word) {
      const bool space_before =
          begin == 0 || !IsWordChar(LastCodePoint(text, begin));
      size_t len = 0;
      const bool space_after =
          end == text.size() || !IsWordChar(DecodeUtf8(text, end, &len));
      if (!space_before || !space_after) continue;
    }
    if (t.lstrip) {
      size_t b = begin;
      while (b > 0 && IsWhiteSpace(LastCodePoint(text, b))) {
        do --b;
        while (b > 0 && (static_cast<uint8_t>(text[b]) & 0xC0) == 0x80);
      }
      begin = std::max(b, start_offset);
    }
    if (t.rstrip) {
      size_t len = 0;
      while (end < text.size() && IsWhiteSpace(DecodeUtf8(text, end, &len))) {
        end += len;
      }
    }
    start_offset = end;
    out.push_back(AddedMatch{begin, end, t.id});
  }
  return out;
}

}  // namespace layerproof::text::internal
