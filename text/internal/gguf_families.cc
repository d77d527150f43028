#include "text/internal/gguf_families.h"

#include <iterator>

namespace layerproof::text::internal {
namespace {

// Llama 3 (Meta-Llama-3*): the split and ByteLevel without its regex.
constexpr char kLlama3Pre[] =
    R"({"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Isolated", "invert": false}, {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]})";
// Qwen2 / Qwen2.5 / Qwen3: single digits, NFC first.
constexpr char kQwen2Pre[] =
    R"({"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Isolated", "invert": false}, {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}]})";
// DeepSeek-V3 (and R1): three splits (the third holds literal CR LF).
constexpr char kDeepseekV3Pre[] =
    R"({"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Isolated", "invert": false}, {"type": "Split", "pattern": {"Regex": "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"}, "behavior": "Isolated", "invert": false}, {"type": "Split", "pattern": {"Regex": "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Isolated", "invert": false}, {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]})";
// GPT-4o (o200k_base).
constexpr char kGpt4oPre[] =
    R"({"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Removed", "invert": true}, {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]})";
constexpr char kByteLevelDecoder[] =
    R"({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true})";

constexpr PreFamily kFamilies[] = {
    {{"llama-bpe", "llama3", "llama-v3"},
     true,
     true,
     nullptr,
     kLlama3Pre,
     kByteLevelDecoder},
    {{"qwen2", nullptr, nullptr},
     false,
     false,
     R"({"type": "NFC"})",
     kQwen2Pre,
     kByteLevelDecoder},
    {{"deepseek-v3", nullptr, nullptr},
     false,
     false,
     nullptr,
     kDeepseekV3Pre,
     kByteLevelDecoder},
    {{"gpt-4o", nullptr, nullptr},
     false,
     false,
     nullptr,
     kGpt4oPre,
     kByteLevelDecoder},
};

}  // namespace

const PreFamily* FindPreFamily(std::string_view pre) {
  for (const PreFamily& f : kFamilies) {
    for (const char* n : f.names) {
      if (n != nullptr && pre == n) return &f;
    }
  }
  return nullptr;
}

const PreFamily* PreFamiliesBegin() { return std::begin(kFamilies); }
const PreFamily* PreFamiliesEnd() { return std::end(kFamilies); }

std::string SupportedPreNames() {
  std::string s;
  for (const PreFamily& f : kFamilies) {
    for (const char* n : f.names) {
      if (n == nullptr) continue;
      if (!s.empty()) s += ", ";
      s += n;
    }
  }
  return s;
}

}  // namespace layerproof::text::internal
