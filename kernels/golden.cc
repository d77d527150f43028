#include "kernels/golden.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <sstream>

#include "kernels/fp_env.h"
#include "kernels/philox.h"
#include "kernels/quant.h"
#include "kernels/ref/det_math.h"
#include "kernels/ref/rope_table.h"
#include "kernels/ref/sampling.h"
#include "kernels/sha256.h"

namespace layerproof::kernels {
namespace {

constexpr uint32_t kGoldenKey = 0x4C50474Fu;  // "LPGO"

// Hashes fp32 values as little-endian bytes (the layer-hash byte order).
std::string HashFloats(const std::vector<float>& v) {
  Sha256 h;
  for (float f : v) {
    const uint32_t u = FloatBits(f);
    const uint8_t b[4] = {uint8_t(u), uint8_t(u >> 8), uint8_t(u >> 16),
                          uint8_t(u >> 24)};
    h.Update(b, 4);
  }
  return HexDigest(h.Final());
}

std::string HashInts(const std::vector<int64_t>& v) {
  Sha256 h;
  for (int64_t x : v) {
    uint8_t b[8];
    for (int i = 0; i < 8; ++i) b[i] = uint8_t(uint64_t(x) >> (8 * i));
    h.Update(b, 8);
  }
  return HexDigest(h.Final());
}

// Weights in a stored format, made from GoldenFloats.
struct StoredWeights {
  std::vector<unsigned char> bytes;
  WeightView view;
};

StoredWeights MakeWeights(uint32_t stream, int64_t rows, int64_t cols,
                          DType dtype, float scale, bool specials) {
  StoredWeights w;
  w.bytes =
      EncodeWeights(GoldenFloats(stream, rows * cols, scale, specials), dtype);
  w.view = {w.bytes.data(), dtype, rows, cols};
  return w;
}

using CaseFn = std::function<StatusOr<std::string>(Backend&)>;

// Block-quantized weights (§3.12): Philox bytes, with the fp16 scales of
// each block set from GoldenFloats (|d| < 0.05); every 7th block's scales
// are zero, and with `extreme` every 5th gets +inf, NaN, a subnormal or
// 65504 in turn.
StoredWeights MakeBlocks(uint32_t stream, int64_t rows, int64_t cols,
                         DType dtype, bool extreme) {
  StoredWeights w;
  w.bytes.resize(size_t(rows * RowBytes(dtype, cols)));
  for (size_t i = 0; i < w.bytes.size(); i += 4) {
    const PhiloxCounter c =
        Philox4x32({uint32_t(i / 4), stream, 0, 0}, {kGoldenKey, 0x51554E54u});
    for (size_t j = 0; j < 4 && i + j < w.bytes.size(); ++j) {
      w.bytes[i + j] = uint8_t(c[0] >> (8 * j));
    }
  }
  const int64_t blocks = int64_t(w.bytes.size()) / BlockBytes(dtype);
  const std::vector<float> scales =
      GoldenFloats(stream + 1, 2 * blocks, 0.05f, false);
  const uint16_t kExtreme[] = {0x7C00, 0x7E01, 0x0003, 0x7BFF};
  const size_t d_at = dtype == DType::kQ6_K ? 208 : 0;
  for (int64_t b = 0; b < blocks; ++b) {
    for (int s = 0; s < (dtype == DType::kQ4_K ? 2 : 1); ++s) {
      uint16_t h = FloatToF16(scales[size_t(2 * b + s)]);
      if (b % 7 == 3) h = 0;
      if (extreme && b % 5 == 1) h = kExtreme[(b / 5 + s) % 4];
      std::memcpy(&w.bytes[size_t(b * BlockBytes(dtype)) + d_at + 2 * s], &h,
                  2);
    }
  }
  w.view = {w.bytes.data(), dtype, rows, cols};
  return w;
}

CaseFn QuantGemmCase(uint32_t seed, int64_t m, int64_t k, int64_t n,
                     DType dtype, bool bias, bool specials) {
  return [=](Backend& b) -> StatusOr<std::string> {
    std::vector<float> x = GoldenFloats(seed, m * k, 2.0f, specials);
    // Units of very different magnitudes, and one all-zero unit.
    for (int64_t u = 0; u < m * k / quant::kUnit; ++u) {
      const float f = u % 3 == 0 ? 1e-30f : (u % 3 == 1 ? 1.0f : 1e20f);
      for (int64_t i = 0; i < quant::kUnit; ++i) {
        x[size_t(u * quant::kUnit + i)] *= u == 1 ? 0.0f : f;
      }
    }
    StoredWeights w = MakeBlocks(seed + 1, n, k, dtype, specials);
    const std::vector<float> bvec = GoldenFloats(seed + 2, n, 0.5f, false);
    LP_ASSIGN_OR_RETURN(auto packed, b.PackWeights(w.view));
    std::vector<float> y(m * n);
    LP_RETURN_IF_ERROR(
        b.Gemm(x.data(), m, *packed, bias ? bvec.data() : nullptr, y.data()));
    return HashFloats(y);
  };
}

CaseFn QuantEmbeddingCase(uint32_t seed, DType dtype) {
  return [=](Backend& b) -> StatusOr<std::string> {
    StoredWeights t = MakeBlocks(seed, 20, 512, dtype, true);
    const std::vector<int32_t> ids = {0, 19, 7, 7, 13};
    std::vector<float> y(ids.size() * 512);
    LP_RETURN_IF_ERROR(b.Embedding(t.view, ids.data(), ids.size(), y.data()));
    return HashFloats(y);
  };
}

struct Case {
  const char* name;
  CaseFn run;
};

CaseFn GemmCase(uint32_t seed, int64_t m, int64_t k, int64_t n, DType dtype,
                bool bias, bool specials) {
  return [=](Backend& b) -> StatusOr<std::string> {
    const std::vector<float> x = GoldenFloats(seed, m * k, 2.0f, specials);
    StoredWeights w = MakeWeights(seed + 1, n, k, dtype, 0.05f, specials);
    const std::vector<float> bvec = GoldenFloats(seed + 2, n, 0.5f, false);
    LP_ASSIGN_OR_RETURN(auto packed, b.PackWeights(w.view));
    std::vector<float> y(m * n);
    LP_RETURN_IF_ERROR(
        b.Gemm(x.data(), m, *packed, bias ? bvec.data() : nullptr, y.data()));
    return HashFloats(y);
  };
}

CaseFn RmsNormCase(uint32_t seed, int64_t rows, int64_t dim, bool specials,
                   DType gamma_dtype = DType::kBF16) {
  return [=](Backend& b) -> StatusOr<std::string> {
    const std::vector<float> x = GoldenFloats(seed, rows * dim, 3.0f, specials);
    StoredWeights g = MakeWeights(seed + 1, 1, dim, gamma_dtype, 1.5f, false);
    std::vector<float> y(rows * dim);
    LP_RETURN_IF_ERROR(b.RmsNorm(x.data(), rows, dim, g.view, 1e-5f, y.data()));
    return HashFloats(y);
  };
}

RopeScaling Llama3Scaling() {
  RopeScaling s;
  s.type = RopeScaling::Type::kLlama3;
  s.factor = 8.0;
  s.low_freq_factor = 1.0;
  s.high_freq_factor = 4.0;
  s.original_max_positions = 8192;
  return s;
}

CaseFn RopeCase(uint32_t seed, int64_t head_dim, double theta,
                RopeScaling scaling, bool specials) {
  return [=](Backend& b) -> StatusOr<std::string> {
    LP_ASSIGN_OR_RETURN(RopeTable t,
                        BuildRopeTable(head_dim, theta, 20000, scaling));
    const std::vector<int64_t> pos = {0, 1, 2, 77, 4095, 8191, 19999};
    const int64_t rows = pos.size(), heads = 3;
    std::vector<float> x =
        GoldenFloats(seed, rows * heads * head_dim, 4.0f, specials);
    LP_RETURN_IF_ERROR(b.Rope(x.data(), rows, heads, pos.data(), t));
    return HashFloats(x);
  };
}

CaseFn AttentionCase(uint32_t seed, int64_t nq, int64_t q_pos0, int64_t heads,
                     int64_t kv_heads, int64_t hd, bool specials) {
  return [=](Backend& b) -> StatusOr<std::string> {
    const int64_t n_kv = q_pos0 + nq;
    const std::vector<float> q =
        GoldenFloats(seed, nq * heads * hd, 1.0f, false);
    const std::vector<float> k =
        GoldenFloats(seed + 1, n_kv * kv_heads * hd, 1.0f, specials);
    const std::vector<float> v =
        GoldenFloats(seed + 2, n_kv * kv_heads * hd, 1.0f, false);
    std::vector<float> out(nq * heads * hd);
    AttentionArgs a{q.data(), k.data(), v.data(), out.data(), nq,
                    q_pos0,   n_kv,     heads,    kv_heads,   hd};
    LP_RETURN_IF_ERROR(b.Attention(a));
    return HashFloats(out);
  };
}

CaseFn ElementwiseCase(uint32_t seed, int64_t n, const char* op) {
  const std::string which = op;
  return [=](Backend& b) -> StatusOr<std::string> {
    const std::vector<float> a = GoldenFloats(seed, n, 12.0f, true);
    const std::vector<float> c = GoldenFloats(seed + 1, n, 12.0f, true);
    std::vector<float> y(n);
    if (which == "swiglu") {
      LP_RETURN_IF_ERROR(b.SwiGlu(a.data(), c.data(), n, y.data()));
    } else if (which == "add") {
      LP_RETURN_IF_ERROR(b.Add(a.data(), c.data(), n, y.data()));
    } else {
      LP_RETURN_IF_ERROR(b.Softmax(a.data(), n / 100, 100, y.data()));
    }
    return HashFloats(y);
  };
}

CaseFn EmbeddingCase(uint32_t seed, DType dtype) {
  return [=](Backend& b) -> StatusOr<std::string> {
    StoredWeights t = MakeWeights(seed, 50, 96, dtype, 1.0f, true);
    const std::vector<int32_t> ids = {0, 49, 7, 7, 13, 1, 48};
    std::vector<float> y(ids.size() * 96);
    LP_RETURN_IF_ERROR(b.Embedding(t.view, ids.data(), ids.size(), y.data()));
    return HashFloats(y);
  };
}

StatusOr<std::string> ArgmaxCase(Backend& b) {
  const int64_t n = 333;
  std::vector<float> x = GoldenFloats(91, 6 * n, 5.0f, false);
  x[0 * n + 100] = 50.0f;  // row 0: a clear winner
  x[1 * n + 10] = 50.0f;   // row 1: a tie, the lower index wins
  x[1 * n + 200] = 50.0f;
  x[2 * n + 5] = -0.0f;  // row 2: all zeros of both signs
  for (int64_t i = 0; i < n; ++i) x[2 * n + i] = (i % 2) ? 0.0f : -0.0f;
  x[3 * n + 300] = NAN;  // row 3: NaN ranks first
  x[3 * n + 3] = INFINITY;
  for (int64_t i = 0; i < n; ++i) x[4 * n + i] = -INFINITY;  // row 4
  x[5 * n + n - 1] = 1e30f;  // row 5: the last element
  std::vector<int64_t> out(6);
  LP_RETURN_IF_ERROR(b.Argmax(x.data(), 6, n, out.data()));
  return HashInts(out);
}

// Host-side, backend-independent cases: they pin the deterministic math and
// the sampler across architectures.
StatusOr<std::string> SamplingCase(Backend&) {
  const std::vector<float> logits = GoldenFloats(71, 5000, 6.0f, false);
  std::vector<int64_t> tokens;
  const SamplingParams settings[] = {{0.8f, 40, 0.9f, 1234},
                                     {1.0f, 0, 1.0f, 99},
                                     {0.5f, 0, 0.5f, ~0ull},
                                     {0.0f, 0, 1.0f, 5}};
  for (const SamplingParams& sp : settings) {
    for (uint64_t pos = 0; pos < 16; ++pos) {
      LP_ASSIGN_OR_RETURN(int32_t t,
                          SampleToken(logits.data(), logits.size(), sp, pos));
      tokens.push_back(t);
    }
  }
  return HashInts(tokens);
}

StatusOr<std::string> ExpFCase(Backend&) {
  std::vector<float> y;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 65537) {
    y.push_back(detmath::ExpF(BitsToFloat(static_cast<uint32_t>(bits))));
  }
  return HashFloats(y);
}

StatusOr<std::string> RopeTableCase(Backend&) {
  LP_ASSIGN_OR_RETURN(RopeTable t,
                      BuildRopeTable(128, 500000.0, 4096, Llama3Scaling()));
  std::vector<float> all = t.cos;
  all.insert(all.end(), t.sin.begin(), t.sin.end());
  return HashFloats(all);
}

const std::vector<Case>& Cases() {
  static const std::vector<Case>* cases = new std::vector<Case>{
      {"gemv_bf16_k1000_n67_bias",
       GemmCase(1, 1, 1000, 67, DType::kBF16, true, false)},
      {"gemm_bf16_m7_k4099_n33",
       GemmCase(4, 7, 4099, 33, DType::kBF16, false, false)},
      {"gemm_f16_m3_k300_n19_bias",
       GemmCase(7, 3, 300, 19, DType::kF16, true, false)},
      {"gemm_f32_m5_k777_n40",
       GemmCase(10, 5, 777, 40, DType::kF32, false, false)},
      {"gemm_bf16_specials_m4_k513_n21",
       GemmCase(13, 4, 513, 21, DType::kBF16, true, true)},
      {"gemm_f16_specials_m2_k64_n9",
       GemmCase(16, 2, 64, 9, DType::kF16, false, true)},
      // Several 14-row AVX-512 tiles, several panels, a chunk tail.
      {"gemm_bf16_m40_k600_n70_bias",
       GemmCase(17, 40, 600, 70, DType::kBF16, true, false)},
      {"gemm_f32_specials_m17_k257_n33",
       GemmCase(18, 17, 257, 33, DType::kF32, false, true)},
      {"qgemv_q8_0_k4096_n70_bias",
       QuantGemmCase(70, 1, 4096, 70, DType::kQ8_0, true, false)},
      {"qgemm_q8_0_specials_m5_k800_n33",
       QuantGemmCase(73, 5, 800, 33, DType::kQ8_0, false, true)},
      {"qgemv_q4_0_k1056_n41",
       QuantGemmCase(76, 1, 1056, 41, DType::kQ4_0, false, false)},
      {"qgemm_q4_0_specials_m9_k256_n17_bias",
       QuantGemmCase(79, 9, 256, 17, DType::kQ4_0, true, true)},
      {"qgemv_q4_k_k2048_n37_bias",
       QuantGemmCase(82, 1, 2048, 37, DType::kQ4_K, true, false)},
      {"qgemm_q4_k_specials_m4_k768_n19",
       QuantGemmCase(85, 4, 768, 19, DType::kQ4_K, false, true)},
      {"qgemv_q6_k_k1280_n29",
       QuantGemmCase(88, 1, 1280, 29, DType::kQ6_K, false, false)},
      {"qgemm_q6_k_specials_m3_k512_n23_bias",
       QuantGemmCase(91, 3, 512, 23, DType::kQ6_K, true, true)},
      {"rmsnorm_r3_d4096", RmsNormCase(20, 3, 4096, false)},
      {"rmsnorm_specials_r4_d100", RmsNormCase(23, 4, 100, true)},
      {"rmsnorm_f16_gamma_r2_d333", RmsNormCase(26, 2, 333, true, DType::kF16)},
      {"rmsnorm_f32_gamma_r2_d77", RmsNormCase(29, 2, 77, false, DType::kF32)},
      {"rope_hd64_theta1e4", RopeCase(30, 64, 10000.0, RopeScaling{}, false)},
      {"rope_llama3_hd128_specials",
       RopeCase(33, 128, 500000.0, Llama3Scaling(), true)},
      {"attention_prefill_t37_h4_kv2_d64",
       AttentionCase(40, 37, 0, 4, 2, 64, false)},
      {"attention_decode_t300_h8_kv2_d128",
       AttentionCase(43, 1, 300, 8, 2, 128, false)},
      {"attention_chunked_prefill_specials",
       AttentionCase(46, 5, 260, 2, 1, 32, true)},
      {"swiglu_specials_n1000", ElementwiseCase(50, 1000, "swiglu")},
      {"softmax_specials_r10_n100", ElementwiseCase(53, 1000, "softmax")},
      {"add_specials_n1000", ElementwiseCase(56, 1000, "add")},
      {"embedding_bf16", EmbeddingCase(60, DType::kBF16)},
      {"embedding_f16", EmbeddingCase(63, DType::kF16)},
      {"embedding_f32", EmbeddingCase(66, DType::kF32)},
      {"embedding_q8_0", QuantEmbeddingCase(94, DType::kQ8_0)},
      {"embedding_q4_0", QuantEmbeddingCase(95, DType::kQ4_0)},
      {"embedding_q4_k", QuantEmbeddingCase(96, DType::kQ4_K)},
      {"embedding_q6_k", QuantEmbeddingCase(97, DType::kQ6_K)},
      {"argmax_ties_nan_r6_n333", ArgmaxCase},
      {"sampling_host", SamplingCase},
      {"det_expf_sweep_host", ExpFCase},
      {"rope_table_llama3_host", RopeTableCase},
  };
  return *cases;
}

}  // namespace

