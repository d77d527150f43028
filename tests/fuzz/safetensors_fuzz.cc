// Fuzzes the safetensors reader (kernels/model/safetensors.h) on whole file
// images: SafetensorsFile::FromBytes checks the header before any byte is
// used; every tensor view it returns must lie inside the image.
#include <cstddef>
#include <cstdint>

#include "kernels/model/safetensors.h"
#include "tests/fuzz/fuzz_check.h"

using layerproof::kernels::model::SafetensorsFile;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = SafetensorsFile::FromBytes(data, size, "model.safetensors");
  LP_FUZZ_CHECK_PRINTABLE(file.status());
  if (!file.ok()) return 0;
  for (const auto& [name, view] : (*file)->tensors()) {
    LP_FUZZ_CHECK(view.name == name);
    LP_FUZZ_CHECK(view.data >= data && view.bytes <= size &&
                  static_cast<size_t>(view.data - data) <= size - view.bytes);
    uint64_t elements = 1;
    for (int64_t d : view.shape) {
      LP_FUZZ_CHECK(d >= 0);
      elements *= static_cast<uint64_t>(d);
    }
    LP_FUZZ_CHECK(elements * layerproof::kernels::DTypeSize(view.dtype) ==
                  view.bytes);
  }
  return 0;
}
