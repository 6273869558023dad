// Quantization recipes: what bit widths each tensor gets. A recipe is a default scheme (e.g.
// 16a4w: 16-bit activations, 4-bit per-channel weights) plus per-layer overrides by regular
// expression on tensor names (op result names such as "lm_head.out" or
// "layers.3.mlp.down_proj.out", see docs/graphs.md), and the KV cache I/O width.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/model_config.h"
#include "options/quant_recipe_option.h"
#include "quant/encoding.h"

namespace genai::quant {

// One scheme: activation and weight element types, weight block size (0 = per channel).
struct Scheme {
  QDType act = QDType::kU16;
  QDType weight = QDType::kI8;
  int64_t block_size = 0;
  bool operator==(const Scheme&) const = default;
};
std::string scheme_name(const Scheme& s);  // "16a4w", "16a4w_block:32", "fp16"
// "16a16w", "16a8w", "16a4w", "16a4w_block[:G]" (G in 16/32/64, default 32), "8a8w", "8a4w",
// "fp16". InputError naming `option` and the valid spellings otherwise.
Scheme parse_scheme(std::string_view spelling, std::string_view option = "--quant_recipe");
const std::vector<std::string>& scheme_spellings();

struct Override {
  std::string pattern;  // std::regex (ECMAScript), matched against the whole tensor name
  Scheme scheme;
  // Where the user gave it ("--quant_override", a recipe file); empty for a recipe's own
  // overrides. A user's override must match some tensor (check_overrides_match).
  std::string origin = {};
};

struct Recipe {
  std::string name;      // what the user asked for / the model default
  Scheme base;
  std::vector<Override> overrides;  // first match wins
  QDType kv = QDType::kU16;         // KV cache I/O (k_out/v_out and the cache inputs)
  // Weight range search (quant/encoding.h WeightSearch) with this many candidates; 0: off.
  int64_t seq_mse_candidates = 0;
  // Linear weights by GPTQ (quant/gptq.h) on the calibration inputs' Gram matrices.
  bool gptq = false;
  // -E/--embedding_quantize: the token embedding table's weight type and group (0: per row);
  // unset: the scheme of embed.out, per row.
  std::optional<Scheme> embedding_table;
  bool is_float() const { return base.act == QDType::kF16; }
  // Scheme for the op result `tensor_name` (overrides, then base).
  Scheme scheme_for(const std::string& tensor_name) const;
};

// A recipe from a --quant_recipe spelling: the scheme everywhere, the KV cache 8-bit (16-bit for
// 16a16w; derive_encodings makes an 8-bit cache symmetric), the output head and the embedding table at 8 bits when weights are
// narrower (upstream keeps the head at 8 bits in every 4-bit recipe; a 4-bit tied table
// destroys small models), float16 for "fp16".
Recipe recipe_from_spelling(std::string_view spelling);
// The recipe of a parsed --quant_recipe / --quant_block_size choice (src/options).
Recipe recipe_from_choice(const options::QuantRecipeChoice& choice);
// Upstream-like per-model defaults, chosen from the model name/shape: stories (llama2.c-sized)
// 16a4w with the output head 16a8w; smollm2 16a8w; llama 3.2 1B 16a4w_block:32 with the output
// head 16a8w; qwen3 0.6B / 1.7B 16a4w_block:32 (down projections 16a8w) / :16; granite 3.3
// 16a4w_block:64 (v projections 16a8w); smollm3 16a4w_block:32 (q/k/v 16a8w);
// phi-4-mini 16a4w_block:16 (v projections 8a4w); gemma-2b and gemma3-1b 16a4w_block:64,
// gemma2-2b 16a4w_block:32 (v projections 16a8w); gemma4-e2b 16a4w_block:64 with a 16-bit KV
// cache; glm-1_5b 16a4w_block:32; smolvlm's and internvl3's decoders 16a8w; anything else 16a8w.
Recipe default_recipe(std::string_view model_name, int64_t n_layers, int64_t dim);
// `recipe` as it applies to a model of `config`: an integer recipe keeps a 16-bit KV cache where
// the model asks for one (ModelConfig::wide_kv_cache), its name saying so.
Recipe fit_recipe_to_model(const Recipe& recipe, const ModelConfig& config);
// Adds "regex=scheme" overrides (e.g. "layers\.0\..*=16a8w"); InputError naming `option` on a
// bad regex or scheme.
void add_override(Recipe& recipe, std::string_view spec, std::string_view option = "--quant_override");

// -E/--embedding_quantize "bits,group" (upstream's spelling): the embedding table (the gather of
// embed.out) at int4 or int8, symmetric, one scale per row (group 0) or per group of `group`
// columns. InputError naming `option` for other bit widths, a malformed spec or a float recipe.
void set_embedding_quantization(Recipe& recipe, std::string_view spec, std::string_view option = "--embedding_quantize");

// A recipe file (--quant_recipe_file), JSON: {"recipe": "16a4w_block:32", "overrides":
// ["REGEX=RECIPE", ...], "seq_mse_candidates": N, "gptq": true}, every key optional; overrides keep the
// file's order (first match wins) ahead of the recipe's own. Without "recipe", `fallback` (the
// --quant_recipe or model default) is the base. InputError naming the file and the key for
// anything malformed or unknown.
Recipe recipe_from_file(const std::filesystem::path& file, const Recipe& fallback);

// InputError naming the override and where it came from when a user's override matches none of
// `tensor_names` (op result names of the model's graphs).
void check_overrides_match(const Recipe& recipe, const std::vector<std::string>& tensor_names);

}  // namespace genai::quant
