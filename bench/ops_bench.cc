// The x86 fast ops against named peers in the same run.
//
//  * Attention decode (context 2048, 32 query heads, 8 KV heads, head_dim
//    128, fp32 KV cache) through the Backend API, as GB/s of K + V bytes,
//    against a streaming read of a buffer at the same thread count. "hot"
//    reuses one 16 MiB KV cache (cache resident); "cold" cycles through 128
//    layers' caches (2 GiB, far beyond the LLC), as a real decode step does.
//    "AttentionDecodeTasks" calls the IsaOps entry directly with tasks of
//    whole GQA groups (one KV head per task, or the row cut into one task
//    per thread), to show what CpuBackend's one-task-per-query-head cutting
//    costs: there every KV head's cache is read once per query head.
//  * Attention prefill of 512 tokens, same heads, in GFLOP/s (2 flops per
//    multiply-add of the scores and of p . V), through the Backend API and
//    with one IsaOps task per query row.
//  * Deterministic expf: ExpF16 / ExpF8 and scalar detmath::ExpF against
//    glibc expf in a plain loop (the compiler does not vectorise it without
//    -ffast-math, which the contract forbids) and glibc's own vector expf
//    (libmvec, what -ffast-math would call), and through Softmax and SwiGlu.
//  * RmsNorm, Softmax and SwiGlu at model sizes against the ref backend.
//
// Run: build/bench/ops_bench --benchmark_repetitions=5
//        --benchmark_report_aggregates_only=true
// and read the min (best) and median aggregates; see BENCHMARKS.md.
// x86-64 only: elsewhere it registers nothing.
#include <benchmark/benchmark.h>

#if defined(__x86_64__)
#include <dlfcn.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cpu/internal/exp_avx2.h"
#include "kernels/cpu/internal/exp_avx512.h"
#include "kernels/cpu/internal/isa_ops.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/dispatch.h"
#include "kernels/fp_env.h"
#include "kernels/ref/det_math.h"

namespace layerproof::kernels {
namespace {

// ------------------------------------------------------------- helpers ----

Backend* Get(BackendKind kind) {
  auto b = GetBackend(kind);
  return b.ok() ? *b : nullptr;
}

// Deterministic pseudo-random floats in [lo, hi), fast enough for GiBs.
void Fill(float* p, int64_t n, float lo, float hi, uint32_t seed) {
  uint32_t x = seed | 1u;
  const float scale = (hi - lo) / 4294967296.0f;
  for (int64_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    p[i] = lo + static_cast<float>(x) * scale;
  }
}

std::unique_ptr<float[]> NewFloats(int64_t n, float lo, float hi,
                                   uint32_t seed) {
  std::unique_ptr<float[]> p(new float[static_cast<size_t>(n)]);
  Fill(p.get(), n, lo, hi, seed);
  return p;
}

void AddStatistics(benchmark::internal::Benchmark* b) {
  b->ComputeStatistics("min", [](const std::vector<double>& v) {
    return *std::min_element(v.begin(), v.end());
  });
  b->ComputeStatistics("max", [](const std::vector<double>& v) {
    return *std::max_element(v.begin(), v.end());
  });
}

// Sets the "GB/s" counter (10^9 bytes per second of wall time).
void ReportGBps(benchmark::State& state, double bytes_per_iteration) {
  state.counters["GB/s"] = benchmark::Counter(
      bytes_per_iteration * static_cast<double>(state.iterations()) / 1e9,
      benchmark::Counter::kIsRate);
}

// -------------------------------------------------- attention decode ------

constexpr int64_t kCtx = 2048;
constexpr int64_t kHeads = 32;
constexpr int64_t kKvHeads = 8;
constexpr int64_t kHeadDim = 128;
constexpr int64_t kKvFloats = kCtx * kKvHeads * kHeadDim;  // one of K or V
constexpr double kKvBytes = 2.0 * kKvFloats * sizeof(float);
// Layers in the cold pool: 128 x 16 MiB = 2 GiB.
constexpr int kColdLayers = 128;

// `layers` KV caches, K then V for each, back to back.
struct KvPool {
  explicit KvPool(int layers)
      : layers(layers), data(NewFloats(2 * kKvFloats * layers, -1, 1, 7)) {}
  const float* K(int l) const { return data.get() + 2 * kKvFloats * l; }
  const float* V(int l) const { return K(l) + kKvFloats; }
  int64_t floats() const { return 2 * kKvFloats * layers; }

