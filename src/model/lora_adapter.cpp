#include "model/lora_adapter.h"

#include <cmath>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "formats/safetensors_file.h"
#include "model/hf_config.h"

namespace genai {
namespace {

using json = nlohmann::json;

// The decoder's linear layers and where they sit in a layer.
const std::map<std::string, std::string>& decoder_linears() {
  static const std::map<std::string, std::string> m = {
      {"q_proj", "self_attn"}, {"k_proj", "self_attn"}, {"v_proj", "self_attn"}, {"o_proj", "self_attn"},
      {"gate_proj", "mlp"},    {"up_proj", "mlp"},      {"down_proj", "mlp"}};
  return m;
}

// Fields that must hold their no-op value: each changes the arithmetic some other way.
void expect_default(const json& j, const std::string& key, const json& neutral, const std::string& file) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null() || *it == neutral) return;
  if (neutral.is_object() && it->is_object() && it->empty()) return;
  throw_input_error("{}: {} = {} is not supported (only plain LoRA merges: {} {})", file, key, it->dump(), key,
                    neutral.dump());
}

}  // namespace

void check_lora_adapter_name(std::string_view name, std::string_view option) {
  const bool ok = !name.empty() && name.size() <= 64 &&
                  name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string_view::npos;
  if (!ok)
    throw_input_error("{}: adapter name '{}' must be 1-64 letters, digits and '_' (it becomes part of method names)", option,
                      name);
}

double LoraAdapterConfig::scale() const {
  return rslora ? alpha / std::sqrt(static_cast<double>(rank)) : alpha / static_cast<double>(rank);
}

LoraAdapterConfig read_lora_adapter_config(const std::filesystem::path& path) {
  const std::string file = path.string();
  if (!std::filesystem::exists(path))
    throw_input_error("{}: missing (a PEFT LoRA adapter's settings, beside adapter_model.safetensors)", file);
  const json j = read_hf_config_json(path);
  if (j.value("peft_type", std::string()) != "LORA")
    throw_input_error("{}: peft_type {} is not handled (valid: LORA)", file, j.contains("peft_type") ? j["peft_type"].dump() : "(absent)");
  LoraAdapterConfig c;
  if (!j.contains("r") || !j["r"].is_number_integer() || j["r"].get<int64_t>() <= 0)
    throw_input_error("{}: r must be a positive integer", file);
  c.rank = j["r"].get<int64_t>();
  if (!j.contains("lora_alpha") || !j["lora_alpha"].is_number())
    throw_input_error("{}: lora_alpha must be a number", file);
  c.alpha = j["lora_alpha"].get<double>();
  c.rslora = j.value("use_rslora", false);
  auto targets = j.find("target_modules");
  if (targets == j.end() || !targets->is_array() || targets->empty())
    throw_input_error("{}: target_modules must be a list of module names (a pattern string is not handled)", file);
  for (const auto& t : *targets) {
    if (!t.is_string() || !decoder_linears().count(t.get<std::string>()))
      throw_input_error("{}: target module {} is not a decoder linear layer (valid: q_proj, k_proj, v_proj, o_proj, "
                        "gate_proj, up_proj, down_proj)",
                        file, t.dump());
    c.target_modules.push_back(t.get<std::string>());
  }
  expect_default(j, "use_dora", false, file);
  expect_default(j, "bias", "none", file);
  expect_default(j, "lora_bias", false, file);
  expect_default(j, "fan_in_fan_out", false, file);
  expect_default(j, "modules_to_save", json::array(), file);
  expect_default(j, "rank_pattern", json::object(), file);
  expect_default(j, "alpha_pattern", json::object(), file);
  expect_default(j, "layers_to_transform", json::array(), file);
  expect_default(j, "layer_replication", json::array(), file);
  expect_default(j, "trainable_token_indices", json::array(), file);
  expect_default(j, "target_parameters", json::array(), file);
  return c;
}

