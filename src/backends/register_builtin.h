// Registers every backend this build has (compile side and runtime side). Idempotent; call it
// once before compiling or loading programs (the CLI and the orchestrator do).
#pragma once

namespace genai::backends {

void register_builtin_backends();

}  // namespace genai::backends