  int layers;
  std::unique_ptr<float[]> data;
};

// Built on first use and kept for the process.
const KvPool& Pool(bool cold) {
  if (cold) {
    static const KvPool* pool = new KvPool(kColdLayers);
    return *pool;
  }
  static const KvPool* pool = new KvPool(1);
  return *pool;
}

AttentionArgs DecodeArgs(const float* q, float* out) {
  AttentionArgs a;
  a.q = q;
  a.out = out;
  a.nq = 1;
  a.q_pos0 = kCtx - 1;
  a.n_kv = kCtx;
  a.n_heads = kHeads;
  a.n_kv_heads = kKvHeads;
  a.head_dim = kHeadDim;
  return a;
}

void BM_AttentionDecode(benchmark::State& state, BackendKind kind, int threads,
                        bool cold) {
  Backend* b = Get(kind);
  if (b == nullptr) return state.SkipWithError("backend unavailable");
  b->SetThreads(threads);
  const KvPool& pool = Pool(cold);
  auto q = NewFloats(kHeads * kHeadDim, -1, 1, 3);
  std::vector<float> out(kHeads * kHeadDim);
  AttentionArgs a = DecodeArgs(q.get(), out.data());
  int layer = 0;
  for (auto _ : state) {
    a.k = pool.K(layer);
    a.v = pool.V(layer);
    if (!b->Attention(a).ok()) return state.SkipWithError("Attention failed");
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
    layer = (layer + 1) % pool.layers;
  }
  ReportGBps(state, kKvBytes);
}

// The IsaOps entry called directly, with `heads_per_task` query heads (whole
// GQA groups) per task.
void BM_AttentionDecodeTasks(benchmark::State& state, BackendKind kind,
                             int threads, bool cold, int64_t heads_per_task) {
  if (Get(kind) == nullptr) return state.SkipWithError("backend unavailable");
  const cpu::IsaOps& ops =
      kind == BackendKind::kAvx512 ? cpu::Avx512Ops() : cpu::Avx2Ops();
  cpu::ThreadPool workers(threads);
  std::vector<std::vector<float>> scratch(threads, std::vector<float>(kCtx));
  const KvPool& pool = Pool(cold);
  auto q = NewFloats(kHeads * kHeadDim, -1, 1, 3);
  std::vector<float> out(kHeads * kHeadDim);
  AttentionArgs a = DecodeArgs(q.get(), out.data());
  int layer = 0;
  for (auto _ : state) {
    a.k = pool.K(layer);
    a.v = pool.V(layer);
    workers.ParallelFor(kHeads / heads_per_task, [&](int64_t t, int worker) {
      FpEnvGuard guard;
      ops.attention(a, t * heads_per_task, (t + 1) * heads_per_task,
                    scratch[worker].data());
    });
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
    layer = (layer + 1) % pool.layers;
  }
  ReportGBps(state, kKvBytes);
}

// Prefill of kPrefill tokens (q_pos0 = 0, nq = n_kv), heads_per_task query
// heads per IsaOps call (0: through the Backend API).
constexpr int64_t kPrefill = 512;

void BM_AttentionPrefill(benchmark::State& state, BackendKind kind, int threads,
                         int64_t heads_per_task) {
  Backend* b = Get(kind);
  if (b == nullptr) return state.SkipWithError("backend unavailable");
  b->SetThreads(threads);
  auto q = NewFloats(kPrefill * kHeads * kHeadDim, -1, 1, 3);
  auto k = NewFloats(kPrefill * kKvHeads * kHeadDim, -1, 1, 4);
  auto v = NewFloats(kPrefill * kKvHeads * kHeadDim, -1, 1, 5);
  std::vector<float> out(kPrefill * kHeads * kHeadDim);
  AttentionArgs a = DecodeArgs(q.get(), out.data());
  a.k = k.get();
  a.v = v.get();
  a.nq = kPrefill;
  a.q_pos0 = 0;
  a.n_kv = kPrefill;
  cpu::ThreadPool workers(threads);
  std::vector<std::vector<float>> scratch(threads,
                                          std::vector<float>(kPrefill));
  const cpu::IsaOps& ops =
      kind == BackendKind::kAvx512 ? cpu::Avx512Ops() : cpu::Avx2Ops();
  const int64_t tasks =
      heads_per_task == 0 ? 0 : kPrefill * kHeads / heads_per_task;
  for (auto _ : state) {
    if (tasks == 0) {
      if (!b->Attention(a).ok()) return state.SkipWithError("Attention failed");
    } else {
      workers.ParallelFor(tasks, [&](int64_t t, int worker) {
        FpEnvGuard guard;
        ops.attention(a, t * heads_per_task, (t + 1) * heads_per_task,
                      scratch[worker].data());
      });
    }
    benchmark::DoNotOptimize(out.data());
  }
  // Multiply-adds of the scores and of p . V.
  state.counters["GFLOP/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kPrefill *
                             (kPrefill + 1) / 2 * kHeads * kHeadDim * 4 / 1e9,
                         benchmark::Counter::kIsRate);
}

__attribute__((target("avx512f"))) float SumAvx512(const float* p, int64_t n) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  for (int64_t i = 0; i + 64 <= n; i += 64) {
    s0 = _mm512_add_ps(s0, _mm512_loadu_ps(p + i));
    s1 = _mm512_add_ps(s1, _mm512_loadu_ps(p + i + 16));
    s2 = _mm512_add_ps(s2, _mm512_loadu_ps(p + i + 32));
    s3 = _mm512_add_ps(s3, _mm512_loadu_ps(p + i + 48));
  }
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes,
                  _mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
  float sum = 0.0f;
  for (float f : lanes) sum += f;
  return sum;
}

// The peer: a streaming read (vector sum) of the whole pool, cut into 1 MiB
// blocks over `threads` threads of the same kind of pool as CpuBackend's.
void BM_StreamRead(benchmark::State& state, int threads, bool cold) {
  if (!__builtin_cpu_supports("avx512f")) {
    return state.SkipWithError("no avx512f");
  }
  const KvPool& pool = Pool(cold);
  constexpr int64_t kBlock = 1 << 18;  // floats
  const int64_t blocks = pool.floats() / kBlock;
  std::vector<float> sums(blocks);
  cpu::ThreadPool workers(threads);
  for (auto _ : state) {
    workers.ParallelFor(blocks, [&](int64_t i, int) {
      sums[i] = SumAvx512(pool.data.get() + i * kBlock, kBlock);
    });
    benchmark::DoNotOptimize(sums.data());
  }
  ReportGBps(state, static_cast<double>(pool.floats()) * sizeof(float));
}

// ------------------------------------------------------------- expf ------

constexpr int64_t kExpN = 4096;  // L1-resident

std::unique_ptr<float[]> ExpInputs() {
  // The range softmax feeds exp (x - max <= 0), plus some positive values.
  return NewFloats(kExpN, -30.0f, 5.0f, 11);
}

__attribute__((target("avx512f"))) void ExpLoop16(const float* x, float* y,
                                                  int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    _mm512_storeu_ps(y + i, cpu::ExpF16(_mm512_loadu_ps(x + i)));
  }
}

