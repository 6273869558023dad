// Named weights of a decoder, under canonical Hugging Face names, in HF layout (rows = output
// features; q/k rows in the rotate-half order HF uses). Loaders convert every source to this.
//
//   model.embed_tokens.weight                    [vocab, dim]
//   model.layers.{i}.input_layernorm.weight      [dim]
//   model.layers.{i}.self_attn.{q,k,v,o}_proj.weight   q:[n_heads*head_dim, dim] k,v:[n_kv*head_dim, dim] o:[dim, n_heads*head_dim]
//   model.layers.{i}.self_attn.{q,k,v}_proj.bias (qwen2)
//   model.layers.{i}.post_attention_layernorm.weight   [dim]
//   model.layers.{i}.mlp.{gate,up}_proj.weight   [ffn, dim];  mlp.down_proj.weight [dim, ffn]
//   model.norm.weight                            [dim]
//   lm_head.weight                               [vocab, dim] (absent when tied)
// CodeGen's LayerNorms and biased MLP and head add input_layernorm.bias, model.norm.bias,
// mlp.{up,down}_proj.bias and lm_head.bias (and have no gate_proj or post_attention_layernorm).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace genai {

class Weights {
 public:
  void add(std::string name, Tensor t);
  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  // Throws InputError "missing tensor <name>" (prefixed by the source) when absent.
  const Tensor& get(const std::string& name) const;
  const std::map<std::string, Tensor>& all() const { return tensors_; }
  size_t size() const { return tensors_.size(); }
  void set_source(std::string source) { source_ = std::move(source); }
  const std::string& source() const { return source_; }

 private:
  std::map<std::string, Tensor> tensors_;
  std::string source_;
};

// Canonical names, so no layer spells them twice.
namespace weight_names {
std::string embed_tokens();
std::string final_norm();
std::string final_norm_bias();  // LayerNorm families (codegen)
std::string lm_head();
std::string lm_head_bias();
std::string layer(int64_t i, const char* suffix);  // layer(3, "self_attn.q_proj.weight")
// Gemma 4's per-layer embeddings: the token table, the projection of the embeddings and its norm.
std::string embed_tokens_per_layer();
std::string per_layer_model_projection();
std::string per_layer_projection_norm();
std::string bias_of(const std::string& weight);    // "<x>.weight" -> "<x>.bias"
}  // namespace weight_names

}  // namespace genai
