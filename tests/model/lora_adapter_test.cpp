// A PEFT LoRA adapter in a Granite Speech folder (has_lora_adapter): merged into the decoder at
// load as W + (alpha / r) B A (rsLoRA: alpha / sqrt(r)), only there; and every adapter we cannot
// merge exactly, or a folder without its adapter, is an InputError naming the file and the field.
// (Against PEFT itself: tests/llm/speech_parity_test.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "formats/safetensors_file.h"
#include "model/lora_adapter.h"
#include "model/model.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"

namespace genai {
namespace {

using json = nlohmann::json;

SafetensorsTensorToWrite f32(std::string name, Shape shape, float first) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = first + 0.01f * static_cast<float>(i % 17) - 0.003f * static_cast<float>(i % 5);
  return {std::move(name), DType::kF32, std::move(shape), [v] {
            std::vector<uint8_t> b(v.size() * sizeof(float));
            std::memcpy(b.data(), v.data(), b.size());
            return b;
          }};
}

struct AdapterFolder {
  testing::TempDir dir;
  std::string model = dir.file("model");
  int64_t dim = 0, kv_dim = 0;
  AdapterFolder() {
    EXPECT_EQ(testing::run_genai({"synth", "--arch", "granite_speech", "--format", "hf", "--seed", "2", "--out", model}).exit_code,
              0);
    LoadOptions o;
    o.load_tokenizer = false;
    const Model plain = load_model(model, o);
    dim = plain.config.dim;
    kv_dim = plain.config.n_kv_heads * plain.config.head_dim;
    json c = json::parse(testing::read_text(model + "/config.json"));
    c["has_lora_adapter"] = true;
    testing::write_file(model + "/config.json", c.dump(2));
  }
  json adapter_config(int64_t r = 2) const {
    return {{"peft_type", "LORA"}, {"r", r},          {"lora_alpha", 8},           {"target_modules", {"q_proj", "v_proj"}},
            {"use_dora", false},   {"bias", "none"},  {"fan_in_fan_out", false},   {"modules_to_save", nullptr},
            {"use_rslora", false}, {"task_type", nullptr}};
  }
  void write(const json& config, std::vector<SafetensorsTensorToWrite> tensors) const {
    testing::write_file(model + "/adapter_config.json", config.dump(2));
    write_safetensors(model + "/adapter_model.safetensors", std::move(tensors));
  }
  // q_proj and v_proj of layer 0 at rank r, under the key layout PEFT writes.
  std::vector<SafetensorsTensorToWrite> factors(int64_t r = 2) const {
    const std::string p = "base_model.model.model.language_model.layers.0.self_attn.";
    return {f32(p + "q_proj.lora_A.weight", {r, dim}, 0.1f), f32(p + "q_proj.lora_B.weight", {dim, r}, -0.2f),
            f32(p + "v_proj.lora_A.weight", {r, dim}, 0.3f), f32(p + "v_proj.lora_B.weight", {kv_dim, r}, 0.05f)};
  }
};

Model load(const std::string& dir) {
  LoadOptions o;
  o.load_tokenizer = false;
  return load_model(dir, o);
}

TEST(LoraAdapter, MergesScaledProductIntoTheTargetedDecoderWeightsOnly) {
  AdapterFolder f;
  const std::string q = weight_names::layer(0, "self_attn.q_proj.weight"), k = weight_names::layer(0, "self_attn.k_proj.weight");
  json c = json::parse(testing::read_text(f.model + "/config.json"));
  c["has_lora_adapter"] = false;
  testing::write_file(f.model + "/config.json", c.dump(2));
  const Model base = load(f.model);
  c["has_lora_adapter"] = true;
  testing::write_file(f.model + "/config.json", c.dump(2));
  for (bool rslora : {false, true}) {
    SCOPED_TRACE(rslora ? "rslora" : "lora");
    json ac = f.adapter_config();
    ac["use_rslora"] = rslora;
    f.write(ac, f.factors());
    const Model m = load(f.model);
    const double scale = rslora ? 8.0 / std::sqrt(2.0) : 8.0 / 2.0;
    const SafetensorsFile file = SafetensorsFile::open(f.model + "/adapter_model.safetensors");
    const Tensor a = file.tensor_f32(*file.find("base_model.model.model.language_model.layers.0.self_attn.q_proj.lora_A.weight"));
    const Tensor b = file.tensor_f32(*file.find("base_model.model.model.language_model.layers.0.self_attn.q_proj.lora_B.weight"));
    double worst = 0.0;
    for (int64_t o = 0; o < f.dim; ++o)
      for (int64_t i = 0; i < f.dim; ++i) {
        double delta = 0.0;
        for (int64_t r = 0; r < 2; ++r) delta += double(b.data<float>()[o * 2 + r]) * a.data<float>()[r * f.dim + i];
        const double want = base.weights.get(q).data<float>()[o * f.dim + i] + scale * delta;
        worst = std::max(worst, std::fabs(m.weights.get(q).data<float>()[o * f.dim + i] - want));
      }
    EXPECT_LT(worst, 1e-5);
    // Not a target: untouched; a layer without factors: untouched.
    EXPECT_EQ(std::memcmp(m.weights.get(k).raw(), base.weights.get(k).raw(), base.weights.get(k).numel() * sizeof(float)), 0);
    const std::string q1 = weight_names::layer(1, "self_attn.q_proj.weight");
    EXPECT_EQ(std::memcmp(m.weights.get(q1).raw(), base.weights.get(q1).raw(), base.weights.get(q1).numel() * sizeof(float)), 0);
  }
}

TEST(LoraAdapter, AdaptersWeCannotMergeExactlyAreInputErrorsNamingTheFileAndField) {
  AdapterFolder f;
  auto expect_error = [&](const std::vector<std::string>& words) {
    try {
      (void)load(f.model);
      ADD_FAILURE() << "loaded";
    } catch (const InputError& e) {
      for (const auto& w : words) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << w << " in: " << e.what();
    }
  };
  expect_error({"adapter_config.json", "missing", "has_lora_adapter"});
  for (const auto& [key, value] : std::vector<std::pair<std::string, json>>{
           {"use_dora", true}, {"bias", "all"}, {"fan_in_fan_out", true}, {"rank_pattern", {{"q_proj", 8}}},
           {"modules_to_save", {"lm_head"}}}) {
    SCOPED_TRACE(key);
    json ac = f.adapter_config();
    ac[key] = value;
    f.write(ac, f.factors());
    expect_error({"adapter_config.json", key});
  }
  json ac = f.adapter_config();
  ac["target_modules"] = {"q_proj", "to_q"};
  f.write(ac, f.factors());
  expect_error({"adapter_config.json", "to_q", "not a decoder linear layer"});
  // Tensors: a factor alone, another rank, a factor of the speech encoder.
  auto one = f.factors();
  one.pop_back();
  f.write(f.adapter_config(), std::move(one));
  expect_error({"adapter_model.safetensors", "v_proj", "one LoRA factor without the other"});
  f.write(f.adapter_config(4), f.factors(2));
  expect_error({"adapter_model.safetensors", "do not fit", "rank 4"});
  auto encoder = f.factors();
  encoder.push_back(f32("base_model.model.model.encoder.layers.0.attn.to_q.lora_A.weight", {2, 32}, 0.0f));
  f.write(f.adapter_config(), std::move(encoder));
  expect_error({"adapter_model.safetensors", "encoder.layers.0"});
  // The config flag and the tensors file go together.
  f.write(f.adapter_config(), f.factors());
  std::filesystem::remove(f.model + "/adapter_model.safetensors");
  expect_error({"adapter_model.safetensors", "missing"});
}

// The CLI: a bad adapter exits 2 naming the file.
TEST(LoraAdapter, BadAdapterExitsTwoFromTheCli) {
  AdapterFolder f;
  json ac = f.adapter_config();
  ac["use_dora"] = true;
  f.write(ac, f.factors());
  testing::expect_exit2({"run", "--checkpoint", f.model, "--prompt", "hi", "--max_new_tokens", "1"},
                        {"adapter_config.json", "use_dora"});
}

}  // namespace
}  // namespace genai
