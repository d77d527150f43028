// Model-level speed: the LayerProof engine on a synthetic Llama (the
// `medium` preset by default: hidden 2048, 16 layers, 32 heads, 8 KV heads,
// FFN 5632, vocab 32000, bf16, ~0.85B parameters) against named peers
// measured in the same run, at the same thread count (2 by default):
//  * the memory roofline: streaming read bandwidth (bench/memory_bandwidth.h)
//    over the weight bytes one decode step reads (every layer matrix, the
//    norms and the LM head in their stored size; the embedding row and the
//    KV cache are not counted);
//  * a plain fp32 Llama forward on OpenBLAS (bench/openblas_llama.h), its
//    weights upcast once from the same tensors, checked to compute the same
//    model (greedy tokens and first-position logits).
// Workloads: decode at batch 1 and batch 8 (a 16-token prompt per sequence,
// then timed decode steps), and prefill of a 512-token prompt up to its
// first token. Each is repeated after one untimed warm-up, LayerProof and
// OpenBLAS taking turns so both see the same machine; the best and the
// median are reported in a markdown table for BENCHMARKS.md. A diagnostic
// times the engine's matrix products alone, to show where decode loses
// time against the roofline.
//
// The model is synthesized once into --model-dir (default
// $LP_BENCH_MODEL_DIR, else <build dir>/models/<preset>-seed1) and reused.
// Run it through scripts/bench.sh, which unsets OPENBLAS_CORETYPE and
// OPENBLAS_L2_SIZE so OpenBLAS picks its own kernels.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_common.h"
#include "bench/machine.h"
#include "bench/memory_bandwidth.h"
#include "bench/openblas_llama.h"
#include "bench/synth_model.h"
#include "kernels/dispatch.h"
#include "kernels/model/engine.h"
#include "kernels/model/executor.h"
#include "kernels/model/model.h"
#include "kernels/model/quantize_model.h"
#include "kernels/model/synth.h"

