// The float64 reference forward: a self-contained safetensors reader and the
// transformers Llama math in double, sums taken in index order.
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
    std::vector<double> q = Linear(x, T, H, b.wq, b.bq, nq * D);
    std::vector<double> k = Linear(x, T, H, b.wk, b.bk, nkv * D);
    const std::vector<double> v = Linear(x, T, H, b.wv, b.bv, nkv * D);
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
    const std::vector<double> o = Linear(attn, T, nq * D, b.wo, b.bo, H);
    for (int64_t i = 0; i < T * H; ++i) h[i] += o[i];
    const std::vector<double> x2 =
        RmsNorm(h, T, H, b.post_norm, c.rms_norm_eps);
    std::vector<double> gate = Linear(x2, T, H, b.w_gate, b.b_gate, I);
    const std::vector<double> up = Linear(x2, T, H, b.w_up, b.b_up, I);
    for (int64_t i = 0; i < T * I; ++i) {
      gate[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
    }
    const std::vector<double> down = Linear(gate, T, I, b.w_down, b.b_down, H);
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
    const RefModel& m, const std::vector<int32_t>& tokens) {
  std::vector<std::vector<double>> states;
  RunBlocks(m, tokens, &states);
  return states;
}

std::vector<double> RefForwardLogits(const RefModel& m,
                                     const std::vector<int32_t>& tokens) {
  const RefConfig& c = m.config;
  const int64_t T = static_cast<int64_t>(tokens.size());
  const std::vector<double> h = RunBlocks(m, tokens, nullptr);
  const std::vector<double> x =
      RmsNorm(h, T, c.hidden_size, m.final_norm, c.rms_norm_eps);
  return Linear(x, T, c.hidden_size, m.Head(), {}, c.vocab_size);
}

}  // namespace layerproof::testing