__attribute__((target("avx2,fma"))) void ExpLoop8(const float* x, float* y,
                                                  int64_t n) {
  for (int64_t i = 0; i < n; i += 8) {
    _mm256_storeu_ps(y + i, cpu::ExpF8(_mm256_loadu_ps(x + i)));
  }
}

// Times `loop(x, y)` over the shared exp inputs; items are elements.
template <typename Loop>
void TimeExp(benchmark::State& state, Loop loop) {
  auto x = ExpInputs();
  std::vector<float> y(kExpN);
  for (auto _ : state) {
    loop(x.get(), y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * kExpN);
}

void BM_ExpF16(benchmark::State& state) {
  if (!__builtin_cpu_supports("avx512f"))
    return state.SkipWithError("no avx512f");
  TimeExp(state, [&](const float* x, float* y) { ExpLoop16(x, y, kExpN); });
}

void BM_ExpF8(benchmark::State& state) {
  if (!__builtin_cpu_supports("avx2")) return state.SkipWithError("no avx2");
  TimeExp(state, [&](const float* x, float* y) { ExpLoop8(x, y, kExpN); });
}

void BM_DetExpScalar(benchmark::State& state) {
  TimeExp(state, [&](const float* x, float* y) {
    for (int64_t i = 0; i < kExpN; ++i) y[i] = detmath::ExpF(x[i]);
  });
}

void BM_GlibcExpf(benchmark::State& state) {
  TimeExp(state, [&](const float* x, float* y) {
    for (int64_t i = 0; i < kExpN; ++i) y[i] = std::exp(x[i]);
  });
}

// glibc's vector expf (libmvec), found at run time: the function GCC calls
// for a vectorised std::exp under -ffast-math.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
using Libmvec16 = __m512 (*)(__m512);
using Libmvec8 = __m256 (*)(__m256);
#pragma GCC diagnostic pop

void* LibmvecSymbol(const char* name) {
  static void* lib = dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL);
  return lib == nullptr ? nullptr : dlsym(lib, name);
}