std::vector<float> GoldenFloats(uint32_t stream, int64_t n, float scale,
                                bool specials) {
  static const float kSpecials[] = {0.0f,     -0.0f,          1e-40f, -3e-42f,
                                    INFINITY, -INFINITY,      NAN,    3.4e38f,
                                    -3.4e38f, 1.17549435e-38f};
  std::vector<float> out(n);
  for (int64_t i = 0; i < n; i += 4) {
    const PhiloxCounter w = Philox4x32(
        {static_cast<uint32_t>(i), static_cast<uint32_t>(i >> 32), stream, 0},
        {kGoldenKey, stream});
    for (int64_t j = 0; j < 4 && i + j < n; ++j) {
      out[i + j] = (UniformFloat(w[j]) * 2.0f - 1.0f) * scale;
    }
  }
  if (specials) {
    int s = 0;
    for (int64_t i = 5; i < n; i += 11) out[i] = kSpecials[s++ % 10];
  }
  return out;
}

std::vector<std::string> GoldenCaseNames() {
  std::vector<std::string> names;
  for (const Case& c : Cases()) names.push_back(c.name);
  return names;
}

std::vector<GoldenResult> RunGoldenCases(Backend& backend) {
  FpEnvGuard guard;  // the host-side cases call det_math directly
  std::vector<GoldenResult> out;
  for (const Case& c : Cases()) {
    StatusOr<std::string> r = c.run(backend);
    out.push_back({c.name, r.ok() ? r.value() : "", r.status()});
  }
  return out;
}

