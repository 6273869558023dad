#include "model/speech_tower.h"

#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/tower_tensors.h"

namespace genai {
namespace {

using nlohmann::json;

int64_t positive(const json& j, const char* key, const std::string& source) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer() || it->get<int64_t>() <= 0)
    throw_input_error("{}: key {} must be a positive integer{}", source, key, it == j.end() ? " (missing)" : ", got " + it->dump());
  return it->get<int64_t>();
}

void only_keys(const json& j, const std::set<std::string>& known, const std::string& source) {
  for (const auto& [key, value] : j.items())
    if (!known.count(key)) throw_input_error("{}: key {} is not handled", source, key);
}

void require(const json& j, const char* key, const json& want, const std::string& source) {
  if (auto it = j.find(key); it != j.end() && *it != want)
    throw_input_error("{}: {} = {} is not supported (supported: {})", source, key, it->dump(), want.dump());
}

// The checkpoint's shape of a canonical tensor (convolutions keep their kernel axes there).
Shape stored_shape(const SpeechTowerConfig& c, const WeightSpec& spec) {
  const std::string& n = spec.name;
  auto ends = [&](std::string_view s) { return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0; };
  if (ends("conv.up_conv.weight") || ends("conv.down_conv.weight")) return {spec.shape[0], spec.shape[1], 1};
  if (ends("depth_conv.conv.weight")) return {c.conv_dim(), 1, c.conv_kernel};
  if (n == "projector.query") return {1, c.queries(), c.q_dim};
  return spec.shape;
}

}  // namespace

void SpeechTowerConfig::validate(const std::string& source) const {
  if (n_layers < 2 || dim <= 0 || n_heads <= 0 || head_dim <= 0 || ctc_dim <= 0 || q_dim <= 0 || q_layers <= 0 ||
      q_heads <= 0 || q_ffn <= 0 || text_dim <= 0)
    throw_input_error("{}: speech tower sizes must be positive (and at least 2 encoder layers)", source);
  if (context > max_pos_emb) throw_input_error("{}: context_size {} exceeds max_pos_emb {}", source, context, max_pos_emb);
  if (q_dim % q_heads != 0) throw_input_error("{}: Q-Former hidden_size {} is not a multiple of its {} heads", source, q_dim, q_heads);
  if (q_encoder_dim != dim)
    throw_input_error("{}: the Q-Former reads {}-wide frames but the encoder gives {}", source, q_encoder_dim, dim);
  if (downsample <= 0 || window % downsample != 0)
    throw_input_error("{}: downsample_rate {} must divide window_size {}", source, downsample, window);
  if (audio_token_id < 0) throw_input_error("{}: audio_token_index must be a token id", source);
}

