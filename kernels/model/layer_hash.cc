#include "kernels/model/layer_hash.h"

#include <bit>
#include <cstring>

#include "kernels/golden.h"

namespace layerproof::kernels::model {
namespace {

static_assert(
    std::endian::native == std::endian::little,
    "layer hashes feed fp32 rows as stored: little-endian hosts only");

constexpr char kLayerTag[] = "layerproof.layer.v1";  // + its NUL: 20 bytes

void PutU32(Sha256& sha, uint32_t v) {
  uint8_t b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
  sha.Update(b, 4);
}

void PutU64(Sha256& sha, uint64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
  sha.Update(b, 8);
}

}  // namespace

LayerHasher::LayerHasher(int64_t layer, int64_t width,
                         std::span<const uint8_t> salt)
    : width_(width) {
  sha_.Update(kLayerTag, sizeof(kLayerTag));
  PutU32(sha_, static_cast<uint32_t>(kSpecVersion));
  PutU32(sha_, static_cast<uint32_t>(layer));
  PutU32(sha_, static_cast<uint32_t>(width));
  PutU32(sha_, static_cast<uint32_t>(salt.size()));
  if (!salt.empty()) sha_.Update(salt.data(), salt.size());
}

void LayerHasher::AddRows(const float* rows, int64_t n) {
  sha_.Update(rows, static_cast<size_t>(n * width_) * sizeof(float));
  positions_ += n;
}

Sha256Digest LayerHasher::Finish() {
  PutU64(sha_, static_cast<uint64_t>(positions_));
  return sha_.Final();
}

Sha256Digest HashLayerRows(int64_t layer, const float* rows, int64_t positions,
                           int64_t width, std::span<const uint8_t> salt) {
  LayerHasher h(layer, width, salt);
  h.AddRows(rows, positions);
  return h.Finish();
}

}  // namespace layerproof::kernels::model
