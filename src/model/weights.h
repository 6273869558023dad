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
#include <memory>
#include <string>
#include <vector>

#include "core/mapped_file.h"
#include "core/tensor.h"

namespace genai {

// A weight is kept as its checkpoint stores it: float32, or float16 / bfloat16 as a view of the
// mapped file, so that a 16-bit checkpoint is never held in memory as float32 all at once.
// Whoever computes with a weight asks for f32(name): converted on each call, and a view's file
// pages released from the resident set right after (MappedFile::release).
class Weights {
 public:
  // `map`: the file `t` is a view of, when it is one (its pages are released after conversions).
  void add(std::string name, Tensor t, std::shared_ptr<const MappedFile> map = nullptr);
  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  // The weight as stored (F32, F16 or BF16). Throws InputError "missing tensor <name>" (prefixed
  // by the source) when absent.
  const Tensor& get(const std::string& name) const;
  // The weight as float32: the stored tensor itself when it is float32, else a converted copy.
  Tensor f32(const std::string& name) const;
  // Done reading a weight as stored (get): a view's file pages leave the resident set. Reading
  // it again faults them back in from the page cache.
  void release(const std::string& name) const;
  const std::map<std::string, Tensor>& all() const { return tensors_; }
  size_t size() const { return tensors_.size(); }
  void set_source(std::string source) { source_ = std::move(source); }
  const std::string& source() const { return source_; }

 private:
  std::map<std::string, Tensor> tensors_;
  std::map<std::string, std::shared_ptr<const MappedFile>> maps_;  // the views' files, by name
  std::string source_;
};

// Elements [begin, begin + count) of a float32, float16 or bfloat16 tensor as float32, exactly
// (kernels::widen_f16 for float16): the one conversion of stored weights, whether a whole
// weight (Weights::f32) or a block of its rows (the interpreter, the lowering) is read.
void widen_to_f32(const Tensor& t, int64_t begin, int64_t count, float* dst);

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
// A LoRA adapter's factors of a linear layer's weight, as the adapter's graphs name them:
// "<x>.weight" -> "<x>.lora_A.weight" [r, in] and "<x>.lora_B.weight" [out, r] (scale folded in).
std::string lora_a_of(const std::string& weight);
std::string lora_b_of(const std::string& weight);
}  // namespace weight_names

}  // namespace genai
