#include "backends/execution_options.h"

#include "backends/exec/payload_executor.h"
#include "kernels/kernel_mode.h"

namespace genai::backends {

void apply_execution_options(const options::OptionValues& values) {
  kernels::set_kernel_mode(values.get_flag("scalar_kernels") ? kernels::KernelMode::kScalar : kernels::KernelMode::kSimd);
  set_profile_steps(values.get_flag("backend_profile"));
}

}  // namespace genai::backends
