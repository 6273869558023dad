#include "llm/attention_sink.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "llm/method_runner.h"
#include "model/reference_decoder.h"

namespace genai {
namespace {

template <typename T>
void rotate_pairs(T* k, int64_t kv_heads, int64_t head_dim, int64_t stride, int64_t from, int64_t to,
                  const std::vector<float>& cos, const std::vector<float>& sin, const quant::Encoding* e) {
  const int64_t n = static_cast<int64_t>(cos.size());
  auto load = [e](T q) { return e ? quant::dequantize_value(static_cast<int64_t>(q), *e) : static_cast<float>(q); };
  auto store = [e](float x) { return e ? static_cast<T>(quant::quantize_value(x, *e)) : static_cast<T>(x); };
  for (int64_t h = 0; h < kv_heads; ++h)
    for (int64_t i = 0; i < n; ++i) {
      T* a = k + (h * head_dim + i) * stride;      // dim i
      T* b = k + (h * head_dim + i + n) * stride;  // its rotate-half partner
      for (int64_t s = from; s < to; ++s) {
        const float x = load(a[s]), y = load(b[s]);
        a[s] = store(x * cos[i] - y * sin[i]);
        b[s] = store(y * cos[i] + x * sin[i]);
      }
    }
}

}  // namespace

KeyRerotation::KeyRerotation(std::vector<KeyRotary> rotary, std::vector<quant::Encoding> encodings)
    : rotary_(std::move(rotary)), encodings_(std::move(encodings)) {
  if (!encodings_.empty() && encodings_.size() != rotary_.size())
    throw_failure("internal: {} key encodings for {} layers", encodings_.size(), rotary_.size());
}

void KeyRerotation::apply(int64_t l, void* k, DType element, int64_t kv_heads, int64_t head_dim, int64_t stride,
                          int64_t from, int64_t to, int64_t delta) const {
  const std::vector<float>& inv_freq = rotary_.at(static_cast<size_t>(l)).inv_freq;
  if (inv_freq.empty() || from >= to || delta == 0) return;
  if (2 * static_cast<int64_t>(inv_freq.size()) > head_dim)
    throw_failure("attention sink: layer {} has {} RoPE frequencies for a head of {}", l, inv_freq.size(), head_dim);
  // As the rotary tables: the angle a float32 product, its cosine and sine rounded to float32;
  // the angle is -delta * inv_freq (sin is odd).
  std::vector<float> cos(inv_freq.size()), sin(inv_freq.size());
  for (size_t i = 0; i < inv_freq.size(); ++i) {
    const float angle = static_cast<float>(delta) * inv_freq[i];
    cos[i] = static_cast<float>(std::cos(static_cast<double>(angle)));
    sin[i] = -static_cast<float>(std::sin(static_cast<double>(angle)));
  }
  const quant::Encoding* e = encodings_.empty() ? nullptr : &encodings_[static_cast<size_t>(l)];
  switch (element) {
    case DType::kF32:
      if (e) throw_failure("attention sink: a float32 K cache with an encoding");
      rotate_pairs(static_cast<float*>(k), kv_heads, head_dim, stride, from, to, cos, sin, nullptr);
      return;
    case DType::kU8:
      if (!e) throw_failure("attention sink: a uint8 K cache without its encoding");
      rotate_pairs(static_cast<uint8_t*>(k), kv_heads, head_dim, stride, from, to, cos, sin, e);
      return;
    case DType::kU16:
      if (!e) throw_failure("attention sink: a uint16 K cache without its encoding");
      rotate_pairs(static_cast<uint16_t*>(k), kv_heads, head_dim, stride, from, to, cos, sin, e);
      return;
    default: break;
  }
  throw_failure("attention sink: a {} K cache cannot be rotated", dtype_name(element));
}

KeyRerotation key_rerotation_from_constants(const MethodRunner& runner, int64_t n_layers, DType kv_dtype) {
  std::vector<KeyRotary> rotary(static_cast<size_t>(n_layers));
  std::vector<quant::Encoding> encodings;
  for (int64_t l = 0; l < n_layers; ++l) {
    const std::string name = fmt::format("get_rope_inv_freq_{}", l);
    const std::optional<std::vector<double>> freq = runner.constant_numbers(name);
    if (!freq)
      throw_input_error("{}: --use_attention_sink needs the constant method {} (programs compiled before attention "
                        "sink support lack it: compile them again)",
                        runner.origin(), name);
    // All zero: a layer without RoPE (zeros among others: pairs that keep angle 0, gemma4's
    // proportional RoPE).
    if (std::any_of(freq->begin(), freq->end(), [](double f) { return f != 0.0; }))
      for (double f : *freq) rotary[static_cast<size_t>(l)].inv_freq.push_back(static_cast<float>(f));
    if (kv_dtype == DType::kF32) continue;
    const std::string attr = fmt::format("get_kv_output_{}_quant_attr", l);
    const std::optional<std::vector<double>> q = runner.constant_numbers(attr);
    if (!q || q->size() < 4 || !((*q)[0] > 0.0))
      throw_input_error("{}: --use_attention_sink needs {} = [scale, zero_point, qmin, qmax, dtype] of the K cache",
                        runner.origin(), attr);
    quant::Encoding e;
    e.dtype = kv_dtype == DType::kU8 ? quant::QDType::kU8 : quant::QDType::kU16;
    e.scale = static_cast<float>((*q)[0]);
    e.zero_point = static_cast<int32_t>((*q)[1]);
    e.qmin = static_cast<int64_t>((*q)[2]);
    e.qmax = static_cast<int64_t>((*q)[3]);
    encodings.push_back(e);
  }
  return KeyRerotation(std::move(rotary), std::move(encodings));
}

KeyRerotation key_rerotation_from_model(const ModelConfig& config, int64_t context) {
  std::vector<KeyRotary> rotary;
  for (int64_t l = 0; l < config.kv_layers(); ++l) rotary.push_back({layer_rope_inv_freq(config, l, context)});
  return KeyRerotation(std::move(rotary), {});
}

}  // namespace genai