LoraAdapter read_lora_adapter(std::string name, const std::filesystem::path& dir, const ModelConfig& config,
                              const Weights& weights) {
  LoraAdapter adapter;
  adapter.name = std::move(name);
  adapter.dir = dir;
  adapter.config = read_lora_adapter_config(dir / "adapter_config.json");
  const LoraAdapterConfig& c = adapter.config;
  const std::filesystem::path tensors_path = dir / "adapter_model.safetensors";
  if (!std::filesystem::exists(tensors_path))
    throw_input_error("{}: missing (the adapter's tensors, beside adapter_config.json)", tensors_path.string());
  const SafetensorsFile file = SafetensorsFile::open(tensors_path);
  const std::string source = file.source();
  // <any prefix of the text model>.layers.<i>.<self_attn|mlp>.<module>.lora_<A|B>[.<adapter name>].weight
  static const std::regex key(R"(^(.*\.)?layers\.(\d+)\.(self_attn|mlp)\.(\w+)\.lora_([AB])(\.\w+)?\.weight$)");
  std::map<std::string, std::pair<const SafetensorsEntry*, const SafetensorsEntry*>> factors;  // canonical -> (A, B)
  const std::set<std::string> targets(c.target_modules.begin(), c.target_modules.end());
  for (const SafetensorsEntry& e : file.tensors()) {
    std::smatch m;
    if (!std::regex_match(e.name, m, key))
      throw_input_error("{}: tensor {} is not a LoRA factor of a decoder layer", source, e.name);
    const std::string prefix = m[1].str(), module = m[4].str();
    if (prefix.find("encoder") != std::string::npos || prefix.find("projector") != std::string::npos)
      throw_input_error("{}: tensor {} adapts the audio side (only the text decoder's layers take adapters)", source, e.name);
    const int64_t layer = std::stoll(m[2].str());
    auto where = decoder_linears().find(module);
    if (where == decoder_linears().end() || where->second != m[3].str() || !targets.count(module) || layer >= config.n_layers)
      throw_input_error("{}: tensor {} is not a target module of this {}-layer decoder ({})", source, e.name,
                        config.n_layers, fmt::format("{}", fmt::join(c.target_modules, ", ")));
    auto& f = factors[weight_names::layer(layer, (m[3].str() + "." + module + ".weight").c_str())];
    (m[5].str() == "A" ? f.first : f.second) = &e;
  }
  if (factors.empty()) throw_input_error("{}: no LoRA factors", source);
  for (const auto& [canonical, f] : factors) {
    if (!f.first || !f.second) throw_input_error("{}: {} has one LoRA factor without the other", source, canonical);
    if (!weights.contains(canonical))
      throw_input_error("{}: {} adapts a layer this decoder does not have", source, canonical);
    const Shape& w = weights.get(canonical).shape();
    LoraFactors lf{file.tensor_f32(*f.first), file.tensor_f32(*f.second)};
    const int64_t out = w.at(0), in = w.at(1);
    if (lf.a.shape() != Shape{c.rank, in} || lf.b.shape() != Shape{out, c.rank})
      throw_input_error("{}: {}: factors {} and {} do not fit a [{}, {}] weight at rank {}", source, canonical,
                        shape_to_string(lf.a.shape()), shape_to_string(lf.b.shape()), out, in, c.rank);
    adapter.layers.emplace(canonical, std::move(lf));
  }
  return adapter;
}

std::string lora_adapter_constant(std::string_view name) { return std::string(kLoraAdapterConstantPrefix) + std::string(name); }

std::string lora_adapter_description(const LoraAdapter& adapter) {
  const LoraAdapterConfig& c = adapter.config;
  return json{{"rank", c.rank},
              {"alpha", c.alpha},
              {"rslora", c.rslora},
              {"target_modules", c.target_modules},
              {"layers", adapter.layers.size()}}
      .dump();
}

std::shared_ptr<const Weights> weights_with_adapter(const Weights& base, const LoraAdapter& adapter) {
  auto weights = std::make_shared<Weights>(base);  // tensors share their storage: views stay views
  const auto scale = static_cast<float>(adapter.config.scale());
  for (const auto& [canonical, f] : adapter.layers) {
    Tensor b = Tensor::zeros(DType::kF32, f.b.shape());
    const float* src = f.b.data<float>();
    float* dst = b.mutable_data<float>();
    for (int64_t i = 0; i < b.numel(); ++i) dst[i] = src[i] * scale;
    weights->add(weight_names::lora_a_of(canonical), f.a);
    weights->add(weight_names::lora_b_of(canonical), std::move(b));
  }
  return weights;
}

int64_t merge_lora_adapter(const std::filesystem::path& dir, const ModelConfig& config, Weights& weights) {
  const LoraAdapter adapter = read_lora_adapter("merged", dir, config, weights);
  const auto scale = static_cast<float>(adapter.config.scale());
  const int64_t rank = adapter.config.rank;
  for (const auto& [canonical, f] : adapter.layers) {
    const Tensor w = weights.f32(canonical);
    const int64_t out = w.shape()[0], in = w.shape()[1];
    Tensor merged = Tensor::zeros(DType::kF32, w.shape());
    const float* pa = f.a.data<float>();
    const float* pb = f.b.data<float>();
    const float* pw = w.data<float>();
    float* pm = merged.mutable_data<float>();
    // PEFT's merge: W + (B A) scale, B A formed first.
    std::vector<float> row(static_cast<size_t>(in));
    for (int64_t o = 0; o < out; ++o) {
      std::fill(row.begin(), row.end(), 0.0f);
      for (int64_t r = 0; r < rank; ++r) {
        const float br = pb[o * rank + r];
        const float* ar = pa + r * in;
        for (int64_t i = 0; i < in; ++i) row[static_cast<size_t>(i)] += br * ar[i];
      }
      for (int64_t i = 0; i < in; ++i) pm[o * in + i] = pw[o * in + i] + row[static_cast<size_t>(i)] * scale;
    }
    weights.add(canonical, std::move(merged));
  }
  return static_cast<int64_t>(adapter.layers.size());
}

}  // namespace genai
