#include "bench/openblas_llama.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "kernels/dtype.h"
#include "kernels/ref/rope_table.h"

namespace layerproof::bench {
namespace {

using kernels::InvalidArgument;
using kernels::OkStatus;
using kernels::Status;
using kernels::StatusOr;
using kernels::model::TensorView;

// Floats for n values: huge-page backed when large, 64-byte aligned always.
std::unique_ptr<float[], FreeDeleter> NewFloats(int64_t n) {
  const size_t bytes = static_cast<size_t>(n) * 4;
  void* p = bytes >= (2u << 20)
                ? AllocHugeAligned(bytes)
                : std::aligned_alloc(
                      64, std::max<size_t>(64, (bytes + 63) / 64 * 64));
  if (p == nullptr) std::abort();
  return std::unique_ptr<float[], FreeDeleter>(static_cast<float*>(p));
}

int64_t Elements(const TensorView& t) {
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  return n;
}

// The tensor widened exactly to fp32.
std::unique_ptr<float[], FreeDeleter> Upcast(const TensorView& t) {
  const int64_t n = Elements(t);
  auto out = NewFloats(n);
  float* y = out.get();
  if (t.dtype == kernels::DType::kBF16) {
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, t.data + 2 * i, 2);
      y[i] = kernels::Bf16ToFloat(h);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      y[i] = kernels::LoadAsFloat(t.data, t.dtype, i);
    }
  }
  return out;
}

}  // namespace

StatusOr<std::unique_ptr<OpenblasLlama>> OpenblasLlama::Create(
    const kernels::model::Model& model, int slots, int64_t max_context) {
  const kernels::model::ModelConfig& c = model.config();
  if (c.qkv_bias) {
    return InvalidArgument("OpenblasLlama: QKV bias is not supported");
  }
  if (slots < 1 || max_context < 1) {
    return InvalidArgument("OpenblasLlama: want slots >= 1, max_context >= 1");
  }
  std::unique_ptr<OpenblasLlama> m(new OpenblasLlama());
  m->config_ = c;
  m->max_context_ = max_context;
  m->embed_ = Upcast(model.embed_tokens());
  m->final_norm_ = Upcast(model.final_norm());
  m->lm_head_ = Upcast(model.lm_head());
  m->layers_.resize(c.num_layers);
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const kernels::model::BlockWeights& w = model.block(l);
    Layer& p = m->layers_[l];
    p.input_norm = Upcast(w.input_norm);
    p.post_norm = Upcast(w.post_norm);
    p.q = Upcast(w.q_proj);
    p.k = Upcast(w.k_proj);
    p.v = Upcast(w.v_proj);
    p.o = Upcast(w.o_proj);
    p.gate = Upcast(w.gate_proj);
    p.up = Upcast(w.up_proj);
    p.down = Upcast(w.down_proj);
  }
  // RoPE angles p * inv_freq[i] in double, rounded once to fp32.
  LP_ASSIGN_OR_RETURN(std::vector<float> inv_freq,
                      kernels::RopeInverseFrequencies(c.head_dim, c.rope_theta,
                                                      c.rope_scaling));
  const int64_t half = c.head_dim / 2;
  m->cos_.resize(max_context * half);
  m->sin_.resize(max_context * half);
  for (int64_t pos = 0; pos < max_context; ++pos) {
    for (int64_t i = 0; i < half; ++i) {
      const double angle = double(pos) * double(inv_freq[i]);
      m->cos_[pos * half + i] = static_cast<float>(std::cos(angle));
      m->sin_[pos * half + i] = static_cast<float>(std::sin(angle));
    }
  }
  const int64_t kv_dim = c.num_kv_heads * c.head_dim;
  m->k_cache_.resize(slots);
  m->v_cache_.resize(slots);
  for (int s = 0; s < slots; ++s) {
    for (int64_t l = 0; l < c.num_layers; ++l) {
      m->k_cache_[s].push_back(NewFloats(max_context * kv_dim));
      m->v_cache_[s].push_back(NewFloats(max_context * kv_dim));
    }
  }
  m->lengths_.assign(slots, 0);
  return m;
}

int64_t OpenblasLlama::WeightBytesPerToken() const {
  const kernels::model::ModelConfig& c = config_;
  const int64_t h = c.hidden_size, f = c.intermediate_size;
  const int64_t qd = c.num_heads * c.head_dim;
  const int64_t kvd = c.num_kv_heads * c.head_dim;
  const int64_t per_layer = 2 * h + qd * h + 2 * kvd * h + h * qd + 3 * f * h;
  return 4 * (c.num_layers * per_layer + h + c.vocab_size * h);
}

