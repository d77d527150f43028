#include "check/opening_stream.h"

#include <bit>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "check/opening_header.h"

namespace layerproof::check {
namespace {

absl::Status Malformed(std::string what) {
  return absl::InvalidArgumentError(
      absl::StrCat("opening malformed: ", std::move(what)));
}

}  // namespace

absl::Status OpeningAssembler::Add(v1::OpenChunk& chunk) {
  const int64_t index = chunks_++;
  if (chunk.has_header()) {
    if (have_header_) {
      return Malformed(
          absl::StrCat("chunk ", index, ": a second header, want one header"));
    }
    have_header_ = true;
    return TakeHeader(std::move(*chunk.mutable_header()));
  }
  if (!chunk.has_rows()) {
    return Malformed(absl::StrCat("chunk ", index,
                                  ": empty, want a header "
                                  "or activation rows"));
  }
  if (!have_header_) {
    return Malformed(absl::StrCat("chunk ", index,
                                  ": activation rows, want the header first"));
  }
  return TakeRows(index, chunk.rows());
}

absl::StatusOr<Opening> OpeningAssembler::Finish() {
  if (!have_header_) return Malformed("ended without a header");
  if (current_ < layers_.size()) {
    return Malformed(absl::StrCat(
        "ended after ", rows_, " of ", opening_.header.positions(),
        " rows of h^", layers_[current_], " (", layers_.size() - current_,
        " requested layers incomplete)"));
  }
  return std::move(opening_);
}

absl::Status OpeningAssembler::TakeHeader(v1::OpeningHeader header) {
  if (absl::Status shape =
          CheckOpeningHeaderShape(header, layers_, positions_, hidden_size_);
      !shape.ok()) {
    return Malformed(std::string(shape.message()));
  }
  row_bytes_ = hidden_size_ * sizeof(float);
  if (!layers_.empty() &&
      (positions_ > max_bytes_ / row_bytes_ ||
       positions_ * row_bytes_ > max_bytes_ / layers_.size())) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "opening too large: ", layers_.size(), " layers of positions ",
        positions_, " x hidden_size ", hidden_size_,
        " x 4 bytes exceed the limit of ", max_bytes_,
        " bytes (GrpcOpeningSourceOptions.max_opening_bytes)"));
  }
  opening_.header = std::move(header);
  return absl::OkStatus();
}

absl::Status OpeningAssembler::TakeRows(int64_t index,
                                        const v1::ActivationRows& rows) {
  if (current_ >= layers_.size()) {
    return Malformed(absl::StrCat("chunk ", index, ": rows of h^", rows.layer(),
                                  " after every requested layer was "
                                  "complete, want the end of the stream"));
  }
  const uint32_t layer = layers_[current_];
  if (rows.layer() != layer) {
    return Malformed(absl::StrCat("chunk ", index,
                                  ": ActivationRows.layer: got ", rows.layer(),
                                  ", want ", layer,
                                  " (layers in requested order, each complete "
                                  "before the next)"));
  }
  if (rows.position0() != rows_) {
    return Malformed(absl::StrCat(
        "chunk ", index, ": ActivationRows.position0: got ", rows.position0(),
        ", want ", rows_, " (rows contiguous in position order)"));
  }
  const std::string& data = rows.data();
  if (data.empty() || data.size() % row_bytes_ != 0) {
    return Malformed(absl::StrCat("chunk ", index,
                                  ": ActivationRows.data: got ", data.size(),
                                  " bytes, want a non-empty multiple of ",
                                  row_bytes_, " (hidden_size x 4)"));
  }
  const uint64_t n = data.size() / row_bytes_;
  const uint64_t positions = positions_;
  if (n > positions - rows_) {
    return Malformed(absl::StrCat(
        "chunk ", index, ": rows ", rows_, "..", rows_ + n - 1, " of h^", layer,
        ", want rows < ", positions, " (OpeningHeader.positions)"));
  }
  std::vector<float>& out = opening_.layers[layer];
  if (out.empty()) out.reserve(positions * hidden_size_);
  const size_t at = out.size();
  out.resize(at + data.size() / sizeof(float));
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(out.data() + at, data.data(), data.size());
  } else {
    for (size_t i = 0; i < data.size() / 4; ++i) {
      const auto* b = reinterpret_cast<const uint8_t*>(data.data()) + 4 * i;
      const uint32_t bits = uint32_t{b[0]} | uint32_t{b[1]} << 8 |
                            uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
      out[at + i] = std::bit_cast<float>(bits);
    }
  }
  rows_ += n;
  if (rows_ == positions) {
    ++current_;
    rows_ = 0;
  }
  return absl::OkStatus();
}

}  // namespace layerproof::check
