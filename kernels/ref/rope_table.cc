#include "kernels/ref/rope_table.h"

#include <string>

#include "kernels/fp_env.h"
#include "kernels/ref/det_math.h"

namespace layerproof::kernels {
namespace {

// pi in double, correctly rounded.
constexpr double kPi = 3.141592653589793;

// Llama-3 scaling of one inverse frequency (transformers,
// modeling_rope_utils._compute_llama3_parameters), in double.
double ScaleLlama3(double inv_freq, const RopeScaling& s) {
  const double old_len = static_cast<double>(s.original_max_positions);
  const double low_freq_wavelen = old_len / s.low_freq_factor;
  const double high_freq_wavelen = old_len / s.high_freq_factor;
  const double wavelen = 2.0 * kPi / inv_freq;
  if (wavelen > low_freq_wavelen) return inv_freq / s.factor;
  if (wavelen < high_freq_wavelen) return inv_freq;
  const double smooth = (old_len / wavelen - s.low_freq_factor) /
                        (s.high_freq_factor - s.low_freq_factor);
  return (1.0 - smooth) * inv_freq / s.factor + smooth * inv_freq;
}

}  // namespace

StatusOr<std::vector<float>> RopeInverseFrequencies(
    int64_t head_dim, double theta, const RopeScaling& scaling) {
  FpEnvGuard guard;
  if (head_dim < 2 || head_dim % 2 != 0 || head_dim > 65536) {
    return InvalidArgument("rope head_dim: got " + std::to_string(head_dim) +
                           ", want even, 2..65536");
  }
  if (!(theta > 1.0) || !(theta < 1e12)) {
    return InvalidArgument("rope theta: got " + std::to_string(theta) +
                           ", want 1 < theta < 1e12");
  }
  if (scaling.type == RopeScaling::Type::kLlama3 &&
      (!(scaling.factor >= 1.0) || !(scaling.low_freq_factor > 0.0) ||
       !(scaling.high_freq_factor > scaling.low_freq_factor) ||
       scaling.original_max_positions < 1)) {
    return InvalidArgument(
        "rope_scaling (llama3): want factor >= 1, 0 < low_freq_factor < "
        "high_freq_factor, original_max_position_embeddings >= 1");
  }
  const int64_t half = head_dim / 2;
  std::vector<float> inv(half);
  for (int64_t i = 0; i < half; ++i) {
    const double exponent =
        static_cast<double>(2 * i) / static_cast<double>(head_dim);
    double f = 1.0 / detmath::Pow(theta, exponent);
    // Round to fp32 first, as the reference implementation holds it.
    f = static_cast<float>(f);
    if (scaling.type == RopeScaling::Type::kLlama3) f = ScaleLlama3(f, scaling);
    inv[i] = static_cast<float>(f);
  }
  return inv;
}

StatusOr<RopeTable> BuildRopeTable(int64_t head_dim, double theta,
                                   int64_t max_positions,
                                   const RopeScaling& scaling) {
  FpEnvGuard guard;
  if (max_positions < 1 || max_positions > (int64_t{1} << 20)) {
    return InvalidArgument("rope max_positions: got " +
                           std::to_string(max_positions) + ", want 1..1048576");
  }
  LP_ASSIGN_OR_RETURN(std::vector<float> inv,
                      RopeInverseFrequencies(head_dim, theta, scaling));
  const int64_t half = head_dim / 2;
  RopeTable t;
  t.head_dim = head_dim;
  t.max_positions = max_positions;
  t.cos.resize(max_positions * half);
  t.sin.resize(max_positions * half);
  for (int64_t p = 0; p < max_positions; ++p) {
    for (int64_t i = 0; i < half; ++i) {
      // Exact: p < 2^20 and inv has 24 significant bits.
      const double angle = static_cast<double>(p) * static_cast<double>(inv[i]);
      t.cos[p * half + i] = static_cast<float>(detmath::Cos(angle));
      t.sin[p * half + i] = static_cast<float>(detmath::Sin(angle));
    }
  }
  return t;
}

}  // namespace layerproof::kernels
