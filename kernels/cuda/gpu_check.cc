// layerproof_gpu_check: the CUDA backend's bit-identity checks and timings
// as one program that needs neither GoogleTest nor any other package, for
// bare GPU machines (scripts/gpu-check.sh).
//
//   layerproof_gpu_check [--quick] [--no-timing] [--seed N]
//
// 1. Golden vectors (kernels/golden.h): every case on ref and on cuda, the
//    block-quantized GEMM and embedding cases included; the two hashes must
//    be equal, and equal to the embedded golden file's hash where the file
//    has one.
// 2. Cross-checks (kernels/cuda/cross_check.h): random shapes of every op,
//    cuda against ref, bit for bit; the quantized GEMM (qgemm) and embedding
//    (qembedding) in every block format, and the refusal of a K that is not
//    a whole number of blocks (qgemm-refused).
// 3. Timings (kernels/cuda/gpu_timing.h), informational.
// Exit status 0 when 1 and 2 pass, 1 on a mismatch or error, 2 when there is
// no usable CUDA device.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "kernels/cuda/cross_check.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/gpu_timing.h"
#include "kernels/golden.h"
#include "kernels/ref/ref_backend.h"

namespace layerproof::kernels {
namespace {

struct Options {
  bool quick = false;
  bool timing = true;
  uint64_t seed = 20240601;
};

// Returns the number of failures.
int CheckGolden(Backend& cuda, Backend& ref) {
  std::printf("== golden vectors (kernels/golden.h, spec_version %d)\n",
              kSpecVersion);
  StatusOr<std::map<std::string, std::string>> golden =
      ParseGoldenFile(EmbeddedGoldenFile());
  if (!golden.ok()) {
    std::printf("embedded golden file unusable: %s\n",
                golden.status().ToString().c_str());
    golden = std::map<std::string, std::string>();
  }
  const std::vector<GoldenResult> want = RunGoldenCases(ref);
  const std::vector<GoldenResult> got = RunGoldenCases(cuda);
  int failures = 0;
  std::printf("%-40s %-10s %-10s %s\n", "case", "cuda=ref", "vs file",
              "cuda sha256");
  for (size_t i = 0; i < got.size(); ++i) {
    const GoldenResult& g = got[i];
    const GoldenResult& r = want[i];
    const auto it = golden->find(g.name);
    const bool same =
        g.status.ok() && r.status.ok() && g.sha256_hex == r.sha256_hex;
    const char* file = it == golden->end()          ? "absent"
                       : it->second == g.sha256_hex ? "match"
                                                    : "MISMATCH";
    const bool bad =
        !same || (it != golden->end() && it->second != g.sha256_hex);
    failures += bad;
    std::printf("%-40s %-10s %-10s %s\n", g.name.c_str(), same ? "yes" : "NO",
                file,
                g.status.ok() ? g.sha256_hex.substr(0, 16).c_str()
                              : g.status.ToString().c_str());
  }
  std::printf("golden: %zu cases, %d failed\n\n", got.size(), failures);
  return failures;
}

int CheckCross(Backend& cuda, Backend& ref, const Options& o) {
  CrossCheckOptions co;
  co.seed = o.seed;
  co.cases_per_op = o.quick ? 3 : 8;
  co.large = !o.quick;
  std::printf("== cross-check cuda vs ref (seed %llu, %d shapes per op%s)\n",
              static_cast<unsigned long long>(co.seed), co.cases_per_op,
              co.large ? " + long reductions" : "");
  struct Tally {
    int cases = 0, failed = 0;
    int64_t elements = 0;
  };
  std::map<std::string, Tally> by_op;
  int failures = 0;
  for (const CrossCheckResult& r : RunCrossChecks(cuda, ref, co)) {
    Tally& t = by_op[r.name.substr(0, r.name.find(' '))];
    ++t.cases;
    t.elements += r.elements;
    if (r.ok()) continue;
    ++t.failed;
    ++failures;
    std::printf("FAIL %s: %s\n", r.name.c_str(),
                !r.status.ok() ? r.status.ToString().c_str()
                               : (std::to_string(r.mismatches) + " of " +
                                  std::to_string(r.elements) +
                                  " differ; first " + r.first_mismatch)
                                     .c_str());
  }
  std::printf("%-12s %6s %8s %14s\n", "op", "cases", "failed", "outputs");
  for (const auto& [op, t] : by_op) {
    std::printf("%-12s %6d %8d %14lld\n", op.c_str(), t.cases, t.failed,
                static_cast<long long>(t.elements));
  }
  std::printf("cross-check: %d failed\n\n", failures);
  return failures;
}

int Main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      o.quick = true;
    } else if (std::strcmp(argv[i], "--no-timing") == 0) {
      o.timing = false;
    } else if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      o.seed = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--no-timing] [--seed N]\n",
                   argv[0]);
      return 2;
    }
  }
  std::unique_ptr<Backend> cuda = cuda::MakeCudaBackend();
  if (cuda == nullptr) {
    std::printf(
        "no usable CUDA device (driver, device or sm_80+ image "
        "missing)\n");
    return 2;
  }
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
    std::printf("device 0: %s, sm_%d%d, %d SMs, %.1f GiB\n\n", prop.name,
                prop.major, prop.minor, prop.multiProcessorCount,
                prop.totalGlobalMem / double(1 << 30));
  }
  std::unique_ptr<Backend> ref = MakeRefBackend();
  const int failures = CheckGolden(*cuda, *ref) + CheckCross(*cuda, *ref, o);
  if (o.timing) {
    std::printf("== timing (cudaEvent, mean of repeats)\n");
    const Status s = cuda::RunGpuTimings(stdout, o.quick);
    if (!s.ok()) std::printf("timing failed: %s\n", s.ToString().c_str());
    std::printf("\n");
  }
  std::printf("RESULT: %s (%d failures)\n", failures == 0 ? "PASS" : "FAIL",
              failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace layerproof::kernels

int main(int argc, char** argv) {
  return layerproof::kernels::Main(argc, argv);
}
