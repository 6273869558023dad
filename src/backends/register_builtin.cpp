#include "backends/register_builtin.h"

#include <mutex>

#include "backends/gpu/gpu_backend.h"
#include "backends/htp/htp_backend.h"
#include "backends/qnn/qnn_backend.h"

namespace genai::backends {

void register_builtin_backends() {
  // Both registries are idempotent by name/id; the once_flag also keeps repeated calls free.
  static std::once_flag once;
  std::call_once(once, [] {
    compile::register_backend(make_htp_backend());
    compile::register_backend(make_gpu_backend());
    // After htp: find_backend(kHtpBackend) stays the genai lowering; --lowering qnn asks by name.
    compile::register_backend(make_qnn_lowering_backend());
    runtime::register_backend_executor(make_htp_executor());
    runtime::register_backend_executor(make_gpu_executor());
    runtime::register_backend_executor(make_qnn_executor());
  });
}

}  // namespace genai::backends
