// The options that choose how programs are lowered and run here (--scalar_kernels,
// --backend_profile, --backend_fuse_kv), applied in one place: every command that compiles or runs
// calls apply_execution_options once with its parsed options, before it compiles or loads.
#pragma once

#include "options/option_values.h"

namespace genai::backends {

void apply_execution_options(const options::OptionValues& values);

}  // namespace genai::backends
