// The float64 reference forward: a self-contained safetensors reader and the
// transformers Llama math in double, sums taken in index order; and, for
// quantized models, the weights of a loaded kernels::model::Model
// (RefModelFromModel) with optional int8 activations.
#include "tests/model/reference_forward.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numbers>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "kernels/dtype.h"
#include "kernels/model/model.h"
#include "kernels/quant.h"

namespace layerproof::testing {
namespace {

using Json = nlohmann::json;

struct RefTensor {
  std::vector<int64_t> shape;
  std::vector<double> values;
};
using TensorMap = std::map<std::string, RefTensor>;

bool ReadFile(const std::string& path, std::string* out, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open";
    return false;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  *out = std::move(buf).str();
  return true;
}

double Bf16ToDouble(uint16_t bits) {
  uint32_t f32 = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &f32, sizeof f);
  return f;
}

// IEEE binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits.
double F16ToDouble(uint16_t bits) {
  const double sign = (bits & 0x8000) ? -1.0 : 1.0;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) return mantissa ? std::nan("") : sign * INFINITY;
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

double F32ToDouble(const char* p) {
  float f;
  std::memcpy(&f, p, sizeof f);
  return f;
}

uint16_t LoadU16(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint16_t>(u[0] | (u[1] << 8));
}

// Reads every tensor of one safetensors file into `tensors`.
bool ReadSafetensors(const std::string& path, TensorMap* tensors,
                     std::string* error) {
  std::string file;
  if (!ReadFile(path, &file, error)) return false;
  if (file.size() < 8) {
    *error = path + ": shorter than the 8-byte header length";
    return false;
  }
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) {
    header_len = (header_len << 8) | static_cast<unsigned char>(file[i]);
  }
  if (header_len > file.size() - 8) {
    *error = path + ": header length " + std::to_string(header_len) +
             " runs past the end of the file";
    return false;
  }
  const Json header =
      Json::parse(file.begin() + 8, file.begin() + 8 + header_len, nullptr,
                  /*allow_exceptions=*/false);
  if (!header.is_object()) {
    *error = path + ": header is not a JSON object";
    return false;
  }
  const uint64_t data_begin = 8 + header_len;
  const uint64_t data_size = file.size() - data_begin;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") continue;
    const std::string where = path + ": tensor " + name;
    if (!info.is_object() || !info.contains("dtype") ||
        !info.contains("shape") || !info.contains("data_offsets") ||
        !info["dtype"].is_string() || !info["shape"].is_array() ||
        !info["data_offsets"].is_array() || info["data_offsets"].size() != 2) {
      *error = where + ": needs dtype, shape and data_offsets";
      return false;
    }
    const std::string dtype = info["dtype"];
    uint64_t elem_size = 0;
    if (dtype == "BF16" || dtype == "F16") {
      elem_size = 2;
    } else if (dtype == "F32") {
      elem_size = 4;
    } else {
      *error = where + ": unsupported dtype " + dtype;
      return false;
    }
    RefTensor t;
    uint64_t numel = 1;
    for (const Json& d : info["shape"]) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > (1ull << 40)) {
        *error = where + ": bad shape entry " + d.dump();
        return false;
      }
      t.shape.push_back(d.get<int64_t>());
      numel *= d.get<uint64_t>();
      if (numel > (1ull << 40)) {
        *error = where + ": too many elements";
        return false;
      }
    }
    const Json& offsets = info["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned()) {
      *error = where + ": data_offsets must be non-negative integers";
      return false;
    }
    const uint64_t begin = offsets[0], end = offsets[1];
    if (begin > end || end > data_size) {
      *error = where + ": data_offsets [" + std::to_string(begin) + ", " +
               std::to_string(end) + "] outside the " +
               std::to_string(data_size) + "-byte data section";
      return false;
    }
    if (end - begin != numel * elem_size) {
      *error = where + ": " + std::to_string(end - begin) + " bytes for " +
               std::to_string(numel) + " " + dtype + " elements";
      return false;
    }
    const char* p = file.data() + data_begin + begin;
    t.values.resize(numel);
    for (uint64_t i = 0; i < numel; ++i, p += elem_size) {
      if (dtype == "BF16") {
        t.values[i] = Bf16ToDouble(LoadU16(p));
      } else if (dtype == "F16") {
        t.values[i] = F16ToDouble(LoadU16(p));
      } else {
        t.values[i] = F32ToDouble(p);
      }
    }
    if (!tensors->emplace(name, std::move(t)).second) {
      *error = where + ": appears in more than one file";
      return false;
    }
  }
  return true;
}

