// The BPE merge table and the merge loop of a Hugging Face BPE model.
//
// A merge (left, right) -> merged has a rank, its index in the file's
// merges list; a pair listed twice keeps the later rank, as in Hugging
// Face's loader. Apply() repeatedly merges the adjacent pair of lowest
// rank, leftmost first, until no adjacent pair has a merge: the result
// equals Hugging Face's BPE::merge_word (without dropout), including its
// rule that a queued pair is merged only if the pair now at that place
// still merges into the same token. O(n log n) in the number of symbols,
// so a whole SentencePiece-style text (which has no pre-tokenizer split)
// is cheap to merge.
//
// Thread safety: immutable after construction; Apply() is const.
#ifndef LAYERPROOF_TEXT_INTERNAL_BPE_H_
#define LAYERPROOF_TEXT_INTERNAL_BPE_H_

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace layerproof::text::internal {

class BpeMerges {
 public:
  BpeMerges() = default;

  // Appends a merge with the next rank (overwriting an earlier one for the
  // same pair).
  void Add(int32_t left, int32_t right, int32_t merged);

  int64_t size() const { return next_rank_; }

  // Merges `symbols` (token ids) in place.
  void Apply(std::vector<int32_t>* symbols) const;

 private:
  struct Merge {
    int64_t rank;
    int32_t merged;
  };
  static uint64_t Key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }
  const Merge* Find(int32_t left, int32_t right) const;

  std::unordered_map<uint64_t, Merge> merges_;
  int64_t next_rank_ = 0;
};

}  // namespace layerproof::text::internal

#endif  // LAYERPROOF_TEXT_INTERNAL_BPE_H_
