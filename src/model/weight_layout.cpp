#include "model/weight_layout.h"

#include <cstring>

#include <algorithm>

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
    {"per_layer_input_gate.weight", "inp_gate.weight"},  // gemma4's per-layer embeddings
    {"per_layer_projection.weight", "proj.weight"},
    {"post_per_layer_input_norm.weight", "post_norm.weight"},
    {"layer_scalar", "layer_output_scale.weight"},
};

// CodeGen's Hugging Face names of canonical tensors (GPT-J's module names).
std::string codegen_hf_name(const std::string& canonical) {
  namespace wn = weight_names;
  if (canonical == wn::embed_tokens()) return "transformer.wte.weight";
  if (canonical == wn::final_norm()) return "transformer.ln_f.weight";
  if (canonical == wn::final_norm_bias()) return "transformer.ln_f.bias";
  if (canonical == wn::lm_head() || canonical == wn::lm_head_bias()) return canonical;
  constexpr std::pair<const char*, const char*> kNames[] = {
      {"input_layernorm.", "ln_1."},
      {"self_attn.o_proj.", "attn.out_proj."},
      {"mlp.up_proj.", "mlp.fc_in."},
      {"mlp.down_proj.", "mlp.fc_out."},
  };
  const std::string prefix = "model.layers.";
  const size_t dot = canonical.find('.', prefix.size());
  if (canonical.rfind(prefix, 0) == 0 && dot != std::string::npos) {
    const std::string rest = canonical.substr(dot + 1);
    for (const auto& [ours, theirs] : kNames)
      if (rest.rfind(ours, 0) == 0)
        return fmt::format("transformer.h.{}.{}{}", canonical.substr(prefix.size(), dot - prefix.size()), theirs,
                           rest.substr(std::string_view(ours).size()));
  }
  throw_failure("internal: tensor {} has no CodeGen name", canonical);
}

}  // namespace

std::vector<WeightSpec> expected_weights(const ModelConfig& c) {
  namespace wn = weight_names;
  std::vector<WeightSpec> out;
  // A norm's weight, and its bias where the family's norms are LayerNorms.
  auto norm = [&](const std::string& weight) {
    out.push_back({weight, {c.dim}});
    if (c.layer_norm) out.push_back({wn::bias_of(weight), {c.dim}});
  };
  out.push_back({wn::embed_tokens(), {c.vocab_size, c.dim}});
  const int64_t ple_width = c.n_layers * c.ple_dim;
  if (c.ple_dim > 0) {
    out.push_back({wn::embed_tokens_per_layer(), {c.ple_vocab, ple_width}});
    out.push_back({wn::per_layer_model_projection(), {ple_width, c.dim}});
    out.push_back({wn::per_layer_projection_norm(), {c.ple_dim}});
  }
  for (int64_t i = 0; i < c.n_layers; ++i) {
    const int64_t hd = c.layer_head_dim(i), q = c.n_heads * hd, kv = c.layer_kv_heads(i) * hd, ffn = c.layer_ffn_dim(i);
    // A layer sharing another's keys and values has no k/v projections; a global layer whose
    // values are its keys has no v_proj.
    const bool own_kv = c.layer_has_kv(i), own_v = own_kv && !c.layer_values_from_keys(i);
    norm(wn::layer(i, "input_layernorm.weight"));
    out.push_back({wn::layer(i, "self_attn.q_proj.weight"), {q, c.dim}});
    if (own_kv) out.push_back({wn::layer(i, "self_attn.k_proj.weight"), {kv, c.dim}});
    if (own_v) out.push_back({wn::layer(i, "self_attn.v_proj.weight"), {kv, c.dim}});
    if (c.qkv_bias) {
      out.push_back({wn::layer(i, "self_attn.q_proj.bias"), {q}});
      out.push_back({wn::layer(i, "self_attn.k_proj.bias"), {kv}});
      out.push_back({wn::layer(i, "self_attn.v_proj.bias"), {kv}});
    }
    if (c.qk_norm) {
      out.push_back({wn::layer(i, "self_attn.q_norm.weight"), {hd}});
      if (own_kv) out.push_back({wn::layer(i, "self_attn.k_norm.weight"), {hd}});
    }
    out.push_back({wn::layer(i, "self_attn.o_proj.weight"), {c.dim, q}});
    if (!c.parallel_blocks) norm(wn::layer(i, "post_attention_layernorm.weight"));
    if (c.sandwich_norms) {
      out.push_back({wn::layer(i, "pre_feedforward_layernorm.weight"), {c.dim}});
      out.push_back({wn::layer(i, "post_feedforward_layernorm.weight"), {c.dim}});
    }
    if (c.gated_ffn) out.push_back({wn::layer(i, "mlp.gate_proj.weight"), {ffn, c.dim}});
    out.push_back({wn::layer(i, "mlp.up_proj.weight"), {ffn, c.dim}});
    if (c.mlp_bias) out.push_back({wn::layer(i, "mlp.up_proj.bias"), {ffn}});
    out.push_back({wn::layer(i, "mlp.down_proj.weight"), {c.dim, ffn}});
    if (c.mlp_bias) out.push_back({wn::layer(i, "mlp.down_proj.bias"), {c.dim}});
    if (c.ple_dim > 0) {
      out.push_back({wn::layer(i, "per_layer_input_gate.weight"), {c.ple_dim, c.dim}});
      out.push_back({wn::layer(i, "per_layer_projection.weight"), {c.dim, c.ple_dim}});
      out.push_back({wn::layer(i, "post_per_layer_input_norm.weight"), {c.dim}});
    }
    if (c.layer_scalars) out.push_back({wn::layer(i, "layer_scalar"), {1}});
  }
  norm(wn::final_norm());
  if (!c.tied_embeddings) out.push_back({wn::lm_head(), {c.vocab_size, c.dim}});
  if (c.lm_head_bias) out.push_back({wn::lm_head_bias(), {c.vocab_size}});
  return out;
}

