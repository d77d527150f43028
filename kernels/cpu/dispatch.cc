// The one runtime-dispatch file: which backends exist, which run here, and
// which one LAYERPROOF_BACKEND selects.
#include "kernels/dispatch.h"

#include <array>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "kernels/cpu/cpu_backends.h"
#include "kernels/cpu_features.h"
#include "kernels/ref/ref_backend.h"
#ifdef LAYERPROOF_WITH_CUDA
#include "kernels/cuda/cuda_backend.h"
#endif

namespace layerproof::kernels {
namespace {

constexpr std::array<BackendKind, 5> kAllKinds = {
    BackendKind::kRef, BackendKind::kNeon, BackendKind::kAvx2,
    BackendKind::kAvx512, BackendKind::kCuda};

bool CpuRuns(BackendKind kind) {
  switch (kind) {
    case BackendKind::kRef:
      return true;
#if defined(LAYERPROOF_HAVE_AVX2_BACKEND)
    case BackendKind::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             CpuHasF16c();
#endif
#if defined(LAYERPROOF_HAVE_AVX512_BACKEND)
    case BackendKind::kAvx512:
      // The AVX-512 sources are also built with -mavx2 -mfma -mf16c.
      return __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512dq") && CpuHasF16c();
#endif
#if defined(LAYERPROOF_HAVE_NEON_BACKEND)
    case BackendKind::kNeon:
      return true;  // Advanced SIMD is mandatory on AArch64.
#endif
    default:
      return false;
  }
}

std::unique_ptr<Backend> Make(BackendKind kind) {
  switch (kind) {
    case BackendKind::kRef:
      return MakeRefBackend();
#if defined(LAYERPROOF_HAVE_AVX2_BACKEND)
    case BackendKind::kAvx2:
      return cpu::MakeAvx2Backend();
#endif
#if defined(LAYERPROOF_HAVE_AVX512_BACKEND)
    case BackendKind::kAvx512:
      return cpu::MakeAvx512Backend();
#endif
#if defined(LAYERPROOF_HAVE_NEON_BACKEND)
    case BackendKind::kNeon:
      return cpu::MakeNeonBackend();
#endif
#ifdef LAYERPROOF_WITH_CUDA
    case BackendKind::kCuda:
      return cuda::MakeCudaBackend();  // null when no device is present
#endif
    default:
      return nullptr;
  }
}

struct Registry {
  std::once_flag once[kAllKinds.size()];
  std::unique_ptr<Backend> backends[kAllKinds.size()];
};

Registry& TheRegistry() {
  static Registry* registry = new Registry();  // never destroyed
  return *registry;
}

// The backend instance, created on first use; null when it cannot run here.
Backend* Instance(BackendKind kind) {
  const size_t i = static_cast<size_t>(kind);
  Registry& reg = TheRegistry();
  std::call_once(reg.once[i], [&] {
    if (kind == BackendKind::kCuda || CpuRuns(kind))
      reg.backends[i] = Make(kind);
  });
  return reg.backends[i].get();
}

}  // namespace

StatusOr<BackendKind> ParseBackendKind(std::string_view name) {
  for (BackendKind kind : kAllKinds) {
    if (name == BackendName(kind)) return kind;
  }
  return InvalidArgument("LAYERPROOF_BACKEND: got \"" + std::string(name) +
                         "\", want one of ref, avx2, avx512, neon, cuda, auto");
}

std::vector<BackendKind> AvailableBackends() {
  std::vector<BackendKind> out;
  for (BackendKind kind : kAllKinds) {
    if (Instance(kind) != nullptr) out.push_back(kind);
  }
  return out;
}

StatusOr<Backend*> GetBackend(BackendKind kind) {
  Backend* b = Instance(kind);
  if (b == nullptr) {
    return Unavailable("backend " + std::string(BackendName(kind)) +
                       " is not built into this binary or cannot run on "
                       "this machine");
  }
  return b;
}

StatusOr<Backend*> DefaultBackend() {
  const char* env = std::getenv("LAYERPROOF_BACKEND");
  const std::string_view name = env == nullptr ? "auto" : env;
  if (name.empty() || name == "auto") {
    // The fastest CPU backend; CUDA is chosen only when asked for, because
    // the host-memory Backend API copies to and from the device per op.
    BackendKind best = BackendKind::kRef;
    for (BackendKind kind : AvailableBackends()) {
      if (kind != BackendKind::kCuda) best = kind;
    }
    return GetBackend(best);
  }
  LP_ASSIGN_OR_RETURN(BackendKind kind, ParseBackendKind(name));
  return GetBackend(kind);
}

}  // namespace layerproof::kernels
