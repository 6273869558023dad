// The "htp" backend: the quantized program (integer activations and weights with the QDQ
// reference's arithmetic) or, with --use_fp16 / a float recipe on V69+, the float16 program.
// Delegate id "GenaiHtpBackend".
#pragma once

#include <memory>

#include "compile/backend.h"
#include "runtime/backend_executor.h"

namespace genai::backends {

std::unique_ptr<compile::Backend> make_htp_backend();
std::unique_ptr<runtime::BackendExecutor> make_htp_executor();

}  // namespace genai::backends
