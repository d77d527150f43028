// Per-layer output commitments H_l (DESIGN §5): a SHA-256 over a domain
// header and the fp32 little-endian rows of h^l in position order, fed
// incrementally as positions are produced, so prefill, chunked prefill and
// decode give the same hash.
//
//   H_l = SHA-256( "layerproof.layer.v1\0"           (20 bytes)
//                  || u32 spec_version || u32 layer || u32 width
//                  || u32 len(salt) || salt
//                  || rows[0] || rows[1] || ...      (width fp32 each)
//                  || u64 positions )                 (little-endian)
//
// The position count closes the hash instead of opening it because a
// decoding sequence does not know its length until it stops; it still binds
// the count (docs/model.md). The salt is the per-request secret of DESIGN §5
// (empty for unsalted debugging hashes such as `layerproof forward`).
// Thread safety: one LayerHasher per (sequence, layer); not shared.
#ifndef LAYERPROOF_KERNELS_MODEL_LAYER_HASH_H_
#define LAYERPROOF_KERNELS_MODEL_LAYER_HASH_H_

#include <cstdint>
#include <span>

#include "kernels/sha256.h"

namespace layerproof::kernels::model {

class LayerHasher {
 public:
  LayerHasher(int64_t layer, int64_t width, std::span<const uint8_t> salt = {});

  // Appends n rows of `width` floats (host memory), the next positions.
  void AddRows(const float* rows, int64_t n);
  int64_t positions() const { return positions_; }
  // Closes the hash; the hasher must not be used afterwards.
  Sha256Digest Finish();

 private:
  Sha256 sha_;
  int64_t width_;
  int64_t positions_ = 0;
};

// H_l of a whole [positions][width] block at once.
Sha256Digest HashLayerRows(int64_t layer, const float* rows, int64_t positions,
                           int64_t width, std::span<const uint8_t> salt = {});

}  // namespace layerproof::kernels::model

#endif  // LAYERPROOF_KERNELS_MODEL_LAYER_HASH_H_
