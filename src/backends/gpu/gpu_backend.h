// The "gpu" backend: float16 programs only (float32 I/O, float16 weights, every op result
// rounded to float16). Delegate id "GenaiGpuBackend".
#pragma once

#include <memory>

#include "compile/backend.h"
#include "runtime/backend_executor.h"

namespace genai::backends {

std::unique_ptr<compile::Backend> make_gpu_backend();
std::unique_ptr<runtime::BackendExecutor> make_gpu_executor();

}  // namespace genai::backends
