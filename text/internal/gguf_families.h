// The tokenizer.ggml.pre families LayerProof reads and writes: for each,
// the names llama.cpp gives it and the normalizer, pre-tokenizer and
// decoder of that family's own released tokenizer.json. One table for the
// reader (text/gguf_tokenizer.cc) and the writer
// (text/gguf_tokenizer_export.cc).
//
// Thread safety: constant data.
#ifndef LAYERPROOF_TEXT_INTERNAL_GGUF_FAMILIES_H_
#define LAYERPROOF_TEXT_INTERNAL_GGUF_FAMILIES_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace layerproof::text::internal {

// llama.cpp's llama_token_type, the values of tokenizer.ggml.token_type.
enum GgufTokenType : int32_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

struct PreFamily {
  const char* names[3];  // the first is the one the writer uses
  // llama.cpp's ignore_merges for this pre type (true only for Llama 3).
  bool ignore_merges;
  bool default_add_bos;    // llama.cpp's default when add_bos_token is absent
  const char* normalizer;  // JSON, or null for none
  const char* pre_tokenizer;  // JSON
  const char* decoder;        // JSON
};

// The family named `pre` (any of its names), or null.
const PreFamily* FindPreFamily(std::string_view pre);
// Every supported name, comma-separated, for error messages.
std::string SupportedPreNames();
// The families, for the writer's matching.
const PreFamily* PreFamiliesBegin();
const PreFamily* PreFamiliesEnd();

}  // namespace layerproof::text::internal

#endif  // LAYERPROOF_TEXT_INTERNAL_GGUF_FAMILIES_H_
