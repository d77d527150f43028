#include "store/memory_log.h"

#include <utility>

#include "kernels/status.h"
#include "store/internal/memory_log_storage.h"
#include "store/internal/sequenced_log.h"

namespace layerproof::store {

absl::StatusOr<std::unique_ptr<Log>> MemoryLog::Create(LogOptions options) {
  LP_ASSIGN_OR_RETURN(
      std::unique_ptr<internal::SequencedLog> log,
      internal::SequencedLog::Create(
          std::make_unique<internal::MemoryLogStorage>(), std::move(options)));
  return std::unique_ptr<Log>(std::move(log));
}

}  // namespace layerproof::store
