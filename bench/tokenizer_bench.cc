// tokenizer_bench: LayerProof's encode throughput (MB/s of UTF-8 input, one
// thread) on a corpus, the number scripts/bench-tokenizers.sh sets beside
// Hugging Face tokenizers' on the same corpus in the same run.
//
// Usage: tokenizer_bench TOKENIZER_JSON CORPUS_JSON [SECONDS]
//   CORPUS_JSON: a JSON array of strings, each encoded with special tokens.
// Prints one JSON line: {"mb_per_s": median of 5 timed passes, ...}.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "text/tokenizer.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: tokenizer_bench TOKENIZER_JSON CORPUS_JSON [SECONDS]\n");
    return 2;
  }
  auto tokenizer = layerproof::text::Tokenizer::Load(argv[1]);
  if (!tokenizer.ok()) {
    std::fprintf(stderr, "%s\n", tokenizer.status().ToString().c_str());
    return 1;
  }
  std::ifstream in(argv[2]);
  std::stringstream ss;
  ss << in.rdbuf();
  const auto corpus = nlohmann::json::parse(ss.str()).get<std::vector<std::string>>();
  const double min_seconds = argc > 3 ? std::stod(argv[3]) : 1.0;
  size_t bytes = 0;
  for (const std::string& s : corpus) bytes += s.size();
  using Clock = std::chrono::steady_clock;
  size_t tokens = 0;
  std::vector<double> rates;
  for (int pass = 0; pass < 6; ++pass) {  // The first pass warms up.
    const auto start = Clock::now();
    size_t done = 0;
    double elapsed = 0;
    do {
      for (const std::string& s : corpus) {
        auto ids = (*tokenizer)->Encode(s, /*add_special_tokens=*/true);
        if (!ids.ok()) {
          std::fprintf(stderr, "%s\n", ids.status().ToString().c_str());
          return 1;
        }
        tokens += ids->size();
      }
      done += bytes;
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (elapsed < min_seconds / 5);
    if (pass > 0) rates.push_back(done / elapsed / 1e6);
  }
  std::sort(rates.begin(), rates.end());
  std::printf("{\"impl\": \"layerproof\", \"mb_per_s\": %.3f, \"min\": %.3f, \"max\": %.3f, "
              "\"corpus_bytes\": %zu, \"strings\": %zu}\n",
              rates[rates.size() / 2], rates.front(), rates.back(), bytes, corpus.size());
  return tokens == 0;
}
