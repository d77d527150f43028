#include "text/internal/synthetic_corpus.h"

#include <string>
#include <string_view>

namespace layerproof::text::internal {

// Frozen: see the header. ASCII only, so its bytes are the same in every
// source encoding; carriage returns (a checkout with CRLF line ends) are
// dropped, so the text is the same on every platform.
std::string_view SyntheticCorpus() {
  static constexpr std::string_view kText =
      R"(A transparency log is a public record that only grows. Every entry that
is added to the log is hashed, and the hashes are combined into a tree, so
that the root of the tree commits to the whole history of the log. When the
log operator signs a new root, it signs a checkpoint: the size of the log and
the root hash at that size. Anyone who holds two checkpoints can ask for a
consistency proof, which shows that the larger tree contains the smaller one,
and that nothing was removed or rewritten in between.

The same idea can be used for computation. If a model answers a question,
the answer is only as good as the arithmetic that produced it. We can write
down every input, every weight and every intermediate result, hash them, and
append the hashes to the log. Later, an auditor who does not trust the
operator can take the same inputs and the same weights, run the same
arithmetic, and check that the hashes match. If one bit differs, the proof
fails, and the auditor knows exactly which layer and which step went wrong.

For this to work, the arithmetic must be deterministic. Floating point
addition is not associative: the sum of a, b and c depends on the order in
which the numbers are added. A matrix multiplication that splits its work
across many threads may add the partial sums in a different order each time
it runs. The result is close, but it is not the same, and a hash of a number
that is close is not the hash of the number. So the kernels fix the order of
every reduction, round every product the same way, and never let the
compiler fuse a multiply and an add into one instruction unless the contract
says so.

Consider the numbers 1, 2, 3, 4, 5, 6, 7, 8, 9 and 10. Their sum is 55, and
it is 55 in any order, because small integers are exact in floating point.
Now consider 0.1, 0.2 and 0.3. The sum of 0.1 and 0.2 is not exactly 0.3,
and adding 0.3 first gives a different last bit than adding it last. One
part in a million is a small error, but a hash does not care about the size
of an error. It only cares whether the bits are the same.

The log itself is simple. Each leaf is the hash of one record. Each inner
node is the hash of its two children. The tree is never rebalanced; new
leaves are added on the right. An inclusion proof for a leaf is the list of
sibling hashes on the path from the leaf to the root, and it has about log2
of n hashes for a tree of n leaves. A tree of one million leaves needs about
twenty hashes to prove that a leaf is in it, and a verifier can check those
twenty hashes in a few microseconds.

Tokens are the units a language model reads and writes. A tokenizer turns
text into a sequence of numbers, and turns numbers back into text. The
tokenizer used here learns its vocabulary from this very text: it starts
with the two hundred and fifty six possible bytes, counts which pairs of
neighbouring tokens occur most often, merges the most frequent pair into a
new token, and repeats. Common words such as the, and, log, hash and tree
soon become single tokens, while rare words stay split into pieces.

A careful reader will ask what happens when the operator lies. Suppose the
operator claims that the model produced a certain answer, but in fact it ran
a smaller, cheaper model. The checkpoint names the model by the digest of
its weights. The auditor downloads the weights, checks the digest, replays
the computation, and compares the layer hashes one by one. The first hash
that differs points to the first place where the stories diverge. There is
no need to trust the operator, the network, or the machine that did the
work; it is enough to trust the arithmetic and the hash function.

Time matters too. A log that is consistent but stale is of little use, so
checkpoints carry a timestamp, and witnesses who watch the log countersign
the checkpoints they have seen. If the operator shows one history to one
user and another history to another, the witnesses will hold two signed
checkpoints that cannot both be true, and that pair of signatures is itself
the proof of the lie.

Numbers appear everywhere in this work: 32 bits for a float, 16 bits for a
half, 8 bits for a byte, 256 values in a byte, 4096 entries in a table, 65536
rows in a large matrix, and 2 to the power of 64 possible counters for the
random number generator. The generator is counter based, so the value at any
position can be computed directly, without running through all the values
before it. That makes sampling reproducible: the same seed and the same
counter always give the same token.

In the end, the goal is modest. We do not promise that the model is right.
We promise that the model that ran is the model that was named, that the
inputs were the inputs that were logged, and that anyone, at any later time,
can run the same arithmetic and get the same bits.
)";
  static const std::string kClean = [] {
    std::string clean;
    for (char c : kText) {
      if (c != '\r') clean.push_back(c);
    }
    return clean;
  }();
  return kClean;
}

}  // namespace layerproof::text::internal