// Reads model.safetensors, or every shard model.safetensors.index.json names.
bool ReadAllTensors(const std::string& dir, TensorMap* tensors,
                    std::string* error) {
  const std::string single = dir + "/model.safetensors";
  if (std::ifstream(single).good()) {
    return ReadSafetensors(single, tensors, error);
  }
  const std::string index_path = dir + "/model.safetensors.index.json";
  std::string text;
  if (!ReadFile(index_path, &text, error)) {
    *error = dir + ": neither model.safetensors nor " +
             "model.safetensors.index.json can be opened";
    return false;
  }
  const Json index = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!index.is_object() || !index.contains("weight_map") ||
      !index["weight_map"].is_object()) {
    *error = index_path + ": needs an object weight_map";
    return false;
  }
  std::set<std::string> shards;
  for (const auto& [name, file] : index["weight_map"].items()) {
    if (!file.is_string()) {
      *error = index_path + ": weight_map." + name + " is not a file name";
      return false;
    }
    shards.insert(file.get<std::string>());
  }
  for (const std::string& shard : shards) {
    if (!ReadSafetensors(dir + "/" + shard, tensors, error)) return false;
  }
  return true;
}

bool ParseConfig(const std::string& path, RefConfig* c, std::string* error) {
  std::string text;
  if (!ReadFile(path, &text, error)) return false;
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    *error = path + ": not a JSON object";
    return false;
  }
  std::string field;  // the field being read, for the error message
  try {
    auto required_int = [&](const char* name) {
      field = name;
      return j.at(name).get<int64_t>();
    };
    auto optional = [&](const char* name) {
      field = name;
      return j.contains(name) && !j[name].is_null();
    };
    c->hidden_size = required_int("hidden_size");
    c->intermediate_size = required_int("intermediate_size");
    c->num_layers = required_int("num_hidden_layers");
    c->num_heads = required_int("num_attention_heads");
    c->vocab_size = required_int("vocab_size");
    c->num_kv_heads = optional("num_key_value_heads") ? j[field].get<int64_t>()
                                                      : c->num_heads;
    c->head_dim = optional("head_dim") ? j[field].get<int64_t>()
                  : c->num_heads > 0   ? c->hidden_size / c->num_heads
                                       : 0;
    if (optional("rms_norm_eps")) c->rms_norm_eps = j[field].get<double>();
    if (optional("rope_theta")) c->rope_theta = j[field].get<double>();
    if (optional("tie_word_embeddings")) {
      c->tie_word_embeddings = j[field].get<bool>();
    }
    if (optional("hidden_act") && j[field].get<std::string>() != "silu") {
      *error = path + ": hidden_act " + j[field].dump() + ", want \"silu\"";
      return false;
    }
    if (optional("rope_scaling")) {
      const Json& s = j[field];
      field = "rope_scaling.rope_type";
      const std::string type = s.contains("rope_type")
                                   ? s["rope_type"].get<std::string>()
                                   : s.value("type", std::string("default"));
      if (type == "llama3") {
        c->llama3_rope = true;
        field = "rope_scaling.factor";
        c->rope_factor = s.at("factor").get<double>();
        field = "rope_scaling.low_freq_factor";
        c->low_freq_factor = s.at("low_freq_factor").get<double>();
        field = "rope_scaling.high_freq_factor";
        c->high_freq_factor = s.at("high_freq_factor").get<double>();
        field = "rope_scaling.original_max_position_embeddings";
        c->original_max_positions =
            s.at("original_max_position_embeddings").get<double>();
      } else if (type != "default") {
        *error = path + ": rope_scaling type \"" + type + "\" not modelled";
        return false;
      }
    }
  } catch (const Json::exception& e) {
    *error = path + ": field " + field + ": " + e.what();
    return false;
  }
  if (c->hidden_size <= 0 || c->intermediate_size <= 0 || c->num_layers < 0 ||
      c->num_heads <= 0 || c->num_kv_heads <= 0 || c->vocab_size <= 0 ||
      c->head_dim <= 0 || c->head_dim % 2 != 0 ||
      c->num_heads % c->num_kv_heads != 0) {
    *error = path + ": inconsistent sizes (hidden " +
             std::to_string(c->hidden_size) + ", heads " +
             std::to_string(c->num_heads) + ", kv heads " +
             std::to_string(c->num_kv_heads) + ", head_dim " +
             std::to_string(c->head_dim) + ")";
    return false;
  }
  if (c->llama3_rope &&
      (c->rope_factor <= 0 || c->high_freq_factor <= c->low_freq_factor ||
       c->low_freq_factor <= 0)) {
    *error = path + ": rope_scaling factors out of range";
    return false;
  }
  return true;
}