__attribute__((target("avx512f"))) void LibmvecLoop16(Libmvec16 f,
                                                      const float* x, float* y,
                                                      int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    _mm512_storeu_ps(y + i, f(_mm512_loadu_ps(x + i)));
  }
}

__attribute__((target("avx2,fma"))) void LibmvecLoop8(Libmvec8 f,
                                                      const float* x, float* y,
                                                      int64_t n) {
  for (int64_t i = 0; i < n; i += 8) {
    _mm256_storeu_ps(y + i, f(_mm256_loadu_ps(x + i)));
  }
}

void BM_LibmvecExpf16(benchmark::State& state) {
  auto f = reinterpret_cast<Libmvec16>(LibmvecSymbol("_ZGVeN16v_expf"));
  if (f == nullptr || !__builtin_cpu_supports("avx512f")) {
    return state.SkipWithError("libmvec avx512 expf unavailable");
  }
  TimeExp(state,
          [&](const float* x, float* y) { LibmvecLoop16(f, x, y, kExpN); });
}

void BM_LibmvecExpf8(benchmark::State& state) {
  auto f = reinterpret_cast<Libmvec8>(LibmvecSymbol("_ZGVdN8v_expf"));
  if (f == nullptr || !__builtin_cpu_supports("avx2")) {
    return state.SkipWithError("libmvec avx2 expf unavailable");
  }
  TimeExp(state,
          [&](const float* x, float* y) { LibmvecLoop8(f, x, y, kExpN); });
}

// ------------------------------------------------ ops vs the ref backend ---

