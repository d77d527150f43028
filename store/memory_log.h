// MemoryLog: the Log contract (store/log.h) held in memory, for tests and
// as the conformance suite's second implementation. "Durable" means "in
// this process's memory": nothing survives the object.
//
// Thread safety: as Log, every method is thread-safe.
#ifndef LAYERPROOF_STORE_MEMORY_LOG_H_
#define LAYERPROOF_STORE_MEMORY_LOG_H_

#include <memory>

#include "absl/status/statusor.h"
#include "store/log.h"

namespace layerproof::store {

class MemoryLog {
 public:
  // An empty log; signs its empty checkpoint. InvalidArgument for bad
  // options (empty origin, no signer).
  static absl::StatusOr<std::unique_ptr<Log>> Create(LogOptions options);
};

}  // namespace layerproof::store

#endif  // LAYERPROOF_STORE_MEMORY_LOG_H_