// Moves tensor `name` out of `tensors` into *out after checking its shape.
// An absent tensor is an error unless `optional`, when *out is left empty.
bool Take(TensorMap& tensors, const std::string& name,
          const std::vector<int64_t>& shape, bool optional,
          std::vector<double>* out, std::string* error) {
  auto it = tensors.find(name);
  if (it == tensors.end()) {
    if (optional) return true;
    *error = "missing tensor " + name;
    return false;
  }
  if (it->second.shape != shape) {
    std::string got, want;
    for (int64_t d : it->second.shape) got += " " + std::to_string(d);
    for (int64_t d : shape) want += " " + std::to_string(d);
    *error =
        "tensor " + name + " has shape [" + got + " ], want [" + want + " ]";
    return false;
  }
  *out = std::move(it->second.values);
  tensors.erase(it);
  return true;
}

// y[t][o] = sum_i x[t][i] * w[o][i] (+ b[o]), for t < rows.
std::vector<double> Linear(const std::vector<double>& x, int64_t rows,
                           int64_t in, const std::vector<double>& w,
                           const std::vector<double>& b, int64_t out) {
  std::vector<double> y(rows * out);
  for (int64_t o = 0; o < out; ++o) {
    const double* wr = w.data() + o * in;
    for (int64_t t = 0; t < rows; ++t) {
      const double* xr = x.data() + t * in;
      double acc = 0.0;
      for (int64_t i = 0; i < in; ++i) acc += xr[i] * wr[i];
      y[t * out + o] = b.empty() ? acc : acc + b[o];
    }
  }
  return y;
}

// The rows of x[rows][in] as the engine's int8 activations represent them
// (docs/determinism.md §3.12 "Activations", in double): per unit of 32,
// d = max |x| / 127 and each x_i -> q_i * d with q_i = clamp(round_half_even(
// x_i / d), -127, 127). `in` is a multiple of 32 (a quantized matrix's row).
std::vector<double> QuantizeActivations(const std::vector<double>& x,
                                        int64_t rows, int64_t in) {
  constexpr int64_t kUnit = 32;
  if (in % kUnit != 0) {
    throw std::invalid_argument("activation row of " + std::to_string(in) +
                                " elements is not a whole number of units");
  }
  std::vector<double> y(rows * in);
  for (int64_t u = 0; u < rows * in; u += kUnit) {
    double a = 0.0;
    bool finite = true;
    for (int64_t i = 0; i < kUnit; ++i) {
      finite = finite && std::isfinite(x[u + i]);
      a = std::max(a, std::fabs(x[u + i]));
    }
    const double d = a / 127.0;
    for (int64_t i = 0; i < kUnit; ++i) {
      if (!finite) {
        y[u + i] = std::nan("");
      } else if (d == 0.0) {
        y[u + i] = 0.0;
      } else {
        // nearbyint in the default rounding mode: half to even.
        const double q =
            std::clamp(std::nearbyint(x[u + i] / d), -127.0, 127.0);
        y[u + i] = q * d;
      }
    }
  }
  return y;
}

// Linear, with the input quantized first when the matrix was quantized and
// the options ask for it.
std::vector<double> MaybeQuantLinear(const RefForwardOptions& options,
                                     bool quantized,
                                     const std::vector<double>& x, int64_t rows,
                                     int64_t in, const std::vector<double>& w,
                                     const std::vector<double>& b,
                                     int64_t out) {
  if (!options.quantize_activations || !quantized) {
    return Linear(x, rows, in, w, b, out);
  }
  return Linear(QuantizeActivations(x, rows, in), rows, in, w, b, out);
}

