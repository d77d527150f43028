// Finding added tokens in text, as Hugging Face's AddedVocabulary does: an
// Aho-Corasick search with leftmost-longest matches (here a byte trie
// walked from each position: the same matches), then lstrip / rstrip /
// single_word applied to each match in order.
//
// Thread safety: immutable after construction.
#ifndef LAYERPROOF_TEXT_INTERNAL_ADDED_TOKENS_H_
#define LAYERPROOF_TEXT_INTERNAL_ADDED_TOKENS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text/internal/tokenizer_spec.h"

namespace layerproof::text::internal {

// One added token found in the text: bytes [begin, end), stripped white
// space included.
struct AddedMatch {
  size_t begin;
  size_t end;
  int32_t id;
};

class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  // `patterns[i]` is the text to find for `tokens[i]`.
  AddedTokenMatcher(const std::vector<const AddedToken*>& tokens,
                    const std::vector<std::string>& patterns);

  bool empty() const { return tokens_.empty(); }

  // The matches in valid UTF-8 `text`, in order.
  std::vector<AddedMatch> Find(std::string_view text) const;

 private:
  struct Node {
    std::vector<std::pair<uint8_t, int32_t>> next;  // Sorted by byte.
    int32_t token = -1;  // Index into tokens_ of the pattern ending here.
  };
  int32_t Child(int32_t node, uint8_t byte) const;

  std::vector<Node> nodes_;
  std::vector<const AddedToken*> tokens_;
};

}  // namespace layerproof::text::internal

#endif  // LAYERPROOF_TEXT_INTERNAL_ADDED_TOKENS_H_
