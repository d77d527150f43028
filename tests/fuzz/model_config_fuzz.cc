// Fuzzes config.json parsing (kernels/model/config.h ParseModelConfig) and
// generation_config.json (ApplyGenerationConfig): the input is both.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kernels/model/config.h"
#include "tests/fuzz/fuzz_check.h"

namespace model = layerproof::kernels::model;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = model::ParseModelConfig(text, "config.json");
  LP_FUZZ_CHECK_PRINTABLE(config.status());
  if (config.ok()) {
    // A config that parsed parses the same way twice.
    auto again = model::ParseModelConfig(text, "config.json");
    LP_FUZZ_CHECK(again.ok() && *again == *config);
    model::ModelConfig c = *config;
    auto applied =
        model::ApplyGenerationConfig(text, "generation_config.json", &c);
    LP_FUZZ_CHECK_PRINTABLE(applied);
  }
  return 0;
}
