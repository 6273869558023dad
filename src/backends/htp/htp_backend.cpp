#include "backends/htp/htp_backend.h"

#include "backends/exec/payload_executor.h"
#include "backends/lower/payload_backend.h"
#include "backends/payload/payload_format.h"

namespace genai::backends {

std::unique_ptr<compile::Backend> make_htp_backend() {
  return std::make_unique<PayloadBackend>(htp_capabilities(), kHtpDelegateId, target::BackendType::kHtpBackend);
}

std::unique_ptr<runtime::BackendExecutor> make_htp_executor() { return make_payload_executor(kHtpDelegateId); }

}  // namespace genai::backends