StatusOr<std::map<std::string, std::string>> ParseGoldenFile(
    std::string_view text) {
  std::map<std::string, std::string> out;
  std::istringstream in{std::string(text)};
  std::string line;
  int line_no = 0;
  bool have_version = false;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string key, value, extra;
    fields >> key >> value;
    const std::string where = "golden file line " + std::to_string(line_no);
    if (key.empty() || value.empty() || (fields >> extra)) {
      return InvalidArgument(where + ": want \"name value\", got \"" + line +
                             "\"");
    }
    if (key == "spec_version") {
      if (value != std::to_string(kSpecVersion)) {
        return InvalidArgument(where + ": spec_version " + value +
                               ", this build implements " +
                               std::to_string(kSpecVersion));
      }
      have_version = true;
      continue;
    }
    if (value.size() != 64 ||
        value.find_first_not_of("0123456789abcdef") != std::string::npos) {
      return InvalidArgument(where + ": hash of " + key +
                             " is not 64 lowercase hex digits");
    }
    if (!out.emplace(key, value).second) {
      return InvalidArgument(where + ": duplicate case " + key);
    }
  }
  if (!have_version)
    return InvalidArgument("golden file: no spec_version line");
  return out;
}

std::string FormatGoldenFile(const std::vector<GoldenResult>& results) {
  std::string s =
      "# LayerProof kernel golden vectors: SHA-256 of each case's output\n"
      "# (kernels/golden.cc). Made by the ref backend with\n"
      "#   layerproof selftest --print-golden\n"
      "# Regenerate only with a spec_version bump (docs/determinism.md §7).\n";
  s += "spec_version " + std::to_string(kSpecVersion) + "\n";
  for (const GoldenResult& r : results) s += r.name + " " + r.sha256_hex + "\n";
  return s;
}

}  // namespace layerproof::kernels
