// Fuzzes the GGUF reader (kernels/model/gguf.h) on whole file images, then
// what the loaders read from a file that parsed: the model (config and
// tensors, kernels/model/gguf_model.h) and the tokenizer, config and chat
// template of its tokenizer.ggml.* keys (text/gguf_tokenizer.h).
#include <cstddef>
#include <cstdint>

#include "kernels/model/gguf.h"
#include "kernels/model/gguf_model.h"
#include "tests/fuzz/fuzz_check.h"
#include "text/gguf_tokenizer.h"

using layerproof::kernels::model::GgufFile;
using layerproof::kernels::model::GgufValue;

namespace {

// Walks a value as a reader would (nested arrays included).
void Touch(const GgufValue& v, int depth) {
  (void)v.AsUint();
  (void)v.AsInt();
  (void)v.AsFloat();
  (void)v.AsBool();
  (void)v.AsString();
  if (depth < 8) {
    for (const GgufValue& e : v.Elements()) Touch(e, depth + 1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = GgufFile::FromBytes(data, size, "m.gguf");
  LP_FUZZ_CHECK_PRINTABLE(file.status());
  if (!file.ok()) return 0;
  const GgufFile& gguf = **file;
  for (const auto& [key, value] : gguf.metadata()) Touch(value, 0);
  for (const auto& [name, view] : gguf.tensors()) {
    LP_FUZZ_CHECK(view.data >= data && view.bytes <= size &&
                  static_cast<size_t>(view.data - data) <= size - view.bytes);
  }
  auto model = layerproof::kernels::model::ReadGgufModel(gguf);
  LP_FUZZ_CHECK_PRINTABLE(model.status());
  auto text = layerproof::text::ModelTextFromGguf(gguf);
  LP_FUZZ_CHECK_PRINTABLE(text.status());
  if (text.ok() && *text != nullptr) {
    auto ids = (*text)->EncodePrompt("Hello, world! 123");
    LP_FUZZ_CHECK_PRINTABLE(ids.status());
  }
  return 0;
}
