#include "model/weights.h"

#include <cstring>

#include <fmt/format.h>

#include "core/error.h"
#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/quantize.h"

namespace genai {

void Weights::add(std::string name, Tensor t, std::shared_ptr<const MappedFile> map) {
  if (map)
    maps_[name] = std::move(map);
  else
    maps_.erase(name);
  tensors_[std::move(name)] = std::move(t);
}

void Weights::release(const std::string& name) const {
  if (auto it = maps_.find(name); it != maps_.end()) it->second->release(get(name).bytes());
}

Tensor Weights::f32(const std::string& name) const {
  const Tensor& stored = get(name);
  if (stored.dtype() == DType::kF32) return stored;
  if (stored.dtype() != DType::kF16 && stored.dtype() != DType::kBF16) return stored.to_f32();
  Tensor out = Tensor::zeros(DType::kF32, stored.shape());
  float* x = out.mutable_data<float>();
  ThreadPool::global().parallel_for(
      stored.numel(), [&](int64_t b, int64_t e) { widen_to_f32(stored, b, e - b, x + b); }, int64_t{1} << 16);
  release(name);
  return out;
}

const Tensor& Weights::get(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end())
    throw_input_error("{}: missing tensor {}", source_.empty() ? "weights" : source_, name);
  return it->second;
}

void widen_to_f32(const Tensor& t, int64_t begin, int64_t count, float* dst) {
  if (begin < 0 || count < 0 || begin + count > t.numel())
    throw_failure("internal: elements [{}, {}) of a tensor of {}", begin, begin + count, t.numel());
  switch (t.dtype()) {
    case DType::kF32:
      std::memcpy(dst, t.data<float>() + begin, static_cast<size_t>(count) * sizeof(float));
      return;
    case DType::kF16:
      kernels::widen_f16(static_cast<const uint16_t*>(t.raw()) + begin, count, dst);
      return;
    case DType::kBF16: {
      const uint16_t* h = static_cast<const uint16_t*>(t.raw()) + begin;
      for (int64_t i = 0; i < count; ++i) dst[i] = bf16_to_f32(h[i]);
      return;
    }
    default:
      throw_failure("internal: widen_to_f32 of a {} tensor", dtype_name(t.dtype()));
  }
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
// "<x>.bias" less "bias": the layer's prefix "<x>.", its name checked by bias_of.
std::string lora_a_of(const std::string& weight) { return std::string(bias_of(weight), 0, weight.size() - 6) + "lora_A.weight"; }
std::string lora_b_of(const std::string& weight) { return std::string(bias_of(weight), 0, weight.size() - 6) + "lora_B.weight"; }
}  // namespace weight_names

}  // namespace genai
