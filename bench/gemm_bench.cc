// GEMM/GEMV benchmark: LayerProof's fused-upcast GEMM through the public
// Backend API (dispatch, thread pool and all) against named peers measured in
// the same run:
//  * the read-bandwidth ceiling: an AVX-512 sum over a buffer far larger than
//    the last-level cache, on the same number of threads;
//  * OpenBLAS cblas_sgemv (decode, fp32 weights) and cblas_sgemm (prefill).
// Decode GEMVs rotate over enough weight matrices that together they exceed
// 4x the LLC, so every call streams its weights from DRAM.
//
// Each LayerProof benchmark reports counters relative to its peers (when the
// peer ran earlier in the same process): vs_openblas (speedup: OpenBLAS time /
// our time, same shape) and of_read_bw (our GB/s / the sum's GB/s). A summary
// of the best runs is printed at the end. Run it through scripts/bench.sh:
// old OpenBLAS builds honour OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE, which this
// machine sets to pin slow kernels, so the script unsets them.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <sys/mman.h>

// GCC 12's AVX-512 intrinsics trip -Wuninitialized on their own
// _mm512_undefined_* (GCC PR 105593, fixed in 12.3).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/machine.h"
#include "kernels/backend.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/dispatch.h"
#include "kernels/dtype.h"

