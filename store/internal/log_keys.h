// The RocksDB log's key and value encodings (docs/store.md):
//   leaves:  u64 index, big-endian           -> leaf bytes
//   by_hash: 32-byte leaf hash               -> u64 index, big-endian
//   nodes:   u8 level || u64 index, big-endian -> 32-byte hash
//   meta:    "size" -> u64 big-endian; "checkpoint" -> the signed note
// Big-endian keys sort in index order. Decoders take stored bytes, which may
// be corrupt: a wrong length is DataLoss naming what was read, never an
// assert. Thread safety: pure functions.
#ifndef LAYERPROOF_STORE_INTERNAL_LOG_KEYS_H_
#define LAYERPROOF_STORE_INTERNAL_LOG_KEYS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "store/crypto.h"

namespace layerproof::store::internal {

inline constexpr char kLeavesFamily[] = "leaves";
inline constexpr char kByHashFamily[] = "by_hash";
inline constexpr char kNodesFamily[] = "nodes";
inline constexpr char kMetaFamily[] = "meta";
inline constexpr char kSizeKey[] = "size";
inline constexpr char kCheckpointKey[] = "checkpoint";

// 8 bytes, big-endian.
std::string EncodeU64(uint64_t v);
// DataLoss unless `bytes` is 8 bytes; `what` names the value in the error.
absl::StatusOr<uint64_t> DecodeU64(std::string_view bytes,
                                   std::string_view what);

// u8 level || u64 index, big-endian. Precondition: 0 <= level < 64.
std::string NodeKey(int level, uint64_t index);

inline std::string HashBytes(const Sha256Hash& h) {
  return std::string(reinterpret_cast<const char*>(h.data()), h.size());
}
// DataLoss unless `bytes` is 32 bytes.
absl::StatusOr<Sha256Hash> DecodeHash(std::string_view bytes,
                                      std::string_view what);

}  // namespace layerproof::store::internal

#endif  // LAYERPROOF_STORE_INTERNAL_LOG_KEYS_H_
