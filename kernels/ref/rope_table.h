// RoPE cos/sin tables from the project's deterministic math
// (docs/determinism.md §3.4), including Llama-3 frequency scaling.
//
// inv_freq[i] = 1 / theta^(2i/d) is computed in double and rounded to fp32,
// as the Hugging Face reference keeps it in fp32; Llama-3 scaling follows
// transformers' _compute_llama3_parameters. The angle p * inv_freq[i] is
// exact in double, and its sin and cos (detmath, double) are rounded once to
// fp32. Thread safety: pure function.
#ifndef LAYERPROOF_KERNELS_REF_ROPE_TABLE_H_
#define LAYERPROOF_KERNELS_REF_ROPE_TABLE_H_

#include <cstdint>

#include "kernels/backend.h"

namespace layerproof::kernels {

struct RopeScaling {
  enum class Type : uint8_t { kNone, kLlama3 };
  Type type = Type::kNone;
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_positions = 8192;
};

// head_dim even and >= 2, theta > 1, 1 <= max_positions <= 2^20.
StatusOr<RopeTable> BuildRopeTable(int64_t head_dim, double theta,
                                   int64_t max_positions,
                                   const RopeScaling& scaling = {});

// The per-pair inverse frequencies, rounded to fp32 (exposed for tests).
StatusOr<std::vector<float>> RopeInverseFrequencies(int64_t head_dim,
                                                    double theta,
                                                    const RopeScaling& scaling);

}  // namespace layerproof::kernels

#endif  // LAYERPROOF_KERNELS_REF_ROPE_TABLE_H_