// x[t] / sqrt(mean(x[t]^2) + eps) * weight, per row.
std::vector<double> RmsNorm(const std::vector<double>& x, int64_t rows,
                            int64_t dim, const std::vector<double>& weight,
                            double eps) {
  std::vector<double> y(rows * dim);
  for (int64_t t = 0; t < rows; ++t) {
    const double* xr = x.data() + t * dim;
    double sum_sq = 0.0;
    for (int64_t i = 0; i < dim; ++i) sum_sq += xr[i] * xr[i];
    const double inv = 1.0 / std::sqrt(sum_sq / dim + eps);
    for (int64_t i = 0; i < dim; ++i) y[t * dim + i] = xr[i] * inv * weight[i];
  }
  return y;
}

// Runs the blocks; returns the last residual stream and, when `states` is
// not null, appends every one from the embeddings on.
std::vector<double> RunBlocks(const RefModel& m,
                              const std::vector<int32_t>& tokens,
                              const RefForwardOptions& options,
                              std::vector<std::vector<double>>* states) {
  const RefConfig& c = m.config;
  const int64_t T = static_cast<int64_t>(tokens.size());
  const int64_t H = c.hidden_size, D = c.head_dim, I = c.intermediate_size;
  const int64_t nq = c.num_heads, nkv = c.num_kv_heads;
  const int64_t group = nq / nkv;
  std::vector<double> h(T * H);
  for (int64_t t = 0; t < T; ++t) {
    if (tokens[t] < 0 || tokens[t] >= c.vocab_size) {
      throw std::invalid_argument("token " + std::to_string(tokens[t]) +
                                  " outside the vocabulary");
    }
    std::memcpy(&h[t * H], &m.embed[tokens[t] * H], H * sizeof(double));
  }
  if (states) states->push_back(h);
  const std::vector<double> inv_freq = RefRopeInvFreq(c);
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  for (const RefBlock& b : m.blocks) {
    const std::vector<double> x =
        RmsNorm(h, T, H, b.input_norm, c.rms_norm_eps);
    std::vector<double> q =
        MaybeQuantLinear(options, b.quantized.wq, x, T, H, b.wq, b.bq, nq * D);
    std::vector<double> k =
        MaybeQuantLinear(options, b.quantized.wk, x, T, H, b.wk, b.bk, nkv * D);
    const std::vector<double> v =
        MaybeQuantLinear(options, b.quantized.wv, x, T, H, b.wv, b.bv, nkv * D);
    // Qwen3: each head of q and k is RMS-normalised over head_dim first.
    if (!b.q_norm.empty()) q = RmsNorm(q, T * nq, D, b.q_norm, c.rms_norm_eps);
    if (!b.k_norm.empty()) k = RmsNorm(k, T * nkv, D, b.k_norm, c.rms_norm_eps);
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t j = 0; j < nq; ++j) {
        RefApplyRope(inv_freq, t, &q[(t * nq + j) * D], D);
      }
      for (int64_t j = 0; j < nkv; ++j) {
        RefApplyRope(inv_freq, t, &k[(t * nkv + j) * D], D);
      }
    }
    std::vector<double> attn(T * nq * D, 0.0);
    std::vector<double> p(T);
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t head = 0; head < nq; ++head) {
        const int64_t kvh = head / group;
        const double* qr = &q[(t * nq + head) * D];
        double max_score = -INFINITY;
        for (int64_t s = 0; s <= t; ++s) {
          const double* kr = &k[(s * nkv + kvh) * D];
          double dot = 0.0;
          for (int64_t d = 0; d < D; ++d) dot += qr[d] * kr[d];
          p[s] = dot * scale;
          max_score = std::max(max_score, p[s]);
        }
        double sum = 0.0;
        for (int64_t s = 0; s <= t; ++s) {
          p[s] = std::exp(p[s] - max_score);
          sum += p[s];
        }
        double* out = &attn[(t * nq + head) * D];
        for (int64_t s = 0; s <= t; ++s) {
          const double* vr = &v[(s * nkv + kvh) * D];
          const double w = p[s] / sum;
          for (int64_t d = 0; d < D; ++d) out[d] += w * vr[d];
        }
      }
    }
    const std::vector<double> o = MaybeQuantLinear(
        options, b.quantized.wo, attn, T, nq * D, b.wo, b.bo, H);
    for (int64_t i = 0; i < T * H; ++i) h[i] += o[i];
    const std::vector<double> x2 =
        RmsNorm(h, T, H, b.post_norm, c.rms_norm_eps);
    std::vector<double> gate = MaybeQuantLinear(options, b.quantized.w_gate, x2,
                                                T, H, b.w_gate, b.b_gate, I);
    const std::vector<double> up = MaybeQuantLinear(
        options, b.quantized.w_up, x2, T, H, b.w_up, b.b_up, I);
    for (int64_t i = 0; i < T * I; ++i) {
      gate[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
    }
    const std::vector<double> down = MaybeQuantLinear(
        options, b.quantized.w_down, gate, T, I, b.w_down, b.b_down, H);
    for (int64_t i = 0; i < T * H; ++i) h[i] += down[i];
    if (states) states->push_back(h);
  }
  return h;
}

}  // namespace