std::vector<WeightSpec> speech_tower_weights(const SpeechTowerConfig& c) {
  const int64_t D = c.dim, F = c.dim * c.ffn_mult, I = c.conv_dim(), A = c.inner_dim(), Q = c.q_dim;
  std::vector<WeightSpec> w{{"encoder.input_linear.weight", {D, c.input_dim}}, {"encoder.input_linear.bias", {D}}};
  auto norm = [&](const std::string& p, int64_t n) {
    w.push_back({p + ".weight", {n}});
    w.push_back({p + ".bias", {n}});
  };
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const std::string p = fmt::format("encoder.layers.{}.", l);
    for (const char* ff : {"ff1", "ff2"}) {
      norm(p + ff + ".pre_norm", D);
      w.push_back({p + ff + ".up_proj.weight", {F, D}});
      w.push_back({p + ff + ".up_proj.bias", {F}});
      w.push_back({p + ff + ".down_proj.weight", {D, F}});
      w.push_back({p + ff + ".down_proj.bias", {D}});
    }
    norm(p + "attn.pre_norm", D);
    w.push_back({p + "attn.to_q.weight", {A, D}});
    w.push_back({p + "attn.to_kv.weight", {2 * A, D}});
    w.push_back({p + "attn.to_out.weight", {D, A}});
    w.push_back({p + "attn.to_out.bias", {D}});
    w.push_back({p + "attn.rel_pos_emb.weight", {2 * c.max_pos_emb + 1, c.head_dim}});
    norm(p + "conv.norm", D);
    w.push_back({p + "conv.up_conv.weight", {2 * I, D}});
    w.push_back({p + "conv.up_conv.bias", {2 * I}});
    w.push_back({p + "conv.depth_conv.conv.weight", {I, c.conv_kernel}});
    for (const char* b : {"weight", "bias", "running_mean", "running_var"}) w.push_back({p + "conv.batch_norm." + b, {I}});
    w.push_back({p + "conv.down_conv.weight", {D, I}});
    w.push_back({p + "conv.down_conv.bias", {D}});
    norm(p + "post_norm", D);
  }
  w.push_back({"encoder.out.weight", {c.ctc_dim, D}});
  w.push_back({"encoder.out.bias", {c.ctc_dim}});
  w.push_back({"encoder.out_mid.weight", {D, c.ctc_dim}});
  w.push_back({"encoder.out_mid.bias", {D}});
  w.push_back({"projector.query", {c.queries(), Q}});
  norm("projector.qformer.layernorm", Q);
  for (int64_t l = 0; l < c.q_layers; ++l) {
    const std::string p = fmt::format("projector.qformer.encoder.layer.{}.", l);
    for (const char* a : {"attention", "crossattention"}) {
      const int64_t in = std::string(a) == "attention" ? Q : c.q_encoder_dim;
      w.push_back({p + a + ".attention.query.weight", {Q, Q}});
      w.push_back({p + a + ".attention.query.bias", {Q}});
      for (const char* kv : {"key", "value"}) {
        w.push_back({p + a + ".attention." + kv + ".weight", {Q, in}});
        w.push_back({p + a + ".attention." + kv + ".bias", {Q}});
      }
      w.push_back({p + a + ".output.dense.weight", {Q, Q}});
      w.push_back({p + a + ".output.dense.bias", {Q}});
      norm(p + a + ".output.LayerNorm", Q);
    }
    w.push_back({p + "intermediate_query.dense.weight", {c.q_ffn, Q}});
    w.push_back({p + "intermediate_query.dense.bias", {c.q_ffn}});
    w.push_back({p + "output_query.dense.weight", {Q, c.q_ffn}});
    w.push_back({p + "output_query.dense.bias", {Q}});
    norm(p + "output_query.LayerNorm", Q);
  }
  w.push_back({"projector.linear.weight", {c.text_dim, Q}});
  w.push_back({"projector.linear.bias", {c.text_dim}});
  return w;
}

bool is_speech_config(const json& config) { return config.value("model_type", "") == "granite_speech"; }

