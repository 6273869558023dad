// runtime::BackendExecutor for our payload, under a given delegate id (GenaiHtpBackend,
// GenaiGpuBackend): init() verifies the payload and every reference in it, binds weights in place
// from named data and precomputes one execution step per op; execute() runs the steps. A method
// is not reentrant (one call at a time), as ProgramInstance guarantees.
#pragma once

#include <memory>
#include <string_view>

#include "runtime/backend_executor.h"

namespace genai::backends {

std::unique_ptr<runtime::BackendExecutor> make_payload_executor(std::string_view delegate_id);

// Process-wide (--backend_profile): methods initialised while on add up each step kind's time
// and log milliseconds per call per kind when they are destroyed.
bool profile_steps();
void set_profile_steps(bool on);

}  // namespace genai::backends
