// The memory roofline's ceiling: streaming read bandwidth of this machine,
// measured in the benchmark's own process at its own thread count.
//
// Each of `threads` threads sums its equal slice of one buffer far larger
// than the last-level cache with a plain loop (four 16-byte integer vector
// accumulators per 64-byte line, so neither FP latency nor the ISA limits
// it); the result is the best of several passes. Header-only, for bench/.
// Thread safety: MeasureReadBandwidth starts and joins its own threads; do
// not run it beside other timed work.
#ifndef LAYERPROOF_BENCH_MEMORY_BANDWIDTH_H_
#define LAYERPROOF_BENCH_MEMORY_BANDWIDTH_H_

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace layerproof::bench {

// 2 MiB-aligned memory with transparent huge pages requested; released with
// std::free.
inline void* AllocHugeAligned(size_t bytes) {
  const size_t rounded = (bytes + (2u << 20) - 1) / (2u << 20) * (2u << 20);
  void* p = std::aligned_alloc(2u << 20, rounded == 0 ? (2u << 20) : rounded);
  if (p == nullptr) std::abort();
  madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// Sums `words` uint64 words (a multiple of 8) at p, one cache line per
// iteration.
inline uint64_t SumWords(const uint64_t* p, int64_t words) {
  typedef uint64_t V2 __attribute__((vector_size(16), aligned(16)));
  const V2* v = reinterpret_cast<const V2*>(p);
  V2 a = {0, 0}, b = {0, 0}, c = {0, 0}, d = {0, 0};
  for (int64_t i = 0; i < words / 2; i += 4) {
    a += v[i];
    b += v[i + 1];
    c += v[i + 2];
    d += v[i + 3];
  }
  const V2 s = a + b + c + d;
  return s[0] + s[1];
}

// Best read bandwidth in bytes/s over `passes` passes of `threads` threads
// over a `bytes` buffer (rounded down to whole 4 KiB pages per thread).
inline double MeasureReadBandwidth(int threads, int64_t bytes, int passes) {
  const int64_t per = bytes / threads / 4096 * 4096;  // bytes per thread
  std::unique_ptr<void, FreeDeleter> buf(AllocHugeAligned(per * threads));
  std::memset(buf.get(), 1, per * threads);
  const auto* words = static_cast<const uint64_t*>(buf.get());
  std::vector<uint64_t> sums(threads);
  double best = 0;
  for (int pass = 0; pass < passes; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (int t = 1; t < threads; ++t) {
      workers.emplace_back(
          [&, t] { sums[t] = SumWords(words + t * per / 8, per / 8); });
    }
    sums[0] = SumWords(words, per / 8);
    for (std::thread& w : workers) w.join();
    const double sec =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    best = std::max(best, double(per) * threads / sec);
  }
  // Keep the sums observable so the loops are not removed.
  volatile uint64_t sink = 0;
  for (uint64_t s : sums) sink = sink + s;
  return best;
}

}  // namespace layerproof::bench

#endif  // LAYERPROOF_BENCH_MEMORY_BANDWIDTH_H_
