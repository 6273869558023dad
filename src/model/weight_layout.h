// The tensors a config implies, with their shapes, in canonical order; and the name tables
// between canonical (Hugging Face) names and GGUF names. One place, so no loader or writer
// spells a name twice.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "model/model_config.h"

namespace genai {

struct WeightSpec {
  std::string name;  // canonical
  Shape shape;
};

// Every tensor of `config` (lm_head only when not tied; q/k/v biases only for qkv_bias, q/k norms only for qk_norm).
std::vector<WeightSpec> expected_weights(const ModelConfig& config);

// A tensor as a checkpoint stores it: one canonical weight, or several stacked along dim 0 (the
// fused projections of phi3: qkv_proj = [q; k; v], gate_up_proj = [gate; up]). Loaders split
// stored tensors into their parts; writers stack the parts.
struct StoredTensor {
  std::string name;               // Hugging Face or GGUF name
  Shape shape;
  std::vector<WeightSpec> parts;  // canonical, in row order
  // The parts' rows come in `groups` rounds: round g holds rows [g*r/groups, (g+1)*r/groups) of
  // each part of r rows, in part order (CodeGen's qkv_proj: 4 rounds of q, v, k).
  int64_t groups = 1;
};
enum class StoredNaming { kHuggingFace, kGguf };
// Every stored tensor of `config`'s checkpoints in that naming, in canonical order.
std::vector<StoredTensor> stored_tensors(const ModelConfig& config, StoredNaming naming);
// `stored` (float32, shape of `t`) cut into its parts' tensors / the parts stacked back.
std::vector<Tensor> split_stored(const StoredTensor& t, const Tensor& stored);
Tensor stack_stored(const StoredTensor& t, const std::vector<Tensor>& parts);

// True for a norm weight that `config`'s HF checkpoints store as w - 1 (gemma): loaders add 1,
// writers subtract it, so canonical weights are always the multiplier itself.
bool hf_stores_norm_offset(const ModelConfig& config, const std::string& canonical);

// "q" / "k" when `canonical` is a q_proj / k_proj weight or bias (rows in rotary order), else "".
std::string rotary_projection_kind(const std::string& canonical);

// GGUF tensor name of a canonical name ("model.layers.3.self_attn.q_proj.weight" ->
// "blk.3.attn_q.weight"); nullopt for names GGUF has no slot for.
std::optional<std::string> gguf_name_of(const std::string& canonical);

// Throws InputError "<source>: tensor <stored> (<canonical>): expected shape [..], got [..]".
void check_weight_shape(const std::string& source, const std::string& stored_name, const WeightSpec& spec,
                        const Shape& actual);

}  // namespace genai