namespace layerproof::kernels {
namespace {

using bench::LastLevelCacheBytes;

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------
// Machine facts and buffers.

// Bytes every rotation set (and the bandwidth buffer) must exceed.
int64_t ColdBytes() { return 4 * LastLevelCacheBytes(); }

// 2 MiB-aligned memory, with transparent huge pages requested, for every
// large buffer of every contender alike.
struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
template <typename T>
std::unique_ptr<T[], FreeDeleter> AllocBig(size_t n) {
  const size_t bytes =
      (n * sizeof(T) + (2u << 20) - 1) / (2u << 20) * (2u << 20);
  void* p = std::aligned_alloc(2u << 20, bytes);
  if (p == nullptr) std::abort();
  madvise(p, bytes, MADV_HUGEPAGE);
  return std::unique_ptr<T[], FreeDeleter>(static_cast<T*>(p));
}

std::vector<float> RandomVector(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return v;
}

Backend* LayerproofBackend(BackendKind kind) {
  auto b = GetBackend(kind);
  if (!b.ok()) return nullptr;
  return *b;
}

// ---------------------------------------------------------------------------
// Best results of this process, for the ratios and the summary.

std::map<std::string, double>& Best() {  // key -> best rate
  static auto* best = new std::map<std::string, double>();
  return *best;
}
void RecordBest(const std::string& key, double rate) {
  double& b = Best()[key];
  b = std::max(b, rate);
}
double BestOr0(const std::string& key) {
  auto it = Best().find(key);
  return it == Best().end() ? 0.0 : it->second;
}

std::string ShapeKey(const char* what, int64_t m, int64_t k, int64_t n,
                     int threads) {
  return std::string(what) + "/m" + std::to_string(m) + "/k" +
         std::to_string(k) + "/n" + std::to_string(n) + "/t" +
         std::to_string(threads);
}

// OpenBLAS workers spin for a while after a call; let them settle so they do
// not steal cycles from the next benchmark.
void LetOpenblasSettle() {
  openblas_set_num_threads(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
}

// ---------------------------------------------------------------------------
// Read-bandwidth ceiling.

// The buffer of BM_ReadBandwidth, kept across its runs and freed before the
// GEMV rotation sets are built.
std::unique_ptr<float[], FreeDeleter>& ReadBuffer() {
  static auto* buf = new std::unique_ptr<float[], FreeDeleter>();
  return *buf;
}

// Sums n floats (n a multiple of 16 * streams) as `streams` equal parts read
// side by side, one zmm accumulator each; with prefetch > 0, each cache line
// is also prefetched that many bytes ahead.
template <int kStreams>
__attribute__((target("avx512f"))) float SumAvx512(const float* p, int64_t n,
                                                   int64_t prefetch) {
  const int64_t part = n / kStreams;
  __m512 acc[kStreams];
  for (int s = 0; s < kStreams; ++s) acc[s] = _mm512_setzero_ps();
  for (int64_t i = 0; i < part; i += 16) {
    for (int s = 0; s < kStreams; ++s) {
      const float* q = p + s * part + i;
      if (prefetch > 0) {
        _mm_prefetch(reinterpret_cast<const char*>(q) + prefetch, _MM_HINT_T0);
      }
      acc[s] = _mm512_add_ps(acc[s], _mm512_load_ps(q));
    }
  }
  for (int s = 1; s < kStreams; ++s) acc[0] = _mm512_add_ps(acc[0], acc[s]);
  return _mm512_reduce_add_ps(acc[0]);
}

// Args: threads, streams per thread (1, 4 or 8), software prefetch distance
// in bytes (0: hardware prefetch only). The ceiling the GEMVs are held to is
// the best of these variants.
void BM_ReadBandwidth(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const int64_t streams = state.range(1);
  const int64_t prefetch = state.range(2);
  if (!__builtin_cpu_supports("avx512f")) {
    state.SkipWithError("no AVX-512");
    return;
  }
  const int64_t n = ColdBytes() / 4 / 4096 * 4096;
  auto& buf = ReadBuffer();
  if (buf == nullptr) {
    buf = AllocBig<float>(n);
    for (int64_t i = 0; i < n; ++i) buf[i] = 1.0f;
  }
  const auto sum = streams == 8   ? SumAvx512<8>
                   : streams == 4 ? SumAvx512<4>
                                  : SumAvx512<1>;
  cpu::ThreadPool pool(threads);
  const int64_t per = n / threads / 1024 * 1024;
  std::vector<float> sums(threads);
  const auto t0 = Clock::now();
  for (auto _ : state) {
    pool.ParallelFor(threads, [&](int64_t t, int) {
      sums[t] = sum(buf.get() + t * per, per, prefetch);
    });
    benchmark::DoNotOptimize(sums.data());
  }
  const double sec = std::chrono::duration<double>(Clock::now() - t0).count();
  const double gbps = 4.0 * per * threads * state.iterations() / sec / 1e9;
  RecordBest("readbw/t" + std::to_string(threads), gbps);
  state.counters["GB/s"] = gbps;
  state.counters["buffer_MiB"] = 4.0 * n / (1 << 20);
}

// ---------------------------------------------------------------------------
// Decode GEMV over a rotation of weight matrices.

// The weights of the current GEMV benchmark; rebuilt when the shape, dtype or
// contender changes, so only one large set is alive at a time.
struct GemvSet {
  std::string key;
  int64_t k = 0, n = 0;
  std::vector<std::unique_ptr<PackedWeights>> packed;       // ours
  std::vector<std::unique_ptr<float[], FreeDeleter>> fp32;  // OpenBLAS
  std::vector<float> x, y;
};

GemvSet& CurrentGemvSet() {
  static auto* set = new GemvSet();
  return *set;
}

int64_t RotationCount(int64_t bytes_each) {
  return std::max<int64_t>(2, (ColdBytes() + bytes_each - 1) / bytes_each + 1);
}

// W[n][k] stored as `dtype`. Block formats get random quants with sane fp16
// scales: their kernels' timing does not depend on the values.
std::vector<unsigned char> StoreWeights(const std::vector<float>& w, int64_t n,
                                        int64_t k, DType dtype) {
  if (!IsBlockQuantized(dtype)) return EncodeWeights(w, dtype);
  std::vector<unsigned char> stored(size_t(n * RowBytes(dtype, k)));
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (auto& b : stored) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    b = uint8_t(state >> 56);
  }
  const uint16_t scale = FloatToF16(0.01f);
  const size_t d_at = dtype == DType::kQ6_K ? 208 : 0;
  const size_t dmin_at = dtype == DType::kQ4_K ? 2 : d_at;
  for (size_t off = 0; off < stored.size(); off += size_t(BlockBytes(dtype))) {
    std::memcpy(&stored[off + d_at], &scale, 2);
    std::memcpy(&stored[off + dmin_at], &scale, 2);
  }
  return stored;
}

double WeightBytes(int64_t k, int64_t n, DType dtype) {
  return double(n) * double(RowBytes(dtype, k));
}

// Ours: `dtype` weights packed by `kind`, or the OpenBLAS fp32 set.
GemvSet& BuildGemvSet(const std::string& key, int64_t k, int64_t n,
                      Backend* backend, DType dtype) {
  GemvSet& s = CurrentGemvSet();
  if (s.key == key) return s;
  ReadBuffer().reset();
  s = GemvSet();
  s.key = key;
  s.k = k;
  s.n = n;
  s.x = RandomVector(k, 7);
  s.y.assign(n, 0.0f);
  const std::vector<float> w = RandomVector(k * n, 11);
  if (backend == nullptr) {
    const int64_t count = RotationCount(k * n * 4);
    for (int64_t i = 0; i < count; ++i) {
      s.fp32.push_back(AllocBig<float>(k * n));
      std::memcpy(s.fp32.back().get(), w.data(), k * n * 4);
    }
    return s;
  }
  const std::vector<unsigned char> stored = StoreWeights(w, n, k, dtype);
  const WeightView view{stored.data(), dtype, n, k};
  const int64_t count = RotationCount(int64_t(WeightBytes(k, n, dtype)));
  for (int64_t i = 0; i < count; ++i) {
    auto p = backend->PackWeights(view);
    if (!p.ok()) std::abort();
    s.packed.push_back(std::move(*p));
  }
  return s;
}

// Args: k, n, threads, backend kind, dtype.
void BM_LayerproofGemv(benchmark::State& state) {
  const int64_t k = state.range(0), n = state.range(1);
  const int threads = static_cast<int>(state.range(2));
  const auto kind = static_cast<BackendKind>(state.range(3));
  const auto dtype = static_cast<DType>(state.range(4));
  Backend* backend = LayerproofBackend(kind);
  if (backend == nullptr) {
    state.SkipWithError("backend not available");
    return;
  }
  const std::string set_key = std::string(BackendName(kind)) + "/" +
                              std::string(DTypeName(dtype)) + "/" +
                              std::to_string(k) + "x" + std::to_string(n);
  GemvSet& s = BuildGemvSet(set_key, k, n, backend, dtype);
  backend->SetThreads(threads);
  const double bytes = WeightBytes(k, n, dtype) + 4.0 * k;
  size_t i = 0;
  const auto t0 = Clock::now();
  for (auto _ : state) {
    if (!backend->Gemm(s.x.data(), 1, *s.packed[i], nullptr, s.y.data()).ok()) {
      state.SkipWithError("Gemm failed");
      break;
    }
    if (++i == s.packed.size()) i = 0;
  }
  const double sec = std::chrono::duration<double>(Clock::now() - t0).count();
  const double per_call = sec / state.iterations();
  const double gbps = bytes / per_call / 1e9;
  const std::string name = "lp_gemv_" + std::string(BackendName(kind)) + "_" +
                           std::string(DTypeName(dtype));
  RecordBest(ShapeKey(name.c_str(), 1, k, n, threads), 1.0 / per_call);
  state.counters["GB/s"] = gbps;
  state.counters["matrices"] = double(s.packed.size());
  const double blas = BestOr0(ShapeKey("sgemv", 1, k, n, threads));
  if (blas > 0) state.counters["vs_openblas"] = (1.0 / per_call) / blas;
  const double bw = BestOr0("readbw/t" + std::to_string(threads));
  if (bw > 0) state.counters["of_read_bw"] = gbps / bw;
}

// Args: k, n, threads.
void BM_OpenblasSgemv(benchmark::State& state) {
  const int64_t k = state.range(0), n = state.range(1);
  const int threads = static_cast<int>(state.range(2));
  GemvSet& s = BuildGemvSet(
      "openblas/f32/" + std::to_string(k) + "x" + std::to_string(n), k, n,
      nullptr, DType::kF32);
  openblas_set_num_threads(threads);
  size_t i = 0;
  const auto t0 = Clock::now();
  for (auto _ : state) {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(n),
                static_cast<int>(k), 1.0f, s.fp32[i].get(), static_cast<int>(k),
                s.x.data(), 1, 0.0f, s.y.data(), 1);
    benchmark::ClobberMemory();
    if (++i == s.fp32.size()) i = 0;
  }
  const double sec = std::chrono::duration<double>(Clock::now() - t0).count();
  const double per_call = sec / state.iterations();
  RecordBest(ShapeKey("sgemv", 1, k, n, threads), 1.0 / per_call);
  state.counters["GB/s"] = (4.0 * k * n + 4.0 * k) / per_call / 1e9;
  state.counters["matrices"] = double(s.fp32.size());
  LetOpenblasSettle();
}

// ---------------------------------------------------------------------------
// Prefill GEMM (compute-bound; one weight matrix).

struct GemmData {
  std::vector<float> x, w, y;
};
GemmData& PrefillData(int64_t m, int64_t k, int64_t n) {
  static auto* d = new GemmData();
  if (d->x.size() != size_t(m * k) || d->w.size() != size_t(k * n)) {
    d->x = RandomVector(m * k, 3);
    d->w = RandomVector(k * n, 5);
    d->y.assign(m * n, 0.0f);
  }
  return *d;
}

// Args: m, k, n, threads, backend kind, dtype.
void BM_LayerproofGemm(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  const auto kind = static_cast<BackendKind>(state.range(4));
  const auto dtype = static_cast<DType>(state.range(5));
  Backend* backend = LayerproofBackend(kind);
  if (backend == nullptr) {
    state.SkipWithError("backend not available");
    return;
  }
  GemmData& d = PrefillData(m, k, n);
  const std::vector<unsigned char> stored = StoreWeights(d.w, n, k, dtype);
  auto packed = backend->PackWeights({stored.data(), dtype, n, k});
  if (!packed.ok()) std::abort();
  backend->SetThreads(threads);
  const auto t0 = Clock::now();
  for (auto _ : state) {
    if (!backend->Gemm(d.x.data(), m, **packed, nullptr, d.y.data()).ok()) {
      state.SkipWithError("Gemm failed");
      break;
    }
  }
  const double sec = std::chrono::duration<double>(Clock::now() - t0).count();
  const double gflops = 2.0 * m * k * n * state.iterations() / sec / 1e9;
  const std::string name = "lp_gemm_" + std::string(BackendName(kind)) + "_" +
                           std::string(DTypeName(dtype));
  RecordBest(ShapeKey(name.c_str(), m, k, n, threads), gflops);
  state.counters["GFLOP/s"] = gflops;
  const double blas = BestOr0(ShapeKey("sgemm", m, k, n, threads));
  if (blas > 0) state.counters["vs_openblas"] = gflops / blas;
}

// Args: m, k, n, threads.
void BM_OpenblasSgemm(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  GemmData& d = PrefillData(m, k, n);
  openblas_set_num_threads(threads);
  const auto t0 = Clock::now();
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m),
                static_cast<int>(n), static_cast<int>(k), 1.0f, d.x.data(),
                static_cast<int>(k), d.w.data(), static_cast<int>(k), 0.0f,
                d.y.data(), static_cast<int>(n));
    benchmark::ClobberMemory();
  }
  const double sec = std::chrono::duration<double>(Clock::now() - t0).count();
  const double gflops = 2.0 * m * k * n * state.iterations() / sec / 1e9;
  RecordBest(ShapeKey("sgemm", m, k, n, threads), gflops);
  state.counters["GFLOP/s"] = gflops;
  LetOpenblasSettle();
}