void BM_Softmax(benchmark::State& state, BackendKind kind, int64_t rows,
                int64_t n) {
  Backend* b = Get(kind);
  if (b == nullptr) return state.SkipWithError("backend unavailable");
  b->SetThreads(1);
  auto x = NewFloats(rows * n, -10.0f, 10.0f, 5);
  std::vector<float> y(rows * n);
  for (auto _ : state) {
    if (!b->Softmax(x.get(), rows, n, y.data()).ok()) {
      return state.SkipWithError("Softmax failed");
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * rows * n);
}

void BM_SwiGlu(benchmark::State& state, BackendKind kind, int64_t n) {
  Backend* b = Get(kind);
  if (b == nullptr) return state.SkipWithError("backend unavailable");
  b->SetThreads(1);
  auto gate = NewFloats(n, -8.0f, 8.0f, 5);
  auto up = NewFloats(n, -1.0f, 1.0f, 6);
  std::vector<float> y(n);
  for (auto _ : state) {
    if (!b->SwiGlu(gate.get(), up.get(), n, y.data()).ok()) {
      return state.SkipWithError("SwiGlu failed");
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_RmsNorm(benchmark::State& state, BackendKind kind, int64_t rows,
                int64_t dim) {
  Backend* b = Get(kind);
  if (b == nullptr) return state.SkipWithError("backend unavailable");
  b->SetThreads(1);
  auto x = NewFloats(rows * dim, -2.0f, 2.0f, 5);
  auto g = NewFloats(dim, 0.5f, 1.5f, 6);
  std::vector<float> y(rows * dim);
  const WeightView gamma = {g.get(), DType::kF32, 1, dim};
  for (auto _ : state) {
    if (!b->RmsNorm(x.get(), rows, dim, gamma, 1e-5f, y.data()).ok()) {
      return state.SkipWithError("RmsNorm failed");
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * rows * dim);
}

void RegisterAll() {
  using benchmark::RegisterBenchmark;
  const BackendKind fast[] = {BackendKind::kAvx512, BackendKind::kAvx2};
  for (bool cold : {false, true}) {
    const std::string temp = cold ? "cold" : "hot";
    for (int threads : {1, 2}) {
      const std::string suffix = temp + "/threads:" + std::to_string(threads);
      AddStatistics(RegisterBenchmark(("StreamRead/" + suffix).c_str(),
                                      BM_StreamRead, threads, cold)
                        ->UseRealTime());
      for (BackendKind kind : fast) {
        const std::string name(BackendName(kind));
        AddStatistics(RegisterBenchmark(
                          ("AttentionDecode/" + name + "/" + suffix).c_str(),
                          BM_AttentionDecode, kind, threads, cold)
                          ->UseRealTime());
        for (int64_t heads : {kHeads / kKvHeads, kHeads / threads}) {
          AddStatistics(RegisterBenchmark(
                            ("AttentionDecodeTasks/" + name + "/" + temp +
                             "/heads_per_task:" + std::to_string(heads) +
                             "/threads:" + std::to_string(threads))
                                .c_str(),
                            BM_AttentionDecodeTasks, kind, threads, cold, heads)
                            ->UseRealTime());
        }
      }
    }
  }
  for (BackendKind kind : fast) {
    for (int threads : {1, 2}) {
      for (int64_t heads : {int64_t{0}, kHeads}) {
        const std::string name =
            "AttentionPrefill512/" + std::string(BackendName(kind)) +
            (heads == 0 ? std::string("/backend_api")
                        : "/heads_per_task:" + std::to_string(heads)) +
            "/threads:" + std::to_string(threads);
        AddStatistics(RegisterBenchmark(name.c_str(), BM_AttentionPrefill, kind,
                                        threads, heads)
                          ->UseRealTime());
      }
    }
  }
  AddStatistics(RegisterBenchmark("AttentionDecode/ref/hot/threads:1",
                                  BM_AttentionDecode, BackendKind::kRef, 1,
                                  false)
                    ->UseRealTime());

  AddStatistics(RegisterBenchmark("Exp/ExpF16", BM_ExpF16));
  AddStatistics(RegisterBenchmark("Exp/ExpF8", BM_ExpF8));
  AddStatistics(RegisterBenchmark("Exp/detmath_ExpF", BM_DetExpScalar));
  AddStatistics(RegisterBenchmark("Exp/glibc_expf_loop", BM_GlibcExpf));
  AddStatistics(RegisterBenchmark("Exp/libmvec_expf16", BM_LibmvecExpf16));
  AddStatistics(RegisterBenchmark("Exp/libmvec_expf8", BM_LibmvecExpf8));

  for (BackendKind kind :
       {BackendKind::kRef, BackendKind::kAvx2, BackendKind::kAvx512}) {
    const std::string name(BackendName(kind));
    AddStatistics(RegisterBenchmark(("RmsNorm/" + name + "/1x4096").c_str(),
                                    BM_RmsNorm, kind, 1, 4096));
    AddStatistics(RegisterBenchmark(("RmsNorm/" + name + "/64x4096").c_str(),
                                    BM_RmsNorm, kind, 64, 4096));
    AddStatistics(RegisterBenchmark(("Softmax/" + name + "/32x2048").c_str(),
                                    BM_Softmax, kind, 32, 2048));
    AddStatistics(RegisterBenchmark(("Softmax/" + name + "/1x128256").c_str(),
                                    BM_Softmax, kind, 1, 128256));
    AddStatistics(RegisterBenchmark(("SwiGlu/" + name + "/14336").c_str(),
                                    BM_SwiGlu, kind, 14336));
  }
}

}  // namespace
}  // namespace layerproof::kernels

#endif  // defined(__x86_64__)

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
#if defined(__x86_64__)
  layerproof::kernels::RegisterAll();
#endif
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