std::unique_ptr<RefModel> LoadRefModel(const std::string& dir,
                                       std::string* error) {
  auto m = std::make_unique<RefModel>();
  RefConfig& c = m->config;
  if (!ParseConfig(dir + "/config.json", &c, error)) return nullptr;
  TensorMap tensors;
  if (!ReadAllTensors(dir, &tensors, error)) return nullptr;
  const int64_t H = c.hidden_size, I = c.intermediate_size;
  const int64_t q_dim = c.num_heads * c.head_dim;
  const int64_t kv_dim = c.num_kv_heads * c.head_dim;
  bool ok =
      Take(tensors, "model.embed_tokens.weight", {c.vocab_size, H}, false,
           &m->embed, error) &&
      Take(tensors, "model.norm.weight", {H}, false, &m->final_norm, error);
  if (ok && !c.tie_word_embeddings) {
    ok = Take(tensors, "lm_head.weight", {c.vocab_size, H}, true, &m->lm_head,
              error);
  }
  m->blocks.resize(c.num_layers);
  for (int64_t l = 0; ok && l < c.num_layers; ++l) {
    RefBlock& b = m->blocks[l];
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const std::string a = p + "self_attn.", f = p + "mlp.";
    // Every linear's bias is optional: Qwen2 has q/k/v biases, Llama's
    // attention_bias and mlp_bias add the rest.
    ok = Take(tensors, p + "input_layernorm.weight", {H}, false, &b.input_norm,
              error) &&
         Take(tensors, p + "post_attention_layernorm.weight", {H}, false,
              &b.post_norm, error) &&
         Take(tensors, a + "q_proj.weight", {q_dim, H}, false, &b.wq, error) &&
         Take(tensors, a + "q_proj.bias", {q_dim}, true, &b.bq, error) &&
         Take(tensors, a + "k_proj.weight", {kv_dim, H}, false, &b.wk, error) &&
         Take(tensors, a + "k_proj.bias", {kv_dim}, true, &b.bk, error) &&
         Take(tensors, a + "v_proj.weight", {kv_dim, H}, false, &b.wv, error) &&
         Take(tensors, a + "v_proj.bias", {kv_dim}, true, &b.bv, error) &&
         Take(tensors, a + "o_proj.weight", {H, q_dim}, false, &b.wo, error) &&
         Take(tensors, a + "o_proj.bias", {H}, true, &b.bo, error) &&
         Take(tensors, a + "q_norm.weight", {c.head_dim}, true, &b.q_norm,
              error) &&
         Take(tensors, a + "k_norm.weight", {c.head_dim}, true, &b.k_norm,
              error) &&
         Take(tensors, f + "gate_proj.weight", {I, H}, false, &b.w_gate,
              error) &&
         Take(tensors, f + "gate_proj.bias", {I}, true, &b.b_gate, error) &&
         Take(tensors, f + "up_proj.weight", {I, H}, false, &b.w_up, error) &&
         Take(tensors, f + "up_proj.bias", {I}, true, &b.b_up, error) &&
         Take(tensors, f + "down_proj.weight", {H, I}, false, &b.w_down,
              error) &&
         Take(tensors, f + "down_proj.bias", {H}, true, &b.b_down, error);
  }
  if (!ok) {
    *error = dir + ": " + *error;
    return nullptr;
  }
  return m;
}