namespace layerproof::bench {
namespace {

namespace km = kernels::model;

struct Options {
  std::string preset = "medium";
  std::string model_dir;
  int threads = 2;
  int reps = 3;           // timed repetitions after one warm-up
  int64_t prompt = 16;    // decode prompt length
  int64_t steps = 32;     // timed decode steps
  int64_t batch = 8;      // sequences of the batched decode
  int64_t prefill = 512;  // prefill prompt length
  int64_t bw_bytes = int64_t{2} << 30;
  int bw_passes = 5;
  std::string quant;  // --quant q4_0: bf16 against that GGUF instead
};

void Usage() {
  std::fprintf(stderr,
               "usage: model_bench [--preset tiny|small|medium] [--quick]\n"
               "  [--model-dir DIR] [--threads N] [--reps N] [--steps N]\n"
               "  [--batch N] [--prefill N] [--quant q8_0|q4_0|q4_k|q6_k]\n"
               "  --quant: decode and prefill of the model against its GGUF\n"
               "  in that type (written once beside the model), same run, no\n"
               "  OpenBLAS\n");
}

bool ParseArgs(int argc, char** argv, Options* o) {
  for (Args args(argc, argv); args.Next();) {
    if (args.Flag("--quick")) {
      o->reps = 1;
      o->steps = 8;
      o->bw_bytes = int64_t{1} << 30;
      o->bw_passes = 3;
    } else if (const char* v = args.Value("--preset")) {
      o->preset = v;
    } else if (const char* v = args.Value("--model-dir")) {
      o->model_dir = v;
    } else if (const char* v = args.Value("--threads")) {
      o->threads = std::max(1, std::atoi(v));
    } else if (const char* v = args.Value("--reps")) {
      o->reps = std::max(1, std::atoi(v));
    } else if (const char* v = args.Value("--steps")) {
      o->steps = std::max(1, std::atoi(v));
    } else if (const char* v = args.Value("--batch")) {
      o->batch = std::max(1, std::atoi(v));
    } else if (const char* v = args.Value("--prefill")) {
      o->prefill = std::max(2, std::atoi(v));
    } else if (const char* v = args.Value("--quant")) {
      o->quant = v;
    } else {
      return false;
    }
  }
  return true;
}

// $LP_BENCH_MODEL_DIR, else models/<preset>-seed1 in the build directory
// (the parent of this binary's directory).
std::string DefaultModelDir(const std::string& preset) {
  if (const char* env = std::getenv("LP_BENCH_MODEL_DIR")) return env;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string name = preset + "-seed1";
  if (ec) return "models/" + name;
  return (exe.parent_path().parent_path() / "models" / name).string();
}

// Stored bytes of the weights one decode step reads (see the top comment).
int64_t WeightBytesPerToken(const km::Model& m) {
  int64_t bytes = m.lm_head().bytes + m.final_norm().bytes;
  for (int64_t l = 0; l < m.config().num_layers; ++l) {
    const km::BlockWeights& w = m.block(l);
    for (const km::TensorView* t :
         {&w.input_norm, &w.post_norm, &w.q_proj, &w.k_proj, &w.v_proj,
          &w.o_proj, &w.gate_proj, &w.up_proj, &w.down_proj}) {
      bytes += t->bytes;
    }
  }
  return bytes;
}

// Multiply-adds x2 of a prefill of t tokens: the layer matrices, causal
// attention (scores and P.V) and the LM head on the last row.
double PrefillFlops(const km::ModelConfig& c, int64_t t) {
  const double h = c.hidden_size, f = c.intermediate_size;
  const double qd = c.num_heads * c.head_dim, kvd = c.num_kv_heads * c.head_dim;
  const double matrices = c.num_layers * (2 * qd * h + 2 * kvd * h + 3 * f * h);
  const double attention = c.num_layers * 4.0 * qd * (double(t) * (t + 1) / 2);
  return 2.0 * matrices * t + attention + 2.0 * c.vocab_size * h;
}

int32_t Argmax(const float* x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (x[i] > x[best]) best = i;
  }
  return static_cast<int32_t>(best);
}

// ------------------------------------------------------------ LayerProof ---

km::GenerationRequest Request(std::vector<int32_t> prompt, int64_t new_tokens) {
  km::GenerationRequest r;
  r.prompt = std::move(prompt);
  r.max_new_tokens = new_tokens;
  r.ignore_eos = true;
  return r;
}

// One repetition of a workload returns its tokens/s; `rep` varies the
// prompts.

// `batch` sequences prefilled together, then o.steps timed decode steps.
double EngineDecodeOnce(km::Engine& e, const Options& o, int64_t batch,
                        int rep) {
  const int64_t vocab = e.model().config().vocab_size;
  for (int64_t b = 0; b < batch; ++b) {
    Must(e.Add(Request(Prompt(o.prompt, 100 * rep + b, vocab), o.steps + 1)),
         "Engine::Add");
  }
  Must(e.Step(), "Engine::Step (prefill)");
  const auto t0 = Clock::now();
  for (int64_t s = 0; s < o.steps; ++s) Must(e.Step(), "Engine::Step");
  const double sec = Seconds(t0);
  if (!e.idle()) {
    Die("decode", kernels::Internal("sequences left over").ToString());
  }
  e.TakeFinished();
  return double(batch * o.steps) / sec;
}

// One prompt of o.prefill tokens, timed up to its first token.
double EnginePrefillOnce(km::Engine& e, const Options& o, int rep) {
  const int64_t vocab = e.model().config().vocab_size;
  Must(e.Add(Request(Prompt(o.prefill, 7000 + rep, vocab), 1)), "Engine::Add");
  const auto t0 = Clock::now();
  Must(e.Step(), "Engine::Step (prefill)");
  const double sec = Seconds(t0);
  if (!e.idle()) {
    Die("prefill",
        kernels::Internal("prefill took more than one step").ToString());
  }
  e.TakeFinished();
  return double(o.prefill) / sec;
}

// Diagnostic: the matrix products of one decode step alone (every layer
// matrix, then the LM head, in the engine's order) at batch 1 and at batch
// o.batch, as tokens/s.
struct MatmulRates {
  Rates b1, bn;
};
MatmulRates EngineMatmulsOnly(const km::Model& m, km::Executor& ex,
                              const Options& o) {
  std::vector<std::unique_ptr<km::Matrix>> mats;
  int64_t widest = m.config().vocab_size;
  for (int64_t l = 0; l < m.config().num_layers; ++l) {
    const km::BlockWeights& w = m.block(l);
    for (const km::TensorView* t : {&w.q_proj, &w.k_proj, &w.v_proj, &w.o_proj,
                                    &w.gate_proj, &w.up_proj, &w.down_proj}) {
      mats.push_back(Must(ex.PrepareMatrix(*t), "PrepareMatrix"));
      widest = std::max({widest, t->shape[0], t->shape[1]});
    }
  }
  mats.push_back(Must(ex.PrepareMatrix(m.lm_head()), "PrepareMatrix"));
  // Gemm reads and writes executor memory (device memory on cuda).
  const std::vector<float> host_x(o.batch * widest, 0.01f);
  const km::Buffer x = Must(ex.Allocate(o.batch * widest), "Allocate");
  const km::Buffer y = Must(ex.Allocate(o.batch * widest), "Allocate");
  Must(ex.CopyFromHost(host_x.data(), o.batch * widest, x.data()),
       "CopyFromHost");
  MatmulRates r;
  float sink = 0;
  for (int64_t rows : {int64_t{1}, o.batch}) {
    for (int rep = 0; rep <= o.reps; ++rep) {
      const auto t0 = Clock::now();
      for (int64_t s = 0; s < o.steps; ++s) {
        for (const auto& w : mats) {
          Must(ex.Gemm(x.data(), rows, *w, nullptr, y.data()), "Gemm");
        }
      }
      // Waits for queued work (a device executor's Gemm returns early).
      Must(ex.CopyToHost(y.data(), 1, &sink), "CopyToHost");
      const double rate = double(rows * o.steps) / Seconds(t0);
      if (rep > 0) (rows == 1 ? r.b1 : r.bn).v.push_back(rate);
    }
  }
  return r;
}

double PeerDecodeOnce(OpenblasLlama& p, const Options& o, int64_t batch,
                      int rep) {
  const int64_t vocab = p.config().vocab_size;
  std::vector<float> logits(batch * vocab);
  std::vector<std::vector<int32_t>> prompts;
  std::vector<OpenblasLlama::SlotRows> rows;
  for (int64_t b = 0; b < batch; ++b) {
    prompts.push_back(Prompt(o.prompt, 100 * rep + b, vocab));
    p.Reset(static_cast<int>(b));
  }
  for (int64_t b = 0; b < batch; ++b) {
    rows.push_back({static_cast<int>(b), prompts[b].data(), o.prompt});
  }
  Must(p.Step(rows, logits.data()), "OpenblasLlama::Step (prefill)");
  std::vector<int32_t> next(batch);
  for (int64_t b = 0; b < batch; ++b) {
    next[b] = Argmax(logits.data() + b * vocab, vocab);
    rows[b] = {static_cast<int>(b), &next[b], 1};
  }
  const auto t0 = Clock::now();
  for (int64_t s = 0; s < o.steps; ++s) {
    Must(p.Step(rows, logits.data()), "OpenblasLlama::Step");
    for (int64_t b = 0; b < batch; ++b) {
      next[b] = Argmax(logits.data() + b * vocab, vocab);
    }
  }
  return double(batch * o.steps) / Seconds(t0);
}

double PeerPrefillOnce(OpenblasLlama& p, const Options& o, int rep) {
  const int64_t vocab = p.config().vocab_size;
  std::vector<float> logits(vocab);
  const std::vector<int32_t> prompt = Prompt(o.prefill, 7000 + rep, vocab);
  p.Reset(0);
  const auto t0 = Clock::now();
  Must(p.Step({{0, prompt.data(), o.prefill}}, logits.data()),
       "OpenblasLlama::Step (prefill)");
  volatile int32_t first = Argmax(logits.data(), vocab);
  (void)first;
  return double(o.prefill) / Seconds(t0);
}

// OpenBLAS workers spin for a while after a call; let them settle so they do
// not steal cycles from what runs next.
void LetOpenblasSettle() {
  openblas_set_num_threads(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
}

// One warm-up and o.reps timed repetitions of `ours` and `peer`, taken in
// turn so that both see the same machine. OpenBLAS runs on o.threads.
void Alternate(const Options& o, const std::function<double(int)>& ours,
               Rates* ours_rates, const std::function<double(int)>& peer,
               Rates* peer_rates) {
  for (int rep = 0; rep <= o.reps; ++rep) {
    const double a = ours(rep);
    openblas_set_num_threads(o.threads);
    const double b = peer(rep);
    LetOpenblasSettle();
    if (rep > 0) {
      ours_rates->v.push_back(a);
      peer_rates->v.push_back(b);
    }
  }
}

// ----------------------------------------------------------------- report ---

constexpr int kSanityPrompt = 8;
constexpr int kSanityTokens = 8;

struct EngineReference {
  std::vector<int32_t> prompt, tokens;
  std::vector<float> first_logits;  // logits after the prompt
};

EngineReference EngineGreedy(km::Engine& e) {
  EngineReference ref;
  const int64_t vocab = e.model().config().vocab_size;
  ref.prompt = Prompt(kSanityPrompt, 424242, vocab);
  km::FinishedSequence f =
      Must(e.Generate(Request(ref.prompt, kSanityTokens)), "Generate");
  ref.tokens = f.output;
  std::vector<float> all(kSanityPrompt * vocab);
  Must(e.Forward(ref.prompt, nullptr, 0, all.data()), "Forward");
  ref.first_logits.assign(all.end() - vocab, all.end());
  return ref;
}

// Prints how far the peer agrees with the engine.
void CheckPeer(OpenblasLlama& p, const EngineReference& ref) {
  const int64_t vocab = p.config().vocab_size;
  std::vector<float> logits(vocab);
  p.Reset(0);
  Must(p.Step({{0, ref.prompt.data(), kSanityPrompt}}, logits.data()),
       "OpenblasLlama::Step");
  double max_diff = 0, max_ref = 0;
  for (int64_t i = 0; i < vocab; ++i) {
    max_diff =
        std::max(max_diff, double(std::fabs(logits[i] - ref.first_logits[i])));
    max_ref = std::max(max_ref, double(std::fabs(ref.first_logits[i])));
  }
  std::vector<int32_t> tokens;
  for (int i = 0; i < kSanityTokens; ++i) {
    int32_t t = Argmax(logits.data(), vocab);
    tokens.push_back(t);
    if (i + 1 < kSanityTokens) {
      Must(p.Step({{0, &tokens.back(), 1}}, logits.data()),
           "OpenblasLlama::Step");
    }
  }
  int agree = 0;
  for (int i = 0; i < kSanityTokens; ++i) agree += tokens[i] == ref.tokens[i];
  std::printf(
      "peer check: %d of the first %d greedy tokens agree with the engine; "
      "first-position logits: max |diff| %.3g = %.2e of max |logit| %.3g\n",
      agree, kSanityTokens, max_diff, max_diff / max_ref, max_ref);
  std::printf("  engine:  ");
  for (int32_t t : ref.tokens) std::printf(" %d", t);
  std::printf("\n  openblas:");
  for (int32_t t : tokens) std::printf(" %d", t);
  std::printf("\n");
}

std::string Ratio(const Rates& a, const Rates& b) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "**%.2f×** / %.2f×", a.best() / b.best(),
                a.median() / b.median());
  return buf;
}