std::vector<StoredTensor> stored_tensors(const ModelConfig& c, StoredNaming naming) {
  const bool gguf = naming == StoredNaming::kGguf;
  const FusedProjections fused = architecture_info(c.arch).fused;
  if (gguf && !architecture_info(c.arch).has_gguf())
    throw_input_error("{} has no GGUF form (llama.cpp has no such architecture; use a Hugging Face folder)",
                      architecture_name(c.arch));
  auto stored_name = [&](const std::string& canonical) {
    if (!gguf) return c.arch == Architecture::kCodeGen ? codegen_hf_name(canonical) : canonical;
    // With norms around both blocks (gemma2), llama.cpp's names follow the role: the MLP's input
    // norm is ffn_norm, the attention output's post_attention_norm, the MLP output's post_ffw_norm.
    if (c.sandwich_norms) {
      for (const auto& [hf, gg] : {std::pair{"post_attention_layernorm.weight", "post_attention_norm.weight"},
                                   std::pair{"pre_feedforward_layernorm.weight", "ffn_norm.weight"},
                                   std::pair{"post_feedforward_layernorm.weight", "post_ffw_norm.weight"}}) {
        const std::string suffix = std::string(".") + hf;
        if (canonical.size() > suffix.size() && canonical.compare(canonical.size() - suffix.size(), suffix.size(), suffix) == 0) {
          const std::string layer = canonical.substr(0, canonical.size() - suffix.size());  // model.layers.N
          return fmt::format("blk.{}.{}", layer.substr(layer.rfind('.') + 1), gg);
        }
      }
    }
    auto n = gguf_name_of(canonical);
    if (!n) throw_failure("internal: tensor {} has no GGUF name", canonical);
    return *n;
  };
  std::vector<StoredTensor> out;
  const std::vector<WeightSpec> specs = expected_weights(c);
  for (size_t i = 0; i < specs.size(); ++i) {
    const WeightSpec& s = specs[i];
    // Fused families: consecutive tensors of expected_weights (q, k, v; gate, up) into one, the
    // parts in `order`, in `groups` rounds (CodeGen's qkv_proj).
    auto fuse = [&](const char* first, std::vector<size_t> order, const std::string& hf_suffix,
                    const std::string& gguf_suffix, int64_t groups = 1) {
      if (!c.n_layers || s.name.find(first) == std::string::npos) return false;
      const std::string layer = s.name.substr(0, s.name.find(first));  // "model.layers.N."
      const std::string_view prefix = "model.layers.";
      const std::string n = layer.substr(prefix.size(), layer.size() - prefix.size() - 1);
      const std::string hf_layer = c.arch == Architecture::kCodeGen ? fmt::format("transformer.h.{}.", n) : layer;
      StoredTensor t;
      t.name = gguf ? fmt::format("blk.{}.{}", n, gguf_suffix) : hf_layer + hf_suffix;
      int64_t rows = 0;
      for (size_t k : order) {
        t.parts.push_back(specs[i + k]);
        rows += specs[i + k].shape[0];
      }
      t.shape = {rows, s.shape[1]};
      t.groups = groups;
      out.push_back(std::move(t));
      i += order.size() - 1;
      return true;
    };
    if (fused == FusedProjections::kGroupedQvk && fuse("self_attn.q_proj.weight", {0, 2, 1}, "attn.qkv_proj.weight", "", 4))
      continue;  // q, v, k
    if (fused == FusedProjections::kQkvAndGateUp &&
        fuse("self_attn.q_proj.weight", {0, 1, 2}, "self_attn.qkv_proj.weight", "attn_qkv.weight"))
      continue;
    if ((fused == FusedProjections::kGateUp || fused == FusedProjections::kQkvAndGateUp) &&
        fuse("mlp.gate_proj.weight", {0, 1}, "mlp.gate_up_proj.weight", "ffn_up.weight"))
      continue;
    out.push_back({stored_name(s.name), s.shape, {s}});
  }
  return out;
}

