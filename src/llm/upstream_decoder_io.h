// The names of a decoder method's tensors when the program does not carry them. Upstream's llama
// programs (ExecuTorch's static llama export for QNN) name no input or output: its runner knows
// them by position. This is that layout, as the scheduler's names:
//   inputs   tokens int32 [1, ar], atten_mask [1, 1, ar, CL], input_pos int32 [1, ar],
//            k_cache_0 .. k_cache_{L-1} [1, heads, head_dim, CL - ar],
//            v_cache_0 .. v_cache_{L-1} [1, heads, CL - ar, head_dim]
//   outputs  logits [1, ar, vocab], k_out_0 .. k_out_{L-1}, v_out_0 .. v_out_{L-1}
#pragma once

#include <optional>
#include <vector>

#include "runtime/backend_executor.h"

namespace genai {

struct DecoderSignature {
  std::vector<runtime::IoDesc> inputs, outputs;
};

// The signature with upstream's positional names when it names no decoder tensor (no
// "atten_mask" input) and its dtypes, ranks and counts fit the layout above; nullopt otherwise,
// so that the scheduler's own checks report what is missing.
std::optional<DecoderSignature> name_by_upstream_layout(const std::vector<runtime::IoDesc>& inputs,
                                                        const std::vector<runtime::IoDesc>& outputs);

}  // namespace genai
