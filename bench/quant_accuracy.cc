// How far the engine's block-quantized forward is from exact arithmetic
// (issue 15 item 5), and where the error comes from.
//
// For a synthetic model (the `small` preset with intermediate 1536 by
// default, so that every row is a whole number of 256-element k-quant
// blocks) it writes the bf16 model, quantizes it to Q8_0, Q4_0, Q4_K and
// Q6_K GGUF files, and runs the same teacher-forced prompts of random token
// ids through
//   - the engine on the default CPU backend (fp32 activations, int8
//     activation units and exact integer dots for quantized matrices,
//     docs/determinism.md §3.12);
//   - the float64 reference forward (tests/model/reference_forward.h) of the
//     same weights: the dequantized values for a quantized model, the bf16
//     values for the float one;
//   - the float64 forward with the engine's activation quantization (int8
//     per 32-element unit, in double), to split activation rounding from
//     fp32 rounding;
//   - the float64 forward of the original bf16 weights, to show the weight
//     rounding of the quantizer.
// It prints two markdown tables: per position, the relative logit error
// ||l - l_ref||_2 / ||l_ref||_2 (mean and max) and top-1 agreement.
// BENCHMARKS.md "Quantized model accuracy (issue 15)" and docs/model.md
// "Accuracy of quantized models" record the figures.
//
// Usage: quant_accuracy [--preset small] [--intermediate 1536] [--prompts 5]
//                       [--length 64] [--seed 1] [--threads N]
// (--intermediate 0 keeps the preset's; the report then names the tensors
// that fell back to another type.)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/dtype.h"
#include "kernels/model/engine.h"
#include "kernels/model/executor.h"
#include "kernels/model/gguf_model.h"
#include "kernels/model/model.h"
#include "kernels/model/synth.h"
#include "tests/model/reference_forward.h"

namespace {

namespace km = layerproof::kernels::model;
namespace lt = layerproof::testing;
using layerproof::kernels::DType;
using Logits = std::vector<std::vector<double>>;  // per prompt

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "quant_accuracy: %s\n", what.c_str());
  std::exit(1);
}

template <typename T>
T Check(layerproof::kernels::StatusOr<T> v, const std::string& what) {
  if (!v.ok()) Die(what + ": " + v.status().ToString());
  return std::move(*v);
}

void Check(const layerproof::kernels::Status& s, const std::string& what) {
  if (!s.ok()) Die(what + ": " + s.ToString());
}

// The float64 forward of every prompt, `threads` prompts at a time.
Logits RefLogits(const lt::RefModel& ref,
                 const std::vector<std::vector<int32_t>>& prompts,
                 const lt::RefForwardOptions& options, int threads) {
  Logits out(prompts.size());
  std::vector<std::thread> pool;
  for (int w = 0; w < threads; ++w) {
    pool.emplace_back([&, w] {
      for (size_t p = w; p < prompts.size(); p += threads) {
        out[p] = lt::RefForwardLogits(ref, prompts[p], options);
      }
    });
  }
  for (std::thread& t : pool) t.join();
  return out;
}

// The engine's logits of every prompt (teacher-forced prefill), widened.
Logits EngineLogits(const km::Model& model,
                    const std::vector<std::vector<int32_t>>& prompts) {
  auto backend = Check(layerproof::kernels::DefaultBackend(), "backend");
  auto executor = Check(km::MakeExecutor(backend), "executor");
  auto engine = Check(km::Engine::Create(model, executor.get()), "engine");
  const int64_t vocab = model.config().vocab_size;
  Logits out;
  for (const std::vector<int32_t>& prompt : prompts) {
    std::vector<float> logits(prompt.size() * vocab);
    Check(engine->Forward(prompt, nullptr, 1, logits.data()), "forward");
    out.emplace_back(logits.begin(), logits.end());
  }
  return out;
}

lt::LogitComparison Compare(const Logits& got, const Logits& want,
                            int64_t vocab) {
  lt::LogitComparison c;
  for (size_t p = 0; p < got.size(); ++p) {
    c.Add(got[p].data(), want[p].data(),
          static_cast<int64_t>(got[p].size()) / vocab, vocab);
  }
  return c;
}