std::vector<double> RefRopeInvFreq(const RefConfig& c) {
  const int64_t half = c.head_dim / 2;
  std::vector<double> inv_freq(half);
  for (int64_t i = 0; i < half; ++i) {
    double f =
        1.0 / std::pow(c.rope_theta, static_cast<double>(2 * i) /
                                         static_cast<double>(c.head_dim));
    if (c.llama3_rope) {
      const double wavelen = 2.0 * std::numbers::pi / f;
      const double low_freq_wavelen =
          c.original_max_positions / c.low_freq_factor;
      const double high_freq_wavelen =
          c.original_max_positions / c.high_freq_factor;
      if (wavelen > low_freq_wavelen) {
        f = f / c.rope_factor;
      } else if (wavelen >= high_freq_wavelen) {
        const double smooth =
            (c.original_max_positions / wavelen - c.low_freq_factor) /
            (c.high_freq_factor - c.low_freq_factor);
        f = (1.0 - smooth) * f / c.rope_factor + smooth * f;
      }
    }
    inv_freq[i] = f;
  }
  return inv_freq;
}

void RefApplyRope(const std::vector<double>& inv_freq, int64_t pos, double* x,
                  int64_t head_dim) {
  const int64_t half = head_dim / 2;
  for (int64_t i = 0; i < half; ++i) {
    const double angle = static_cast<double>(pos) * inv_freq[i];
    const double cos_a = std::cos(angle), sin_a = std::sin(angle);
    const double x0 = x[i], x1 = x[i + half];
    x[i] = x0 * cos_a - x1 * sin_a;
    x[i + half] = x1 * cos_a + x0 * sin_a;
  }
}

std::vector<std::vector<double>> RefHiddenStates(
    const RefModel& m, const std::vector<int32_t>& tokens,
    const RefForwardOptions& options) {
  std::vector<std::vector<double>> states;
  RunBlocks(m, tokens, options, &states);
  return states;
}

std::vector<double> RefForwardLogits(const RefModel& m,
                                     const std::vector<int32_t>& tokens,
                                     const RefForwardOptions& options) {
  const RefConfig& c = m.config;
  const int64_t T = static_cast<int64_t>(tokens.size());
  const std::vector<double> h = RunBlocks(m, tokens, options, nullptr);
  const std::vector<double> x =
      RmsNorm(h, T, c.hidden_size, m.final_norm, c.rms_norm_eps);
  return MaybeQuantLinear(options, m.head_quantized, x, T, c.hidden_size,
                          m.Head(), {}, c.vocab_size);
}