SpeechTowerConfig read_speech_tower_config(const json& top, const std::string& file) {
  SpeechTowerConfig c;
  auto ec = top.find("encoder_config");
  auto pc = top.find("projector_config");
  auto tc = top.find("text_config");
  if (ec == top.end() || !ec->is_object() || pc == top.end() || !pc->is_object() || tc == top.end() || !tc->is_object())
    throw_input_error("{}: a Granite Speech config needs encoder_config, projector_config and text_config objects", file);
  const std::string es = file + " encoder_config", ps = file + " projector_config";
  only_keys(*ec, {"input_dim", "num_layers", "hidden_dim", "feedforward_mult", "num_heads", "dim_head", "output_dim",
                  "context_size", "max_pos_emb", "conv_kernel_size", "conv_expansion_factor", "dropout", "model_type"},
            es);
  c.input_dim = positive(*ec, "input_dim", es);
  c.n_layers = positive(*ec, "num_layers", es);
  c.dim = positive(*ec, "hidden_dim", es);
  c.ffn_mult = positive(*ec, "feedforward_mult", es);
  c.n_heads = positive(*ec, "num_heads", es);
  c.head_dim = positive(*ec, "dim_head", es);
  c.ctc_dim = positive(*ec, "output_dim", es);
  c.context = positive(*ec, "context_size", es);
  c.max_pos_emb = positive(*ec, "max_pos_emb", es);
  c.conv_kernel = positive(*ec, "conv_kernel_size", es);
  c.conv_expansion = positive(*ec, "conv_expansion_factor", es);
  require(*pc, "model_type", "blip_2_qformer", ps);
  require(*pc, "hidden_act", "gelu", ps);
  require(*pc, "cross_attention_frequency", 1, ps);
  require(*pc, "use_qformer_text_input", false, ps);
  require(*pc, "position_embedding_type", "absolute", ps);
  c.q_dim = positive(*pc, "hidden_size", ps);
  c.q_layers = positive(*pc, "num_hidden_layers", ps);
  c.q_heads = positive(*pc, "num_attention_heads", ps);
  c.q_ffn = positive(*pc, "intermediate_size", ps);
  c.q_encoder_dim = positive(*pc, "encoder_hidden_size", ps);
  if (auto e = pc->find("layer_norm_eps"); e != pc->end()) {
    if (!e->is_number() || e->get<double>() <= 0.0) throw_input_error("{}: layer_norm_eps must be a positive number", ps);
    c.q_norm_eps = e->get<float>();
  }
  if (auto lora = top.find("has_lora_adapter"); lora != top.end()) {
    if (!lora->is_boolean()) throw_input_error("{}: has_lora_adapter must be true or false, not {}", file, lora->dump());
    c.lora_adapter = lora->get<bool>();
  }
  c.window = positive(top, "window_size", file);
  c.downsample = positive(top, "downsample_rate", file);
  c.audio_token_id = static_cast<int32_t>(positive(top, "audio_token_index", file));
  c.text_dim = positive(*tc, "hidden_size", file + " text_config");
  c.validate(file);
  return c;
}

SpeechTower load_speech_tower(const std::filesystem::path& dir, const json& config, const SafetensorsCheckpoint& ckpt) {
  SpeechTower t;
  t.config = read_speech_tower_config(config, (dir / "config.json").string());
  t.weights = read_tower_tensors(dir, speech_tower_weights(t.config), ckpt, [&](const WeightSpec& spec) {
    return TowerTensor{spec.name, stored_shape(t.config, spec)};
  });
  t.processor_config = tower_processor_config(dir, "the feature extractor's settings");
  return t;
}

void add_speech_tower_config(const SpeechTowerConfig& c, json& config) {
  config["model_type"] = "granite_speech";
  config["architectures"] = json::array({"GraniteSpeechForConditionalGeneration"});
  config["encoder_config"] = {{"model_type", "granite_speech_encoder"}, {"input_dim", c.input_dim},
                              {"num_layers", c.n_layers},             {"hidden_dim", c.dim},
                              {"feedforward_mult", c.ffn_mult},       {"num_heads", c.n_heads},
                              {"dim_head", c.head_dim},               {"output_dim", c.ctc_dim},
                              {"context_size", c.context},            {"max_pos_emb", c.max_pos_emb},
                              {"conv_kernel_size", c.conv_kernel},    {"conv_expansion_factor", c.conv_expansion}};
  config["projector_config"] = {{"model_type", "blip_2_qformer"},     {"hidden_size", c.q_dim},
                                {"num_hidden_layers", c.q_layers},    {"num_attention_heads", c.q_heads},
                                {"intermediate_size", c.q_ffn},       {"encoder_hidden_size", c.q_encoder_dim},
                                {"layer_norm_eps", static_cast<double>(c.q_norm_eps)},
                                {"cross_attention_frequency", 1},     {"hidden_act", "gelu"},
                                {"use_qformer_text_input", false}};
  config["audio_token_index"] = c.audio_token_id;
  config["window_size"] = c.window;
  config["downsample_rate"] = c.downsample;
  config["has_lora_adapter"] = false;
}

std::vector<SafetensorsTensorToWrite> speech_tower_tensors(const SpeechTowerConfig& c, const Weights& weights) {
  return tower_tensors_to_write("speech tower", speech_tower_weights(c), weights,
                                [&](const WeightSpec& spec) { return TowerTensor{spec.name, stored_shape(c, spec)}; });
}

}  // namespace genai