// Bits per weight over the model's matrices (a tied table counted once).
double BitsPerWeight(const km::Model& model) {
  double bits = 0, elems = 0;
  for (const auto& [name, t] : model.tensors()) {
    if (t.shape.size() != 2) continue;
    bits += 8.0 * static_cast<double>(t.bytes);
    elems += static_cast<double>(t.shape[0] * t.shape[1]);
  }
  return bits / elems;
}

// The matrices not stored in `type`, layer numbers folded into N:
// "model.layers.N.mlp.down_proj.weight: Q4_0".
std::string Fallbacks(const km::Model& model, DType type) {
  std::set<std::string> seen;
  const std::regex layer(R"(\.layers\.[0-9]+\.)");
  for (const auto& [name, t] : model.tensors()) {
    if (t.shape.size() != 2 || t.dtype == type) continue;
    seen.insert(std::regex_replace(name, layer, ".layers.N.") + " -> " +
                std::string(layerproof::kernels::DTypeName(t.dtype)));
  }
  std::string out;
  for (const std::string& s : seen) out += (out.empty() ? "" : "; ") + s;
  return out.empty() ? "none" : out;
}

std::string Pct(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100.0 * x);
  return b;
}

std::string Err(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2e", x);
  return b;
}

// "mean 1.23e-03, top-1 99.7%" in one cell.
std::string Cell(const lt::LogitComparison& c) {
  return Err(c.mean_rel_err()) + " (" + Pct(c.top1_agreement()) + ")";
}

struct Row {
  std::string name;
  double bits = 0;
  std::string fallbacks;
  lt::LogitComparison same;    // engine vs f64 of the same weights
  lt::LogitComparison act;     // f64 act-quant vs f64, same weights
  lt::LogitComparison fp32;    // engine vs f64 act-quant (fp32 + flips)
  lt::LogitComparison weight;  // f64 of these weights vs f64 of bf16
  lt::LogitComparison total;   // engine vs f64 of bf16
  bool quantized = false;
};

}  // namespace

