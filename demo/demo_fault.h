// DEMO-ONLY FAULT. NEVER IN A SERVING PROVER.
//
// The tampering prover of `layerproof demo` (prover-2): it commits to, and
// opens, a version of h^layer with one bit flipped in every row, while its
// engine runs honestly, so its served tokens and its receipts are exactly
// an honest prover's and only an audit can catch it (docs/protocol.md
// "Cheating"). It goes through prover/internal/prover_faults.h, which only
// code that builds a ProverNode in process can reach: `layerproof serve
// prover` never sets ProverOptions::faults, and no flag, file or request of
// it can turn this on. Only demo/demo_cluster.cc constructs it, and only
// the `layerproof` binary links demo/ (layerproof::demo).
//
// Detection: the commitment's H_layer is the hash of the tampered rows, and
// an opening of h^layer returns those same rows, so the cheat is
// consistent. An audit that re-executes block `layer` (from the honest
// h^(layer-1)) gets the honest h^layer and a hash differing from H_layer;
// one that re-executes block layer+1 gets it from the tampered h^layer and
// differs from the honestly computed H_(layer+1). Any other drawn block
// passes. Thread safety: see ProverFaults.
#ifndef LAYERPROOF_DEMO_DEMO_FAULT_H_
#define LAYERPROOF_DEMO_DEMO_FAULT_H_

#include <cstdint>
#include <memory>

#include "prover/internal/prover_faults.h"

namespace layerproof::demo {

// DEMO-ONLY: flips bit 22 (the top mantissa bit) of the first value of
// every row of h^layer, in serving and in every replay alike. `layer` in
// 1..L-1 for the detection above to hold.
std::shared_ptr<prover::ProverFaults> NewDemoLayerTamper(uint32_t layer);

}  // namespace layerproof::demo

#endif  // LAYERPROOF_DEMO_DEMO_FAULT_H_
