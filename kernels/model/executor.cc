#include "kernels/model/executor.h"

#if defined(LAYERPROOF_WITH_CUDA)
#include "kernels/model/cuda_executor.h"
#endif

namespace layerproof::kernels::model {

StatusOr<std::unique_ptr<Executor>> MakeExecutor(Backend* backend) {
  if (backend == nullptr) return InvalidArgument("MakeExecutor: no backend");
#if defined(LAYERPROOF_WITH_CUDA)
  if (backend->kind() == BackendKind::kCuda) return MakeCudaExecutor();
#else
  if (backend->kind() == BackendKind::kCuda) {
    return Unavailable("MakeExecutor: this build has no CUDA executor");
  }
#endif
  return MakeHostExecutor(backend);
}

}  // namespace layerproof::kernels::model
