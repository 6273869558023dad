#include "model/weights.h"

#include <fmt/format.h>

#include "core/error.h"

namespace genai {

void Weights::add(std::string name, Tensor t) { tensors_[std::move(name)] = std::move(t); }

const Tensor& Weights::get(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end())
    throw_input_error("{}: missing tensor {}", source_.empty() ? "weights" : source_, name);
  return it->second;
}

namespace weight_names {
std::string embed_tokens() { return "model.embed_tokens.weight"; }
std::string final_norm() { return "model.norm.weight"; }
std::string final_norm_bias() { return "model.norm.bias"; }
std::string lm_head() { return "lm_head.weight"; }
std::string lm_head_bias() { return "lm_head.bias"; }
std::string layer(int64_t i, const char* suffix) { return fmt::format("model.layers.{}.{}", i, suffix); }
std::string embed_tokens_per_layer() { return "model.embed_tokens_per_layer.weight"; }
std::string per_layer_model_projection() { return "model.per_layer_model_projection.weight"; }
std::string per_layer_projection_norm() { return "model.per_layer_projection_norm.weight"; }
std::string bias_of(const std::string& weight) {
  const std::string_view suffix = "weight";
  if (weight.size() < suffix.size() || weight.compare(weight.size() - suffix.size(), suffix.size(), suffix) != 0)
    throw_failure("internal: {} is not a weight name", weight);
  return weight.substr(0, weight.size() - suffix.size()) + "bias";
}
}  // namespace weight_names

}  // namespace genai
