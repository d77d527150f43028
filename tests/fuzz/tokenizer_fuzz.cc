// Fuzzes tokenizer.json parsing (text/tokenizer.h Tokenizer::FromJson);
// a tokenizer that parsed encodes and decodes a few fixed texts, and
// decoding what it encoded must not fail.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tests/fuzz/fuzz_check.h"
#include "text/tokenizer.h"

using layerproof::text::Tokenizer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  auto tokenizer = Tokenizer::FromJson(json, "tokenizer.json");
  LP_FUZZ_CHECK_PRINTABLE(tokenizer.status());
  if (!tokenizer.ok()) return 0;
  const Tokenizer& t = **tokenizer;
  static constexpr std::string_view kTexts[] = {
      "", "Hello, world!", " leading  spaces\tand\nnewlines\r\n",
      "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80 123456789",
      "<|endoftext|><s></s>[INST]"};
  for (std::string_view text : kTexts) {
    for (bool special : {false, true}) {
      auto ids = t.Encode(text, special);
      LP_FUZZ_CHECK_PRINTABLE(ids.status());
      if (!ids.ok()) continue;
      for (int32_t id : *ids) {
        LP_FUZZ_CHECK(id >= 0 && id < t.vocab_size());
      }
      auto back = t.Decode(*ids, /*skip_special=*/!special);
      LP_FUZZ_CHECK_PRINTABLE(back.status());
      LP_FUZZ_CHECK(back.ok());
    }
  }
  const std::vector<int32_t> probe = {0,  1,      2, static_cast<int32_t>(size),
                                      -1, 1 << 30};
  auto decoded = t.Decode(probe);
  LP_FUZZ_CHECK_PRINTABLE(decoded.status());
  for (int32_t id : probe) {
    (void)t.TokenText(id);
    (void)t.IsSpecial(id);
  }
  return 0;
}
