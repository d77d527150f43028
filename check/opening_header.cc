#include "check/opening_header.h"

#include <algorithm>
#include <string>

#include "store/commitment.h"
#include "store/internal/str_cat.h"

namespace layerproof::check {
namespace {

using store::internal::Cat;

template <typename Layers>
std::string List(const Layers& layers) {
  std::string out = "[";
  for (uint32_t k : layers) {
    if (out.size() > 1) out += ",";
    out += std::to_string(k);
  }
  return out + "]";
}

}  // namespace

absl::Status CheckOpeningHeaderShape(const v1::OpeningHeader& header,
                                     std::span<const uint32_t> layers,
                                     uint64_t positions,
                                     uint64_t hidden_size) {
  if (!std::equal(layers.begin(), layers.end(), header.layers().begin(),
                  header.layers().end())) {
    return absl::InvalidArgumentError(
        Cat("OpeningHeader.layers: got ", List(header.layers()), ", want ",
            List(layers), " (as requested)"));
  }
  if (header.positions() != positions) {
    return absl::InvalidArgumentError(
        Cat("OpeningHeader.positions: got ", header.positions(), ", want ",
            positions, " (prompt + output - 1, as committed)"));
  }
  if (header.hidden_size() != hidden_size) {
    return absl::InvalidArgumentError(
        Cat("OpeningHeader.hidden_size: got ", header.hidden_size(), ", want ",
            hidden_size, " (as committed)"));
  }
  if (positions < 1 || hidden_size < 1 || hidden_size > store::kMaxHiddenSize) {
    return absl::InvalidArgumentError(
        Cat("OpeningHeader: positions ", positions, " x hidden_size ",
            hidden_size, ", want positions >= 1 and hidden_size 1..",
            store::kMaxHiddenSize));
  }
  return absl::OkStatus();
}

}  // namespace layerproof::check
