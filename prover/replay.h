// Deterministic replay for openings (DESIGN §1 step 4, §6 "Opening"): the
// prover regenerates h^k of a journaled request by running the engine's
// const Engine::Forward over prompt ++ output[0 .. n-2] (the committed
// positions) with a tap that captures the requested layers.
//
// Faults (tests only): a replay gets a fresh RowsTamper, applied to every
// layer exactly as while serving (before capture), so a consistent
// cheater's openings match its commitments.
//
// Thread safety: ReplayLayers may run on any number of threads at once and
// concurrently with the engine thread's Step (Forward is const).
#ifndef LAYERPROOF_PROVER_REPLAY_H_
#define LAYERPROOF_PROVER_REPLAY_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/model/engine.h"
#include "layerproof/v1/prover_journal.pb.h"
#include "prover/internal/prover_faults.h"

namespace layerproof::prover {

struct ReplayedLayers {
  int64_t positions = 0;  // prompt + output - 1
  int64_t width = 0;      // hidden size
  std::vector<uint32_t> layers;
  // rows[i]: h^layers[i], [positions][width].
  std::vector<std::vector<float>> rows;
};

// The committed positions of `entry`: InvalidArgument if it has no prompt
// or no output.
absl::StatusOr<std::vector<int32_t>> ReplayTokens(
    const v1::JournalEntry& entry);

// Replays `entry` and captures `layers` (validated: ascending, <= L).
// `tamper` may be null.
absl::StatusOr<ReplayedLayers> ReplayLayers(
    const kernels::model::Engine& engine, const v1::JournalEntry& entry,
    const std::vector<uint32_t>& layers, std::unique_ptr<RowsTamper> tamper);

}  // namespace layerproof::prover

#endif  // LAYERPROOF_PROVER_REPLAY_H_
