#include "store/internal/log_keys.h"

#include <cstring>

#include "absl/status/status.h"
#include "store/internal/str_cat.h"

namespace layerproof::store::internal {

std::string EncodeU64(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  return out;
}

absl::StatusOr<uint64_t> DecodeU64(std::string_view bytes,
                                   std::string_view what) {
  if (bytes.size() != 8) {
    return absl::DataLossError(
        Cat(what, ": got ", bytes.size(), " bytes, want 8"));
  }
  uint64_t v = 0;
  for (char c : bytes) v = (v << 8) | static_cast<uint8_t>(c);
  return v;
}

std::string NodeKey(int level, uint64_t index) {
  std::string out(1, static_cast<char>(level));
  out += EncodeU64(index);
  return out;
}

absl::StatusOr<Sha256Hash> DecodeHash(std::string_view bytes,
                                      std::string_view what) {
  Sha256Hash h;
  if (bytes.size() != h.size()) {
    return absl::DataLossError(
        Cat(what, ": got ", bytes.size(), " bytes, want 32"));
  }
  std::memcpy(h.data(), bytes.data(), h.size());
  return h;
}

}  // namespace layerproof::store::internal