namespace {

// Calls f(part, part_row, stored_row, rows) for each run of rows a part has in the stored tensor.
template <typename F>
void for_each_run(const StoredTensor& t, F&& f) {
  int64_t stored_row = 0;
  for (int64_t g = 0; g < t.groups; ++g)
    for (size_t p = 0; p < t.parts.size(); ++p) {
      const int64_t rows = t.parts[p].shape[0];
      if (rows % t.groups != 0)
        throw_input_error("{}: {} rows of {} do not split into {} groups", t.name, rows, t.parts[p].name, t.groups);
      f(p, g * (rows / t.groups), stored_row, rows / t.groups);
      stored_row += rows / t.groups;
    }
}

int64_t row_length(const WeightSpec& p) { return p.shape.size() > 1 ? shape_numel(p.shape) / p.shape[0] : 1; }

}  // namespace

std::vector<Tensor> split_stored(const StoredTensor& t, const Tensor& stored) {
  if (t.parts.size() == 1) return {stored};
  // Rows move whole, in the stored element type. A part stored as one run of rows (every
  // ungrouped fused tensor) is a view of `stored` where `stored` is one (a mapped checkpoint).
  const size_t row_bytes = static_cast<size_t>(row_length(t.parts[0])) * dtype_size(stored.dtype());
  const auto* src = static_cast<const uint8_t*>(stored.raw());
  std::vector<Tensor> out(t.parts.size());
  if (t.groups == 1 && stored.is_view()) {
    int64_t stored_row = 0;
    for (size_t p = 0; p < t.parts.size(); ++p) {
      out[p] = Tensor::view(stored.dtype(), t.parts[p].shape, src + static_cast<size_t>(stored_row) * row_bytes,
                            stored.storage());
      stored_row += t.parts[p].shape[0];
    }
    return out;
  }
  for (size_t p = 0; p < t.parts.size(); ++p) out[p] = Tensor::zeros(stored.dtype(), t.parts[p].shape);
  for_each_run(t, [&](size_t p, int64_t part_row, int64_t stored_row, int64_t rows) {
    std::memcpy(static_cast<uint8_t*>(out[p].mutable_raw()) + static_cast<size_t>(part_row) * row_bytes,
                src + static_cast<size_t>(stored_row) * row_bytes, static_cast<size_t>(rows) * row_bytes);
  });
  return out;
}

Tensor stack_stored(const StoredTensor& t, const std::vector<Tensor>& parts) {
  if (parts.size() == 1) return parts[0];
  Tensor out = Tensor::zeros(DType::kF32, t.shape);
  const int64_t cols = row_length(t.parts[0]);
  for_each_run(t, [&](size_t p, int64_t part_row, int64_t stored_row, int64_t rows) {
    std::copy_n(parts[p].data<float>() + part_row * cols, rows * cols, out.mutable_data<float>() + stored_row * cols);
  });
  return out;
}

bool hf_stores_norm_offset(const ModelConfig& c, const std::string& canonical) {
  const std::string_view suffix = "norm.weight";
  return architecture_info(c.arch).hf_norm_offset && canonical.size() >= suffix.size() &&
         canonical.compare(canonical.size() - suffix.size(), suffix.size(), suffix) == 0;
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
  if (canonical == wn::embed_tokens_per_layer()) return "per_layer_token_embd.weight";
  if (canonical == wn::per_layer_model_projection()) return "per_layer_model_proj.weight";
  if (canonical == wn::per_layer_projection_norm()) return "per_layer_proj_norm.weight";
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
