#include "model/weight_layout.h"

#include <fmt/format.h>

#include "core/error.h"
#include "model/weights.h"

namespace genai {
namespace {

// canonical per-layer suffix <-> GGUF per-layer suffix
constexpr std::pair<const char*, const char*> kLayerNames[] = {
    {"input_layernorm.weight", "attn_norm.weight"},
    {"self_attn.q_proj.weight", "attn_q.weight"},
    {"self_attn.q_proj.bias", "attn_q.bias"},
    {"self_attn.k_proj.weight", "attn_k.weight"},
    {"self_attn.k_proj.bias", "attn_k.bias"},
    {"self_attn.v_proj.weight", "attn_v.weight"},
    {"self_attn.v_proj.bias", "attn_v.bias"},
    {"self_attn.q_norm.weight", "attn_q_norm.weight"},
    {"self_attn.k_norm.weight", "attn_k_norm.weight"},
    {"self_attn.o_proj.weight", "attn_output.weight"},
    {"post_attention_layernorm.weight", "ffn_norm.weight"},
    {"mlp.gate_proj.weight", "ffn_gate.weight"},
    {"mlp.up_proj.weight", "ffn_up.weight"},
    {"mlp.down_proj.weight", "ffn_down.weight"},
};

}  // namespace

std::vector<WeightSpec> expected_weights(const ModelConfig& c) {
  namespace wn = weight_names;
  const int64_t q = c.n_heads * c.head_dim, kv = c.n_kv_heads * c.head_dim;
  std::vector<WeightSpec> out;
  out.push_back({wn::embed_tokens(), {c.vocab_size, c.dim}});
  for (int64_t i = 0; i < c.n_layers; ++i) {
    out.push_back({wn::layer(i, "input_layernorm.weight"), {c.dim}});
    out.push_back({wn::layer(i, "self_attn.q_proj.weight"), {q, c.dim}});
    out.push_back({wn::layer(i, "self_attn.k_proj.weight"), {kv, c.dim}});
    out.push_back({wn::layer(i, "self_attn.v_proj.weight"), {kv, c.dim}});
    if (c.qkv_bias) {
      out.push_back({wn::layer(i, "self_attn.q_proj.bias"), {q}});
      out.push_back({wn::layer(i, "self_attn.k_proj.bias"), {kv}});
      out.push_back({wn::layer(i, "self_attn.v_proj.bias"), {kv}});
    }
    if (c.qk_norm) {
      out.push_back({wn::layer(i, "self_attn.q_norm.weight"), {c.head_dim}});
      out.push_back({wn::layer(i, "self_attn.k_norm.weight"), {c.head_dim}});
    }
    out.push_back({wn::layer(i, "self_attn.o_proj.weight"), {c.dim, q}});
    out.push_back({wn::layer(i, "post_attention_layernorm.weight"), {c.dim}});
    out.push_back({wn::layer(i, "mlp.gate_proj.weight"), {c.ffn_dim, c.dim}});
    out.push_back({wn::layer(i, "mlp.up_proj.weight"), {c.ffn_dim, c.dim}});
    out.push_back({wn::layer(i, "mlp.down_proj.weight"), {c.dim, c.ffn_dim}});
  }
  out.push_back({wn::final_norm(), {c.dim}});
  if (!c.tied_embeddings) out.push_back({wn::lm_head(), {c.vocab_size, c.dim}});
  return out;
}

std::string rotary_projection_kind(const std::string& canonical) {
  if (canonical.find("self_attn.q_proj.") != std::string::npos) return "q";
  if (canonical.find("self_attn.k_proj.") != std::string::npos) return "k";
  return "";
}

std::optional<std::string> gguf_name_of(const std::string& canonical) {
  namespace wn = weight_names;
  if (canonical == wn::embed_tokens()) return "token_embd.weight";
  if (canonical == wn::final_norm()) return "output_norm.weight";
  if (canonical == wn::lm_head()) return "output.weight";
  const std::string prefix = "model.layers.";
  if (canonical.rfind(prefix, 0) != 0) return std::nullopt;
  const size_t dot = canonical.find('.', prefix.size());
  if (dot == std::string::npos) return std::nullopt;
  const std::string layer = canonical.substr(prefix.size(), dot - prefix.size());
  const std::string suffix = canonical.substr(dot + 1);
  for (const auto& [hf, gg] : kLayerNames)
    if (suffix == hf) return fmt::format("blk.{}.{}", layer, gg);
  return std::nullopt;
}

void check_weight_shape(const std::string& source, const std::string& stored_name, const WeightSpec& spec,
                        const Shape& actual) {
  if (actual == spec.shape) return;
  if (stored_name == spec.name)
    throw_input_error("{}: tensor {}: expected shape {}, got {}", source, spec.name, shape_to_string(spec.shape),
                      shape_to_string(actual));
  throw_input_error("{}: tensor {} ({}): expected shape {}, got {}", source, stored_name, spec.name,
                    shape_to_string(spec.shape), shape_to_string(actual));
}

}  // namespace genai