void OpenblasLlama::Reset(int slot) { lengths_[slot] = 0; }

void OpenblasLlama::Project(const float* x, int64_t m, const float* w,
                            int64_t n, int64_t k, float* y) {
  if (m == 1) {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(n),
                static_cast<int>(k), 1.0f, w, static_cast<int>(k), x, 1, 0.0f,
                y, 1);
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), 1.0f, x,
              static_cast<int>(k), w, static_cast<int>(k), 0.0f, y,
              static_cast<int>(n));
}

void OpenblasLlama::RmsNorm(const float* x, int64_t rows, const float* gamma,
                            float* y) const {
  const int64_t h = config_.hidden_size;
  const float eps = static_cast<float>(config_.rms_norm_eps);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * h;
    float ss = 0.0f;
    for (int64_t i = 0; i < h; ++i) ss += xr[i] * xr[i];
    const float inv_rms = 1.0f / std::sqrt(ss / static_cast<float>(h) + eps);
    for (int64_t i = 0; i < h; ++i) y[r * h + i] = xr[i] * inv_rms * gamma[i];
  }
}

void OpenblasLlama::Rope(float* x, int64_t rows, int64_t heads,
                         const int64_t* positions) const {
  const int64_t d = config_.head_dim, half = d / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const float* cs = cos_.data() + positions[r] * half;
    const float* sn = sin_.data() + positions[r] * half;
    for (int64_t hh = 0; hh < heads; ++hh) {
      float* v = x + (r * heads + hh) * d;
      for (int64_t i = 0; i < half; ++i) {
        const float a = v[i], b = v[i + half];
        v[i] = a * cs[i] - b * sn[i];
        v[i + half] = b * cs[i] + a * sn[i];
      }
    }
  }
}

void OpenblasLlama::Attention(int slot, int64_t layer, int64_t row0,
                              int64_t rows, int64_t pos0) {
  const kernels::model::ModelConfig& c = config_;
  const int64_t d = c.head_dim;
  const int64_t q_dim = c.num_heads * d, kv_dim = c.num_kv_heads * d;
  const int64_t group = c.num_heads / c.num_kv_heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const float* k = k_cache_[slot][layer].get();
  const float* v = v_cache_[slot][layer].get();
  // Query rows in chunks, each against only the keys its last row sees, so
  // a long prefill computes little of the masked triangle.
  constexpr int64_t kChunk = 128;
  for (int64_t i0 = 0; i0 < rows; i0 += kChunk) {
    const int64_t n = std::min(kChunk, rows - i0);
    const int64_t n_kv = pos0 + i0 + n;
    if (static_cast<int64_t>(scores_.size()) < n * n_kv) {
      scores_.resize(n * n_kv);
    }
    float* s = scores_.data();
    for (int64_t h = 0; h < c.num_heads; ++h) {
      const int64_t kvh = h / group;
      const float* q = q_.data() + (row0 + i0) * q_dim + h * d;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n),
                  static_cast<int>(n_kv), static_cast<int>(d), scale, q,
                  static_cast<int>(q_dim), k + kvh * d,
                  static_cast<int>(kv_dim), 0.0f, s, static_cast<int>(n_kv));
      for (int64_t i = 0; i < n; ++i) {
        float* row = s + i * n_kv;
        const int64_t len = pos0 + i0 + i + 1;  // keys this row sees
        float mx = row[0];
        for (int64_t t = 1; t < len; ++t) mx = std::max(mx, row[t]);
        float sum = 0.0f;
        for (int64_t t = 0; t < len; ++t) {
          row[t] = std::exp(row[t] - mx);
          sum += row[t];
        }
        const float inv = 1.0f / sum;
        for (int64_t t = 0; t < len; ++t) row[t] *= inv;
        for (int64_t t = len; t < n_kv; ++t) row[t] = 0.0f;
      }
      cblas_sgemm(
          CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n),
          static_cast<int>(d), static_cast<int>(n_kv), 1.0f, s,
          static_cast<int>(n_kv), v + kvh * d, static_cast<int>(kv_dim), 0.0f,
          attn_.data() + (row0 + i0) * q_dim + h * d, static_cast<int>(q_dim));
    }
  }
}