void Row(const char* workload, const std::string& who, const Rates& r,
         const std::string& roof, const std::string& ratio) {
  std::printf("| %s | %s | %.2f | %.2f | %s | %s |\n", workload, who.c_str(),
              r.best(), r.median(), roof.c_str(), ratio.c_str());
}

// `host`: the executor computes in host memory. A device executor reads its
// weights from device memory, which the host read bandwidth does not bound
// (scripts/gpu-check.sh measures the device's), so it gets no percentage.
std::string Percent(double rate, double roofline, bool host = true) {
  if (!host) return "— (device memory)";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * rate / roofline);
  return buf;
}

std::string Gflops(double rate, double flops_per_run, int64_t tokens) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "— (%.0f GFLOP/s)",
                flops_per_run * rate / tokens / 1e9);
  return buf;
}

// --quant: the bf16 model against its GGUF in o.quant, both on the default
// backend, taking turns: decode at batch 1 and prefill, each against its
// own roofline (the bytes its weights take).
int RunQuant(const Options& o, const km::Model& bf16, double bw) {
  const std::optional<kernels::DType> type = km::QuantTypeFromName(o.quant);
  if (!type) Die("--quant", "want one of " + std::string(km::kQuantTypeNames));
  const std::string gguf = bf16.dir() + "-" + o.quant + "/model.gguf";
  if (!std::filesystem::exists(gguf)) {
    std::filesystem::create_directories(bf16.dir() + "-" + o.quant);
    std::fprintf(stderr, "quantizing into %s ...\n", gguf.c_str());
    Must(km::QuantizeModelDir(bf16.dir(), *type, gguf), "model quantize");
  }
  std::unique_ptr<km::Model> q = Must(km::Model::Load(gguf), "load GGUF");
  kernels::Backend* backend = Must(kernels::DefaultBackend(), "backend");
  backend->SetThreads(o.threads);
  km::EngineOptions eo;
  eo.max_step_rows = std::max<int64_t>(1024, o.prefill);
  auto ex_bf16 = Must(km::MakeExecutor(backend), "executor");
  auto ex_q = Must(km::MakeExecutor(backend), "executor");
  auto e_bf16 = Must(km::Engine::Create(bf16, ex_bf16.get(), eo), "Engine");
  auto e_q = Must(km::Engine::Create(*q, ex_q.get(), eo), "Engine");
  Rates b_b1, q_b1, b_pre, q_pre;
  for (int rep = 0; rep <= o.reps; ++rep) {
    const double a = EngineDecodeOnce(*e_bf16, o, 1, rep);
    const double b = EngineDecodeOnce(*e_q, o, 1, rep);
    const double c = EnginePrefillOnce(*e_bf16, o, rep);
    const double d = EnginePrefillOnce(*e_q, o, rep);
    if (rep == 0) continue;  // warm-up
    b_b1.v.push_back(a);
    q_b1.v.push_back(b);
    b_pre.v.push_back(c);
    q_pre.v.push_back(d);
  }
  const int64_t bytes_bf16 = WeightBytesPerToken(bf16);
  const int64_t bytes_q = WeightBytesPerToken(*q);
  const double flops = PrefillFlops(bf16.config(), o.prefill);
  std::printf(
      "\nweights read per decode step: %.1f MB bf16, %.1f MB %s; read "
      "bandwidth %.2f GB/s; rooflines %.2f and %.2f tokens/s\n\n",
      bytes_bf16 / 1e6, bytes_q / 1e6, o.quant.c_str(), bw / 1e9,
      bw / bytes_bf16, bw / bytes_q);
  const std::string bn =
      "LayerProof (" + std::string(backend->name()) + ", bf16)";
  const std::string qn =
      "LayerProof (" + std::string(backend->name()) + ", " + o.quant + " GGUF)";
  const std::string pre = "prefill " + std::to_string(o.prefill);
  std::printf(
      "| workload | contender | tokens/s (best) | tokens/s (median) | of "
      "roofline (best) | %s / bf16 (best / median) |\n|---|---|---|---|---|---|"
      "\n",
      o.quant.c_str());
  const bool host = ex_bf16->host_memory();
  Row("decode, batch 1", bn, b_b1, Percent(b_b1.best(), bw / bytes_bf16, host),
      "—");
  Row("decode, batch 1", qn, q_b1, Percent(q_b1.best(), bw / bytes_q, host),
      Ratio(q_b1, b_b1));
  Row(pre.c_str(), bn, b_pre, Gflops(b_pre.best(), flops, o.prefill), "—");
  Row(pre.c_str(), qn, q_pre, Gflops(q_pre.best(), flops, o.prefill),
      Ratio(q_pre, b_pre));
  std::printf("\ndecode batch 1: %s %.2fx bf16 (target >= 2.5x: %s)\n",
              o.quant.c_str(), q_b1.best() / b_b1.best(),
              q_b1.best() / b_b1.best() >= 2.5 ? "met" : "NOT met");
  return 0;
}

