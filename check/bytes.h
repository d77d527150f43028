// Conversions every part of the verifier uses, kept in one place: digests
// as the bytes records store, and bytes as hex for messages and logs.
// Thread safety: pure functions.
#ifndef LAYERPROOF_CHECK_BYTES_H_
#define LAYERPROOF_CHECK_BYTES_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "store/crypto.h"

namespace layerproof::check {

// A digest (store::Sha256Hash, kernels::Sha256Digest) as the bytes a
// record stores.
inline std::string DigestBytes(const std::array<uint8_t, 32>& d) {
  return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

// `bytes` (a request id, a seed) as lowercase hex.
inline std::string Hex(std::string_view bytes) {
  return store::HexEncode(store::AsBytes(bytes));
}

}  // namespace layerproof::check

#endif  // LAYERPROOF_CHECK_BYTES_H_
