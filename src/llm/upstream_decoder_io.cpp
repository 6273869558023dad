#include "llm/upstream_decoder_io.h"

#include <algorithm>

#include <fmt/format.h>

namespace genai {
namespace {

bool is_row(const runtime::IoDesc& d, int64_t ar) {
  return d.dtype == DType::kI32 && d.shape.size() == 2 && d.shape[0] == 1 && d.shape[1] == ar;
}

bool is_cache(const runtime::IoDesc& d, DType dtype) {
  return d.dtype == dtype && d.shape.size() == 4 && d.shape[0] == 1;
}

}  // namespace

std::optional<DecoderSignature> name_by_upstream_layout(const std::vector<runtime::IoDesc>& inputs,
                                                        const std::vector<runtime::IoDesc>& outputs) {
  const bool named = std::any_of(inputs.begin(), inputs.end(), [](const auto& d) { return d.name == "atten_mask"; });
  if (named || inputs.size() < 5 || (inputs.size() - 3) % 2 != 0) return std::nullopt;
  const size_t layers = (inputs.size() - 3) / 2;
  if (outputs.size() != 1 + 2 * layers) return std::nullopt;
  const runtime::IoDesc& mask = inputs[1];
  if (mask.shape.size() != 4 || mask.shape[0] != 1 || mask.shape[1] != 1) return std::nullopt;
  const int64_t ar = mask.shape[2];
  if (!is_row(inputs[0], ar) || !is_row(inputs[2], ar)) return std::nullopt;
  const DType cache = inputs[3].dtype;
  for (size_t i = 3; i < inputs.size(); ++i)
    if (!is_cache(inputs[i], cache)) return std::nullopt;
  for (size_t o = 1; o < outputs.size(); ++o)
    if (!is_cache(outputs[o], cache)) return std::nullopt;
  const auto& logits = outputs[0];
  if (logits.shape.size() != 3 || logits.shape[0] != 1 || logits.shape[1] != ar) return std::nullopt;

  DecoderSignature s{inputs, outputs};
  s.inputs[0].name = "tokens";
  s.inputs[1].name = "atten_mask";
  s.inputs[2].name = "input_pos";
  s.outputs[0].name = "logits";
  for (size_t l = 0; l < layers; ++l) {
    s.inputs[3 + l].name = fmt::format("k_cache_{}", l);
    s.inputs[3 + layers + l].name = fmt::format("v_cache_{}", l);
    s.outputs[1 + l].name = fmt::format("k_out_{}", l);
    s.outputs[1 + layers + l].name = fmt::format("v_out_{}", l);
  }
  return s;
}

}  // namespace genai