std::unique_ptr<RefModel> RefModelFromModel(const kernels::model::Model& model,
                                            std::string* error) {
  namespace km = kernels::model;
  using kernels::DType;
  const km::ModelConfig& mc = model.config();
  auto m = std::make_unique<RefModel>();
  RefConfig& c = m->config;
  c.hidden_size = mc.hidden_size;
  c.intermediate_size = mc.intermediate_size;
  c.num_layers = mc.num_layers;
  c.num_heads = mc.num_heads;
  c.num_kv_heads = mc.num_kv_heads;
  c.head_dim = mc.head_dim;
  c.vocab_size = mc.vocab_size;
  c.rms_norm_eps = mc.rms_norm_eps;
  c.rope_theta = mc.rope_theta;
  c.tie_word_embeddings = mc.tie_word_embeddings;
  if (mc.rope_scaling.type == kernels::RopeScaling::Type::kLlama3) {
    c.llama3_rope = true;
    c.rope_factor = mc.rope_scaling.factor;
    c.low_freq_factor = mc.rope_scaling.low_freq_factor;
    c.high_freq_factor = mc.rope_scaling.high_freq_factor;
    c.original_max_positions =
        static_cast<double>(mc.rope_scaling.original_max_positions);
  }
  // Widens view `t` (absent: data == nullptr, left empty) to double after
  // checking its shape; *quantized says whether it was block-quantized.
  auto widen = [&](const km::TensorView& t, const std::vector<int64_t>& shape,
                   std::vector<double>* out, bool* quantized = nullptr) {
    if (t.data == nullptr) return true;
    if (t.shape != shape) {
      *error =
          model.source() + ": tensor " + t.name + " has an unexpected shape";
      return false;
    }
    int64_t numel = 1;
    for (int64_t d : shape) numel *= d;
    const int64_t cols = shape.back(), rows = numel / cols;
    out->resize(numel);
    if (quantized) *quantized = kernels::IsBlockQuantized(t.dtype);
    if (!kernels::IsBlockQuantized(t.dtype)) {
      for (int64_t i = 0; i < numel; ++i) {
        (*out)[i] = kernels::LoadAsFloat(t.data, t.dtype, i);
      }
      return true;
    }
    if (shape.size() != 2 || cols % kernels::BlockElems(t.dtype) != 0 ||
        static_cast<uint64_t>(rows * kernels::RowBytes(t.dtype, cols)) !=
            t.bytes) {
      *error = model.source() + ": tensor " + t.name +
               " is not a whole number of blocks per row";
      return false;
    }
    const int64_t row_bytes = kernels::RowBytes(t.dtype, cols);
    std::vector<float> row(cols);
    for (int64_t r = 0; r < rows; ++r) {
      kernels::quant::DequantizeRow(t.dtype, t.data + r * row_bytes, cols,
                                    row.data());
      for (int64_t i = 0; i < cols; ++i) (*out)[r * cols + i] = row[i];
    }
    return true;
  };
  const int64_t H = c.hidden_size, I = c.intermediate_size, V = c.vocab_size;
  const int64_t q_dim = c.num_heads * c.head_dim;
  const int64_t kv_dim = c.num_kv_heads * c.head_dim;
  bool embed_quantized = false;
  bool ok = widen(model.embed_tokens(), {V, H}, &m->embed, &embed_quantized) &&
            widen(model.final_norm(), {H}, &m->final_norm);
  // A tied head is the embedding table itself; leave lm_head empty then.
  if (ok && model.lm_head().data != model.embed_tokens().data) {
    ok = widen(model.lm_head(), {V, H}, &m->lm_head, &m->head_quantized);
  } else {
    m->head_quantized = embed_quantized;
  }
  m->blocks.resize(c.num_layers);
  for (int64_t l = 0; ok && l < c.num_layers; ++l) {
    const km::BlockWeights& w = model.block(l);
    RefBlock& b = m->blocks[l];
    RefBlock::Quantized& q = b.quantized;
    ok = widen(w.input_norm, {H}, &b.input_norm) &&
         widen(w.post_norm, {H}, &b.post_norm) &&
         widen(w.q_proj, {q_dim, H}, &b.wq, &q.wq) &&
         widen(w.k_proj, {kv_dim, H}, &b.wk, &q.wk) &&
         widen(w.v_proj, {kv_dim, H}, &b.wv, &q.wv) &&
         widen(w.o_proj, {H, q_dim}, &b.wo, &q.wo) &&
         widen(w.q_bias, {q_dim}, &b.bq) && widen(w.k_bias, {kv_dim}, &b.bk) &&
         widen(w.v_bias, {kv_dim}, &b.bv) &&
         widen(w.q_norm, {c.head_dim}, &b.q_norm) &&
         widen(w.k_norm, {c.head_dim}, &b.k_norm) &&
         widen(w.gate_proj, {I, H}, &b.w_gate, &q.w_gate) &&
         widen(w.up_proj, {I, H}, &b.w_up, &q.w_up) &&
         widen(w.down_proj, {H, I}, &b.w_down, &q.w_down);
  }
  if (!ok) return nullptr;
  return m;
}

void LogitComparison::Add(const double* got, const double* want,
                          int64_t positions, int64_t vocab) {
  for (int64_t t = 0; t < positions; ++t) {
    const double* g = got + t * vocab;
    const double* w = want + t * vocab;
    double diff2 = 0.0, norm2 = 0.0;
    for (int64_t i = 0; i < vocab; ++i) {
      diff2 += (g[i] - w[i]) * (g[i] - w[i]);
      norm2 += w[i] * w[i];
    }
    const double rel = std::sqrt(diff2 / norm2);
    sum_rel_err_ += rel;
    // A NaN error counts as the worst (std::max would drop it).
    if (!(rel <= max_rel_err_)) max_rel_err_ = rel;
    const int64_t top_g = std::max_element(g, g + vocab) - g;
    const int64_t top_w = std::max_element(w, w + vocab) - w;
    if (top_g == top_w) ++top1_agree_;
    rel_errs_.push_back(rel);
    ++positions_;
  }
}

double LogitComparison::median_rel_err() const {
  if (rel_errs_.empty()) return 0.0;
  std::vector<double> v = rel_errs_;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

double LogitComparison::share_within(double bound) const {
  if (rel_errs_.empty()) return 0.0;
  int64_t n = 0;
  for (double e : rel_errs_) n += e <= bound ? 1 : 0;
  return static_cast<double>(n) / static_cast<double>(rel_errs_.size());
}

}  // namespace layerproof::testing