int main(int argc, char** argv) {
  std::string preset = "small";
  int64_t intermediate = 1536;
  int prompts_n = 5, length = 64;
  uint64_t seed = 1;
  int threads =
      static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) Die("missing value for " + a);
    const std::string v = argv[++i];
    if (a == "--preset") {
      preset = v;
    } else if (a == "--intermediate") {
      intermediate = std::stoll(v);
    } else if (a == "--prompts") {
      prompts_n = std::stoi(v);
    } else if (a == "--length") {
      length = std::stoi(v);
    } else if (a == "--seed") {
      seed = std::stoull(v);
    } else if (a == "--threads") {
      threads = std::max(1, std::stoi(v));
    } else {
      Die("unknown flag " + a);
    }
  }
  const auto start = std::chrono::steady_clock::now();
  km::ModelConfig config = Check(km::SynthPreset(preset), "preset");
  if (intermediate > 0) config.intermediate_size = intermediate;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("lp_quant_accuracy_" + std::to_string(::getpid()));
  km::SynthOptions synth;
  synth.seed = seed;
  Check(km::SynthesizeModel(config, synth, dir.string()), "synthesize");
  const int64_t vocab = config.vocab_size;

  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> token(0,
                                               static_cast<int32_t>(vocab - 1));
  std::vector<std::vector<int32_t>> prompts(prompts_n);
  for (auto& p : prompts) {
    for (int i = 0; i < length; ++i) p.push_back(token(rng));
  }

  std::vector<Row> rows;
  // The float model: its engine against the independent float64 reader.
  std::string error;
  std::unique_ptr<km::Model> bf16 =
      Check(km::Model::Load(dir.string()), "load bf16");
  std::unique_ptr<lt::RefModel> ref_bf16 =
      lt::LoadRefModel(dir.string(), &error);
  if (!ref_bf16) Die(error);
  const Logits f64_bf16 = RefLogits(*ref_bf16, prompts, {}, threads);
  ref_bf16.reset();
  {
    Row r;
    r.name = "BF16";
    r.bits = BitsPerWeight(*bf16);
    r.fallbacks = "-";
    const Logits engine = EngineLogits(*bf16, prompts);
    r.same = Compare(engine, f64_bf16, vocab);
    r.total = r.same;
    rows.push_back(r);
  }
  for (DType type : {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ6_K}) {
    const std::string name(layerproof::kernels::DTypeName(type));
    const std::string path = (dir / (name + ".gguf")).string();
    Check(km::WriteGgufModel(*bf16, type, path), "quantize " + name);
    std::unique_ptr<km::Model> q = Check(km::Model::Load(path), "load " + name);
    std::unique_ptr<lt::RefModel> ref = lt::RefModelFromModel(*q, &error);
    if (!ref) Die(error);
    Row r;
    r.name = name;
    r.quantized = true;
    r.bits = BitsPerWeight(*q);
    r.fallbacks = Fallbacks(*q, type);
    const Logits engine = EngineLogits(*q, prompts);
    const Logits f64 = RefLogits(*ref, prompts, {}, threads);
    lt::RefForwardOptions act_options;
    act_options.quantize_activations = true;
    const Logits f64_act = RefLogits(*ref, prompts, act_options, threads);
    r.same = Compare(engine, f64, vocab);
    r.act = Compare(f64_act, f64, vocab);
    r.fp32 = Compare(engine, f64_act, vocab);
    r.weight = Compare(f64, f64_bf16, vocab);
    r.total = Compare(engine, f64_bf16, vocab);
    rows.push_back(r);
    std::fprintf(stderr, "%s done\n", name.c_str());
  }
  bf16.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  auto backend = Check(layerproof::kernels::DefaultBackend(), "backend");
  std::printf(
      "Model: `%s` preset, hidden %lld, intermediate %lld, %lld layers, "
      "%lld/%lld heads, vocab %lld, tied %s, seed %llu. %d prompts x %d "
      "random token ids = %lld positions, teacher-forced prefill. Engine on "
      "the `%s` backend; float64 reference forward "
      "(tests/model/reference_forward.cc). %.0f s.\n\n",
      preset.c_str(), static_cast<long long>(config.hidden_size),
      static_cast<long long>(config.intermediate_size),
      static_cast<long long>(config.num_layers),
      static_cast<long long>(config.num_heads),
      static_cast<long long>(config.num_kv_heads),
      static_cast<long long>(vocab), config.tie_word_embeddings ? "yes" : "no",
      static_cast<unsigned long long>(seed), prompts_n, length,
      static_cast<long long>(prompts_n) * length,
      std::string(layerproof::kernels::BackendName(backend->kind())).c_str(),
      secs);
  std::printf(
      "Engine against the float64 forward of the same weights (the "
      "dequantized values; bf16 for the float model), relative logit error "
      "per position:\n\n");
  std::printf(
      "| weights | bits/weight | mean rel. error | median | max | top-1 "
      "agreement | matrices in another type |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    std::printf("| %s | %.2f | %s | %s | %s | %s | %s |\n", r.name.c_str(),
                r.bits, Err(r.same.mean_rel_err()).c_str(),
                Err(r.same.median_rel_err()).c_str(),
                Err(r.same.max_rel_err()).c_str(),
                Pct(r.same.top1_agreement()).c_str(), r.fallbacks.c_str());
  }
  std::printf(
      "\nWhere it comes from: mean relative logit error (top-1 agreement). "
      "Weight rounding: float64 forward of the dequantized weights vs of the "
      "bf16 weights. Int8 activations: float64 forward with activations "
      "quantized per 32-element unit (in double) vs without, same weights. "
      "Total: engine vs the float64 forward of the bf16 model. Last two "
      "columns: engine vs the float64 forward with int8 activations, and the "
      "share of positions where the two agree to 1e-5 (no activation rounded "
      "the other way so far).\n\n");
  std::printf(
      "| weights | weight rounding | int8 activations | total vs bf16 "
      "float64 | engine vs float64 with int8 act. | positions within 1e-5 "
      "|\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    if (!r.quantized) {
      std::printf("| %s | - | - | %s | - | - |\n", r.name.c_str(),
                  Cell(r.total).c_str());
      continue;
    }
    std::printf("| %s | %s | %s | %s | %s | %s |\n", r.name.c_str(),
                Cell(r.weight).c_str(), Cell(r.act).c_str(),
                Cell(r.total).c_str(), Cell(r.fp32).c_str(),
                Pct(r.fp32.share_within(1e-5)).c_str());
  }
  return 0;
}