int Run(const Options& o) {
  const std::string load_start = LoadAverage();
  std::printf(
      "model_bench: preset %s, %d threads, %d timed reps (+1 warm-up)\n",
      o.preset.c_str(), o.threads, o.reps);
  std::printf("load average at start: %s\n", load_start.c_str());
  const double bw_start =
      MeasureReadBandwidth(o.threads, o.bw_bytes, o.bw_passes);
  std::printf("read bandwidth (%d threads, %lld MiB buffer): %.2f GB/s\n",
              o.threads, static_cast<long long>(o.bw_bytes >> 20),
              bw_start / 1e9);

  const std::string dir =
      o.model_dir.empty() ? DefaultModelDir(o.preset) : o.model_dir;
  std::unique_ptr<km::Model> model =
      Must(LoadOrSynthesize(o.preset, dir), "--preset");
  const km::ModelConfig& c = model->config();
  if (!o.quant.empty()) return RunQuant(o, *model, bw_start);
  const int64_t bytes = WeightBytesPerToken(*model);
  std::printf(
      "model %s: hidden %lld, %lld layers, %lld heads / %lld KV heads, FFN "
      "%lld, vocab %lld, %.3f B params\n",
      dir.c_str(), (long long)c.hidden_size, (long long)c.num_layers,
      (long long)c.num_heads, (long long)c.num_kv_heads,
      (long long)c.intermediate_size, (long long)c.vocab_size,
      km::ParameterCount(c) / 1e9);
  const int64_t max_prompt = std::min<int64_t>(c.max_positions - 1, 8191);
  if (o.prefill > max_prompt || o.prompt + o.steps + 1 > max_prompt) {
    Die("options",
        kernels::InvalidArgument("prompt too long for the model").ToString());
  }

  kernels::Backend* backend = Must(kernels::DefaultBackend(), "backend");
  backend->SetThreads(o.threads);
  std::unique_ptr<km::Executor> executor =
      Must(km::MakeExecutor(backend), "executor");
  km::EngineOptions eo;
  eo.max_step_rows = std::max<int64_t>(1024, o.prefill);
  eo.max_sequences = std::max<int64_t>(64, o.batch);
  std::unique_ptr<km::Engine> engine =
      Must(km::Engine::Create(*model, executor.get(), eo), "Engine::Create");
  const EngineReference ref = EngineGreedy(*engine);
  std::printf("LayerProof backend: %s\n", std::string(backend->name()).c_str());
  std::printf("OpenBLAS: %s (%s); OPENBLAS_CORETYPE %s, OPENBLAS_L2_SIZE %s\n",
              openblas_get_corename(), openblas_get_config(),
              std::getenv("OPENBLAS_CORETYPE")
                  ? std::getenv("OPENBLAS_CORETYPE")
                  : "unset",
              std::getenv("OPENBLAS_L2_SIZE") ? std::getenv("OPENBLAS_L2_SIZE")
                                              : "unset");
  std::fflush(stdout);
  openblas_set_num_threads(o.threads);
  const int64_t peer_context = std::max(o.prefill, o.prompt + o.steps + 1) +
                               kSanityPrompt + kSanityTokens;
  std::unique_ptr<OpenblasLlama> peer = Must(
      OpenblasLlama::Create(*model, static_cast<int>(o.batch), peer_context),
      "OpenblasLlama::Create");
  CheckPeer(*peer, ref);
  LetOpenblasSettle();
  const int64_t peer_bytes = peer->WeightBytesPerToken();

  // Each workload alternates the two contenders, repetition by repetition.
  Rates lp_b1, ob_b1, lp_bn, ob_bn, lp_pre, ob_pre;
  Alternate(
      o, [&](int rep) { return EngineDecodeOnce(*engine, o, 1, rep); }, &lp_b1,
      [&](int rep) { return PeerDecodeOnce(*peer, o, 1, rep); }, &ob_b1);
  const MatmulRates lp_mm = EngineMatmulsOnly(*model, *executor, o);
  Alternate(
      o, [&](int rep) { return EngineDecodeOnce(*engine, o, o.batch, rep); },
      &lp_bn, [&](int rep) { return PeerDecodeOnce(*peer, o, o.batch, rep); },
      &ob_bn);
  Alternate(
      o, [&](int rep) { return EnginePrefillOnce(*engine, o, rep); }, &lp_pre,
      [&](int rep) { return PeerPrefillOnce(*peer, o, rep); }, &ob_pre);
  const bool executor_on_host = executor->host_memory();
  peer.reset();
  engine.reset();
  executor.reset();

  const double bw_end =
      MeasureReadBandwidth(o.threads, o.bw_bytes, o.bw_passes);
  const double bw = std::max(bw_start, bw_end);
  const double roof = bw / bytes, peer_roof = bw / peer_bytes;
  const double flops = PrefillFlops(c, o.prefill);

  std::printf("\nload average at end: %s\n", LoadAverage().c_str());
  std::printf(
      "read bandwidth: %.2f GB/s at start, %.2f GB/s at end; best %.2f GB/s "
      "is the roofline's\n",
      bw_start / 1e9, bw_end / 1e9, bw / 1e9);
  std::printf(
      "weights read per decode step: %.1f MB bf16 (LayerProof), %.1f MB fp32 "
      "(OpenBLAS): every layer matrix, the norms and the LM head; not the "
      "embedding row or the KV cache\n",
      bytes / 1e6, peer_bytes / 1e6);
  std::printf(
      "decode roofline: %.2f tokens/s (LayerProof), %.2f tokens/s (OpenBLAS) "
      "at batch 1; x%lld at batch %lld (one weight pass per step)\n\n",
      roof, peer_roof, (long long)o.batch, (long long)o.batch);
  const int64_t llc = layerproof::bench::LastLevelCacheBytes();
  const bool cached = llc > 0 && bytes < 2 * llc;
  if (cached) {
    std::printf(
        "NOTE: the weights (%.1f MB) are under twice the last-level cache "
        "(%.1f MB), so decode partly runs from cache and the DRAM roofline "
        "does not bound it; use --preset medium for roofline figures\n\n",
        bytes / 1e6, llc / 1e6);
  }

  const std::string lp_name =
      "LayerProof (" + std::string(backend->name()) + ", bf16)";
  const std::string ob_name = "OpenBLAS (fp32)";
  const std::string b1 = "decode, batch 1";
  const std::string bn = "decode, batch " + std::to_string(o.batch);
  const std::string pre = "prefill " + std::to_string(o.prefill);
  std::printf(
      "| workload | contender | tokens/s (best) | tokens/s (median) | of "
      "roofline (best) | LayerProof / OpenBLAS (best / median) |\n");
  std::printf("|---|---|---|---|---|---|\n");
  const bool host = executor_on_host;
  Row(b1.c_str(), lp_name, lp_b1, Percent(lp_b1.best(), roof, host),
      Ratio(lp_b1, ob_b1));
  Row(b1.c_str(), ob_name, ob_b1, Percent(ob_b1.best(), peer_roof), "—");
  Row(bn.c_str(), lp_name, lp_bn, Percent(lp_bn.best(), roof * o.batch, host),
      Ratio(lp_bn, ob_bn));
  Row(bn.c_str(), ob_name, ob_bn, Percent(ob_bn.best(), peer_roof * o.batch),
      "—");
  Row(pre.c_str(), lp_name, lp_pre, Gflops(lp_pre.best(), flops, o.prefill),
      Ratio(lp_pre, ob_pre));
  Row(pre.c_str(), ob_name, ob_pre, Gflops(ob_pre.best(), flops, o.prefill),
      "—");
  const double b1_share = lp_b1.best() / roof;
  const double gemv_share = lp_b1.best() / lp_mm.b1.best();
  std::printf(
      "\ndecode batch 1: LayerProof at %.0f%% of the roofline (target >= "
      "70%%: %s)\n",
      100 * b1_share,
      !host             ? "not applicable: device memory"
      : cached          ? "not applicable, see NOTE"
      : b1_share >= 0.7 ? "met"
                        : "NOT met");
  std::printf(
      "diagnostic: LayerProof's matrix products of one decode step alone "
      "(every matrix, no other op): batch 1 %.2f tokens/s = %.0f%% of the "
      "roofline, decode batch 1 runs at %.0f%% of that; batch %lld %.2f "
      "tokens/s = %.0f%% of its roofline, decode batch %lld runs at %.0f%% "
      "of that\n",
      lp_mm.b1.best(), 100 * lp_mm.b1.best() / roof, 100 * gemv_share,
      (long long)o.batch, lp_mm.bn.best(),
      100 * lp_mm.bn.best() / (roof * o.batch), (long long)o.batch,
      100 * lp_bn.best() / lp_mm.bn.best());
  std::printf(
      "prefill GFLOP/s count 2 x multiply-adds of the layer matrices, causal "
      "attention and the LM head on the last row (%.1f GFLOP per prompt)\n",
      flops / 1e9);
  return 0;
}

}  // namespace
}  // namespace layerproof::bench

int main(int argc, char** argv) {
  using namespace layerproof::bench;
  return Main<Options>("model_bench", argc, argv, ParseArgs, Usage, Run);
}
