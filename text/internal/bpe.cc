#include "text/internal/bpe.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace layerproof::text::internal {

void BpeMerges::Add(int32_t left, int32_t right, int32_t merged) {
  merges_[Key(left, right)] = Merge{next_rank_++, merged};
}

const BpeMerges::Merge* BpeMerges::Find(int32_t left, int32_t right) const {
  auto it = merges_.find(Key(left, right));
  return it == merges_.end() ? nullptr : &it->second;
}

void BpeMerges::Apply(std::vector<int32_t>* symbols) const {
  const size_t n = symbols->size();
  if (n < 2) return;

  // A doubly linked list over the symbols; a merged-away symbol is dead.
  struct Symbol {
    int32_t id;
    int64_t prev;  // -1 at the start.
    int64_t next;  // -1 at the end.
    bool alive;
  };
  std::vector<Symbol> sym(n);
  for (size_t i = 0; i < n; ++i) {
    sym[i] = Symbol{(*symbols)[i], static_cast<int64_t>(i) - 1,
                    i + 1 < n ? static_cast<int64_t>(i + 1) : -1, true};
  }

  // A candidate merge of the pair starting at `pos`; lowest rank first,
  // then leftmost.
  struct Candidate {
    int64_t rank;
    int64_t pos;
    int32_t merged;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  auto push_pair = [&](int64_t pos) {
    if (pos < 0 || sym[pos].next < 0) return;
    if (const Merge* m = Find(sym[pos].id, sym[sym[pos].next].id)) {
      queue.push(Candidate{m->rank, pos, m->merged});
    }
  };
  for (size_t i = 0; i + 1 < n; ++i) push_pair(static_cast<int64_t>(i));

  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = sym[top.pos];
    if (!left.alive || left.next < 0) continue;
    Symbol& right = sym[left.next];
    const Merge* now = Find(left.id, right.id);
    if (now == nullptr || now->merged != top.merged) continue;  // Stale.

    left.id = top.merged;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) sym[right.next].prev = top.pos;
    push_pair(left.prev);
    push_pair(top.pos);
  }

  symbols->clear();
  for (int64_t i = 0; i >= 0; i = sym[i].next) symbols->push_back(sym[i].id);
}

}  // namespace layerproof::text::internal
