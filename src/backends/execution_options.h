// The options that choose how programs run here (--scalar_kernels, --backend_profile), applied in
// one place: every command that compiles or runs calls apply_execution_options once with its
// parsed options, before it compiles or loads. (--backend_fuse_kv is the lowering target's:
// compile::CompileRequest::kv_fusion.)
#pragma once

#include "options/option_values.h"

namespace genai::backends {

void apply_execution_options(const options::OptionValues& values);

}  // namespace genai::backends