void OpenblasLlama::EnsureRows(int64_t rows) {
  if (rows <= capacity_) return;
  const kernels::model::ModelConfig& c = config_;
  const int64_t h = c.hidden_size, f = c.intermediate_size;
  const int64_t q_dim = c.num_heads * c.head_dim;
  const int64_t kv_dim = c.num_kv_heads * c.head_dim;
  x_.resize(rows * h);
  xn_.resize(rows * h);
  q_.resize(rows * q_dim);
  k_.resize(rows * kv_dim);
  v_.resize(rows * kv_dim);
  attn_.resize(rows * q_dim);
  gate_.resize(rows * f);
  up_.resize(rows * f);
  capacity_ = rows;
}

Status OpenblasLlama::Step(const std::vector<SlotRows>& batch, float* logits) {
  const kernels::model::ModelConfig& c = config_;
  const int64_t h = c.hidden_size, f = c.intermediate_size;
  const int64_t q_dim = c.num_heads * c.head_dim;
  const int64_t kv_dim = c.num_kv_heads * c.head_dim;
  int64_t rows = 0;
  for (const SlotRows& s : batch) {
    if (s.slot < 0 || s.slot >= static_cast<int>(lengths_.size()) || s.n < 1 ||
        lengths_[s.slot] + s.n > max_context_) {
      return InvalidArgument("OpenblasLlama::Step: slot " +
                             std::to_string(s.slot) + " cannot take " +
                             std::to_string(s.n) + " rows");
    }
    rows += s.n;
  }
  EnsureRows(std::max<int64_t>(rows, static_cast<int64_t>(batch.size())));
  std::vector<int64_t> positions(rows);
  int64_t r = 0;
  for (const SlotRows& s : batch) {
    for (int64_t i = 0; i < s.n; ++i, ++r) {
      const int32_t t = s.tokens[i];
      if (t < 0 || t >= c.vocab_size) {
        return InvalidArgument("OpenblasLlama::Step: token out of range");
      }
      std::memcpy(x_.data() + r * h, embed_.get() + int64_t{t} * h, 4 * h);
      positions[r] = lengths_[s.slot] + i;
    }
  }
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const Layer& p = layers_[l];
    RmsNorm(x_.data(), rows, p.input_norm.get(), xn_.data());
    Project(xn_.data(), rows, p.q.get(), q_dim, h, q_.data());
    Project(xn_.data(), rows, p.k.get(), kv_dim, h, k_.data());
    Project(xn_.data(), rows, p.v.get(), kv_dim, h, v_.data());
    Rope(q_.data(), rows, c.num_heads, positions.data());
    Rope(k_.data(), rows, c.num_kv_heads, positions.data());
    r = 0;
    for (const SlotRows& s : batch) {
      const int64_t pos0 = lengths_[s.slot];
      std::memcpy(k_cache_[s.slot][l].get() + pos0 * kv_dim,
                  k_.data() + r * kv_dim, 4 * s.n * kv_dim);
      std::memcpy(v_cache_[s.slot][l].get() + pos0 * kv_dim,
                  v_.data() + r * kv_dim, 4 * s.n * kv_dim);
      Attention(s.slot, l, r, s.n, pos0);
      r += s.n;
    }
    Project(attn_.data(), rows, p.o.get(), h, q_dim, xn_.data());
    for (int64_t i = 0; i < rows * h; ++i) x_[i] += xn_[i];
    RmsNorm(x_.data(), rows, p.post_norm.get(), xn_.data());
    Project(xn_.data(), rows, p.gate.get(), f, h, gate_.data());
    Project(xn_.data(), rows, p.up.get(), f, h, up_.data());
    for (int64_t i = 0; i < rows * f; ++i) {
      const float g = gate_[i];
      gate_[i] = g / (1.0f + std::exp(-g)) * up_[i];
    }
    Project(gate_.data(), rows, p.down.get(), h, f, xn_.data());
    for (int64_t i = 0; i < rows * h; ++i) x_[i] += xn_[i];
  }
  // The head, on each entry's last row.
  r = 0;
  for (size_t j = 0; j < batch.size(); ++j) {
    r += batch[j].n;
    RmsNorm(x_.data() + (r - 1) * h, 1, final_norm_.get(), xn_.data() + j * h);
    lengths_[batch[j].slot] += batch[j].n;
  }
  Project(xn_.data(), static_cast<int64_t>(batch.size()), lm_head_.get(),
          c.vocab_size, h, logits);
  return OkStatus();
}

}  // namespace layerproof::bench
