#include "backends/gpu/gpu_backend.h"

#include "backends/exec/payload_executor.h"
#include "backends/lower/payload_backend.h"
#include "backends/payload/payload_format.h"

namespace genai::backends {

std::unique_ptr<compile::Backend> make_gpu_backend() {
  return std::make_unique<PayloadBackend>(gpu_capabilities(), kGpuDelegateId, target::BackendType::kGpuBackend);
}

std::unique_ptr<runtime::BackendExecutor> make_gpu_executor() { return make_payload_executor(kGpuDelegateId); }

}  // namespace genai::backends