constexpr int64_t kAvx512 = static_cast<int64_t>(BackendKind::kAvx512);
constexpr int64_t kAvx2 = static_cast<int64_t>(BackendKind::kAvx2);
constexpr int64_t kBf16 = static_cast<int64_t>(DType::kBF16);
constexpr int64_t kF16 = static_cast<int64_t>(DType::kF16);
constexpr int64_t kF32 = static_cast<int64_t>(DType::kF32);
constexpr int64_t kQ8_0 = static_cast<int64_t>(DType::kQ8_0);
constexpr int64_t kQ4_0 = static_cast<int64_t>(DType::kQ4_0);
constexpr int64_t kQ4_K = static_cast<int64_t>(DType::kQ4_K);

// Decode shapes: Llama-3-8B q/o_proj, gate/up_proj and down_proj.
constexpr int64_t kGemvShapes[][2] = {
    {4096, 4096}, {4096, 14336}, {14336, 4096}};

void RegisterAll() {
  for (int t : {1, 2}) {
    for (int64_t streams : {1, 4, 8}) {
      for (int64_t prefetch : {0, 2048}) {
        benchmark::RegisterBenchmark("BM_ReadBandwidth", BM_ReadBandwidth)
            ->Args({t, streams, prefetch})
            ->ArgNames({"threads", "streams", "prefetch"})
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  for (const auto& s : kGemvShapes) {
    for (int t : {1, 2}) {
      benchmark::RegisterBenchmark("BM_OpenblasSgemv", BM_OpenblasSgemv)
          ->Args({s[0], s[1], t})
          ->ArgNames({"k", "n", "threads"})
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
    for (int t : {1, 2}) {
      benchmark::RegisterBenchmark("BM_LayerproofGemv", BM_LayerproofGemv)
          ->Args({s[0], s[1], t, kAvx512, kBf16})
          ->ArgNames({"k", "n", "threads", "isa", "dtype"})
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  // Block-quantized weights (docs/determinism.md §3.12) on the same shapes.
  for (const auto& s : kGemvShapes) {
    for (int64_t dt : {kQ8_0, kQ4_0, kQ4_K}) {
      for (int t : {1, 2}) {
        benchmark::RegisterBenchmark("BM_LayerproofGemv", BM_LayerproofGemv)
            ->Args({s[0], s[1], t, kAvx512, dt})
            ->ArgNames({"k", "n", "threads", "isa", "dtype"})
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  // For information: the other stored formats and the AVX2 backend.
  for (int64_t dt : {kF16, kF32}) {
    for (int t : {1, 2}) {
      benchmark::RegisterBenchmark("BM_LayerproofGemv", BM_LayerproofGemv)
          ->Args({4096, 4096, t, kAvx512, dt})
          ->ArgNames({"k", "n", "threads", "isa", "dtype"})
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  for (int t : {1, 2}) {
    benchmark::RegisterBenchmark("BM_LayerproofGemv", BM_LayerproofGemv)
        ->Args({4096, 4096, t, kAvx2, kBf16})
        ->ArgNames({"k", "n", "threads", "isa", "dtype"})
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  for (int t : {1, 2}) {
    benchmark::RegisterBenchmark("BM_OpenblasSgemm", BM_OpenblasSgemm)
        ->Args({512, 4096, 4096, t})
        ->ArgNames({"m", "k", "n", "threads"})
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    for (int64_t isa : {kAvx512, kAvx2}) {
      benchmark::RegisterBenchmark("BM_LayerproofGemm", BM_LayerproofGemm)
          ->Args({512, 4096, 4096, t, isa, kBf16})
          ->ArgNames({"m", "k", "n", "threads", "isa", "dtype"})
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
    for (int64_t dt : {kQ8_0, kQ4_0, kQ4_K}) {
      benchmark::RegisterBenchmark("BM_LayerproofGemm", BM_LayerproofGemm)
          ->Args({512, 4096, 4096, t, kAvx512, dt})
          ->ArgNames({"m", "k", "n", "threads", "isa", "dtype"})
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
}

// One line per target with its ratio, from the best run of each benchmark.
void PrintSummary() {
  std::printf(
      "\n== summary: best run of each benchmark in this process; skipped "
      "benchmarks are left out ==\n");
  for (int t : {1, 2}) {
    const double bw = BestOr0("readbw/t" + std::to_string(t));
    if (bw > 0) {
      std::printf(
          "read bandwidth (best sum variant), %d thread(s): %.2f GB/s\n", t,
          bw);
    }
  }
  for (const auto& s : kGemvShapes) {
    for (int t : {1, 2}) {
      const double ours =
          BestOr0(ShapeKey("lp_gemv_avx512_BF16", 1, s[0], s[1], t));
      if (ours == 0) continue;
      const double blas = BestOr0(ShapeKey("sgemv", 1, s[0], s[1], t));
      const double bw = BestOr0("readbw/t" + std::to_string(t));
      const double gbps = ours * (2.0 * s[0] * s[1] + 4.0 * s[0]) / 1e9;
      std::printf(
          "decode k=%-5lld n=%-5lld t=%d: avx512 bf16 %.2f GB/s = %.0f%% of "
          "read bw (target >= 90%%); %.2fx the speed of OpenBLAS sgemv fp32 "
          "(target >= 1.5x; sgemv %.2f GB/s)\n",
          static_cast<long long>(s[0]), static_cast<long long>(s[1]), t, gbps,
          bw > 0 ? 100 * gbps / bw : 0.0, blas > 0 ? ours / blas : 0.0,
          blas * (4.0 * s[0] * s[1] + 4.0 * s[0]) / 1e9);
    }
  }
  // Quantized GEMV: time against bf16's on the same shape (targets: Q4_0
  // <= 0.55x, Q8_0 <= 0.65x, Q4_K within 10% of Q4_0) and share of the read
  // bandwidth of the quantized bytes.
  for (const auto& s : kGemvShapes) {
    for (int t : {1, 2}) {
      const double bf16 =
          BestOr0(ShapeKey("lp_gemv_avx512_BF16", 1, s[0], s[1], t));
      const double bw = BestOr0("readbw/t" + std::to_string(t));
      for (DType dt : {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K}) {
        const std::string name = "lp_gemv_avx512_" + std::string(DTypeName(dt));
        const double ours = BestOr0(ShapeKey(name.c_str(), 1, s[0], s[1], t));
        if (ours == 0 || bf16 == 0) continue;
        const double gbps =
            ours * (WeightBytes(s[0], s[1], dt) + 4.0 * s[0]) / 1e9;
        std::printf(
            "decode k=%-5lld n=%-5lld t=%d: %-4s %.3f ms = %.2fx the time of "
            "bf16 (%.3f ms); %.2f GB/s = %.0f%% of read bw\n",
            static_cast<long long>(s[0]), static_cast<long long>(s[1]), t,
            std::string(DTypeName(dt)).c_str(), 1e3 / ours, bf16 / ours,
            1e3 / bf16, gbps, bw > 0 ? 100 * gbps / bw : 0.0);
      }
    }
  }
  for (int t : {1, 2}) {
    const double bf16 =
        BestOr0(ShapeKey("lp_gemm_avx512_BF16", 512, 4096, 4096, t));
    const double blas = BestOr0(ShapeKey("sgemm", 512, 4096, 4096, t));
    for (DType dt : {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K}) {
      const std::string name = "lp_gemm_avx512_" + std::string(DTypeName(dt));
      const double ours = BestOr0(ShapeKey(name.c_str(), 512, 4096, 4096, t));
      if (ours == 0) continue;
      std::printf(
          "prefill m=512 k=n=4096 t=%d: %-4s %.1f GFLOP/s = %.2fx avx512 bf16 "
          "and %.2fx OpenBLAS sgemm (targets >= 1.5x both)\n",
          t, std::string(DTypeName(dt)).c_str(), ours,
          bf16 > 0 ? ours / bf16 : 0.0, blas > 0 ? ours / blas : 0.0);
    }
  }
  for (int t : {1, 2}) {
    const double ours =
        BestOr0(ShapeKey("lp_gemm_avx512_BF16", 512, 4096, 4096, t));
    if (ours == 0) continue;
    const double avx2 =
        BestOr0(ShapeKey("lp_gemm_avx2_BF16", 512, 4096, 4096, t));
    const double blas = BestOr0(ShapeKey("sgemm", 512, 4096, 4096, t));
    std::printf(
        "prefill m=512 k=n=4096 t=%d: avx512 bf16 %.1f GFLOP/s = %.2fx "
        "OpenBLAS sgemm %.1f GFLOP/s (target >= 0.75x); avx2 %.1f GFLOP/s\n",
        t, ours, blas > 0 ? ours / blas : 0.0, blas, avx2);
  }
}

}  // namespace
}  // namespace layerproof::kernels

int main(int argc, char** argv) {
  using namespace layerproof::kernels;  // NOLINT(build/namespaces)
  benchmark::AddCustomContext("openblas_corename", openblas_get_corename());
  benchmark::AddCustomContext("openblas_config", openblas_get_config());
  for (const char* var : {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"}) {
    const char* v = std::getenv(var);
    benchmark::AddCustomContext(var, v == nullptr ? "(unset)" : v);
  }
  benchmark::AddCustomContext(
      "llc_bytes", std::to_string(layerproof::bench::LastLevelCacheBytes()));
  benchmark::AddCustomContext("cold_set_bytes", std::to_string(ColdBytes()));
  RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  PrintSummary();
  return 0;
}
