#include "quant/recipe.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace genai::quant {

const std::vector<std::string>& scheme_spellings() {
  static const std::vector<std::string> names{"16a16w", "16a8w", "16a4w", "16a4w_block:16", "16a4w_block:32",
                                              "16a4w_block:64", "8a8w", "8a4w", "fp16"};
  return names;
}

std::string scheme_name(const Scheme& s) {
  if (s.act == QDType::kF16) return "fp16";
  const int a = qdtype_bits(s.act), w = qdtype_bits(s.weight);
  std::string n = fmt::format("{}a{}w", a, w);
  if (s.block_size > 0) n += fmt::format("_block:{}", s.block_size);
  return n;
}

Scheme parse_scheme(std::string_view spelling, std::string_view option) {
  const std::string s(spelling);
  auto bad = [&]() -> Scheme {
    throw_input_error("{}: unknown quantization recipe '{}' (valid: 16a16w, 16a8w, 16a4w, 16a4w_block[:16|32|64], "
                      "8a8w, 8a4w, fp16)",
                      option, s);
  };
  if (s == "16a16w") return {QDType::kU16, QDType::kI16, 0};
  if (s == "16a8w") return {QDType::kU16, QDType::kI8, 0};
  if (s == "16a4w") return {QDType::kU16, QDType::kI4, 0};
  if (s == "8a8w") return {QDType::kU8, QDType::kI8, 0};
  if (s == "8a4w") return {QDType::kU8, QDType::kI4, 0};
  if (s == "fp16") return {QDType::kF16, QDType::kF16, 0};
  if (s == "16a4w_block") return {QDType::kU16, QDType::kI4, 32};
  if (s.rfind("16a4w_block:", 0) == 0) {
    const std::string g = s.substr(12);
    if (g == "16" || g == "32" || g == "64") return {QDType::kU16, QDType::kI4, std::stoll(g)};
  }
  return bad();
}

Scheme Recipe::scheme_for(const std::string& tensor_name) const {
  for (const Override& o : overrides)
    if (std::regex_match(tensor_name, std::regex(o.pattern))) return o.scheme;
  return base;
}

namespace {
const char* kHead = "lm_head\\.out";
const char* kEmbed = "embed\\.out";
}  // namespace

Recipe recipe_from_spelling(std::string_view spelling) {
  Recipe r;
  r.name = std::string(spelling);
  r.base = parse_scheme(spelling);
  if (r.is_float()) {
    r.kv = QDType::kF16;
    return r;
  }
  // 8-bit KV cache everywhere but 16a16w: the second operand of Q.K^T and P.V is what upstream's
  // 16a8w matmul annotation makes 8-bit, and the HTP has no native 16 x 16-bit matmul.
  r.kv = r.base.act == QDType::kU16 && r.base.weight == QDType::kI16 ? QDType::kU16 : QDType::kU8;
  if (qdtype_bits(r.base.weight) < 8) {
    r.overrides.push_back({kHead, {r.base.act, QDType::kI8, 0}});
    r.overrides.push_back({kEmbed, {r.base.act, QDType::kI8, 0}});
  }
  return r;
}

Recipe recipe_from_choice(const options::QuantRecipeChoice& choice) {
  std::string spelling = options::quant_scheme_name(choice.scheme);
  if (choice.scheme == options::QuantScheme::k16a4wBlock) spelling += fmt::format(":{}", choice.block_size.value_or(32));
  return recipe_from_spelling(spelling);
}

Recipe fit_recipe_to_model(const Recipe& recipe, const ModelConfig& config) {
  Recipe r = recipe;
  if (config.wide_kv_cache && !r.is_float() && r.kv != QDType::kU16) {
    r.kv = QDType::kU16;
    r.name += " (16-bit KV cache)";
  }
  return r;
}

Recipe default_recipe(std::string_view model_name, int64_t n_layers, int64_t dim) {
  std::string n(model_name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const Scheme head{QDType::kU16, QDType::kI8, 0};
  // Upstream's per-model recipes (static_llm_quant_recipe.py): a 4-bit block-wise base with the
  // layers it finds sensitive at 16a8w (the output head is 16a8w in every 4-bit recipe here).
  auto block_recipe = [&](const char* spelling, const char* label, std::vector<const char*> sensitive) {
    Recipe r = recipe_from_spelling(spelling);
    r.name = fmt::format("{} ({} default)", spelling, label);
    for (size_t i = 0; i < sensitive.size(); ++i) r.overrides.insert(r.overrides.begin() + i, {sensitive[i], head});
    return r;
  };
  if (n.find("qwen3") != std::string::npos && n.find("1_7b") != std::string::npos)
    return block_recipe("16a4w_block:16", "qwen3-1_7b", {});
  if (n.find("qwen3") != std::string::npos)
    return block_recipe("16a4w_block:32", "qwen3-0_6b", {"layers\\.\\d+\\.mlp\\.down_proj\\.out"});
  if (n.find("gemma4") != std::string::npos)  // 4-bit blocks of 64 on every linear (16-bit KV: fit_recipe_to_model)
    return block_recipe("16a4w_block:64", "gemma4-e2b", {});
  if (n.find("gemma3") != std::string::npos)
    return block_recipe("16a4w_block:64", "gemma3-1b", {"layers\\.\\d+\\.attn\\.v_proj\\.out"});
  if (n.find("gemma2") != std::string::npos)
    return block_recipe("16a4w_block:32", "gemma2-2b", {"layers\\.\\d+\\.attn\\.v_proj\\.out"});
  if (n.find("gemma") != std::string::npos)  // gemma-2b
    return block_recipe("16a4w_block:64", "gemma-2b", {"layers\\.\\d+\\.attn\\.v_proj\\.out"});
  if (n.find("glm") != std::string::npos) return block_recipe("16a4w_block:32", "glm-1_5b", {});
  if (n.find("granite") != std::string::npos)
    return block_recipe("16a4w_block:64", "granite_3_3-2b", {"layers\\.\\d+\\.attn\\.v_proj\\.out"});
  if (n.find("phi") != std::string::npos) {  // phi-4-mini: v projections 8a4w
    Recipe r = block_recipe("16a4w_block:16", "phi_4_mini", {});
    r.overrides.insert(r.overrides.begin(), {"layers\\.\\d+\\.attn\\.v_proj\\.out", {QDType::kU8, QDType::kI4, 0}});
    return r;
  }
  if (n.find("smollm3") != std::string::npos)
    return block_recipe("16a4w_block:32", "smollm3-3b", {"layers\\.\\d+\\.attn\\.[qkv]_proj\\.out"});
  if (n.find("codegen") != std::string::npos) {  // before the 16-layer, 2048-wide llama3_2-1b rule
    Recipe r = recipe_from_spelling("16a8w");
    r.name = "16a8w (codegen2_1b default)";
    return r;
  }
  // Before smollm: a SmolVLM folder may name its SmolLM2 text model too.
  if (n.find("smolvlm") != std::string::npos) {  // the decoder of a SmolVLM (its encoder has its own recipe)
    Recipe r = recipe_from_spelling("16a8w");
    r.name = "16a8w (smolvlm_500m_instruct default)";
    return r;
  }
  if (n.find("internvl") != std::string::npos) {  // likewise InternVL3's
    Recipe r = recipe_from_spelling("16a8w");
    r.name = "16a8w (internvl3_1b default)";
    return r;
  }
  if (n.find("smollm") != std::string::npos) {
    Recipe r = recipe_from_spelling("16a8w");
    r.name = "16a8w (smollm2 default)";
    return r;
  }
  if ((n.find("llama") != std::string::npos && n.find("3.2") != std::string::npos) || (n_layers == 16 && dim == 2048)) {
    Recipe r = recipe_from_spelling("16a4w_block:32");
    r.name = "16a4w_block:32 (llama3_2-1b default)";
    r.overrides.insert(r.overrides.begin(), {kHead, head});
    r.overrides.insert(r.overrides.begin() + 1, {"layers\\.[0-3]\\.mlp\\.down_proj\\.out", head});
    return r;
  }
  if (n.find("stories") != std::string::npos || dim <= 768) {
    Recipe r = recipe_from_spelling("16a4w");
    r.name = "16a4w (stories default)";
    r.overrides.insert(r.overrides.begin(), {kHead, head});
    return r;
  }
  Recipe r = recipe_from_spelling("16a8w");
  r.name = "16a8w (default)";
  return r;
}

void add_override(Recipe& recipe, std::string_view spec, std::string_view option) {
  const std::string s(spec);
  const auto eq = s.rfind('=');
  if (eq == std::string::npos || eq == 0)
    throw_input_error("{}: '{}' is not REGEX=RECIPE (e.g. 'lm_head\\.out=16a8w')", option, s);
  const std::string pattern = s.substr(0, eq);
  try {
    std::regex check(pattern);
  } catch (const std::regex_error& e) {
    throw_input_error("{}: bad regular expression '{}': {}", option, pattern, e.what());
  }
  const Scheme scheme = parse_scheme(s.substr(eq + 1), option);
  if ((scheme.act == QDType::kF16) != recipe.is_float())
    throw_input_error("{}: '{}' mixes fp16 with integer quantization", option, s);
  recipe.overrides.insert(recipe.overrides.begin(), {pattern, scheme, std::string(option)});
}

void set_embedding_quantization(Recipe& recipe, std::string_view spec, std::string_view option) {
  const std::string s(spec);
  const auto comma = s.find(',');
  auto number = [&](const std::string& t) -> int64_t {
    if (t.empty() || t.size() > 6 || !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw_input_error("{}: '{}' is not 'bits,group' (e.g. '4,32'; group 0: one scale per row)", option, s);
    return std::stoll(t);
  };
  if (comma == std::string::npos) number("");
  const int64_t bits = number(s.substr(0, comma)), group = number(s.substr(comma + 1));
  if (bits != 4 && bits != 8)
    throw_input_error("{}: {}-bit embedding tables are not supported (valid bit widths: 4, 8)", option, bits);
  if (recipe.is_float()) throw_input_error("{} quantizes the embedding table of an integer recipe, not of fp16", option);
  recipe.embedding_table = Scheme{recipe.base.act, bits == 4 ? QDType::kI4 : QDType::kI8, group};
}

Recipe recipe_from_file(const std::filesystem::path& file, const Recipe& fallback) {
  const std::string where = "--quant_recipe_file " + file.string();
  std::ifstream in(file, std::ios::binary);
  if (!in) throw_input_error("{}: cannot open the file", where);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw_input_error("{}: not JSON: {}", where, e.what());
  }
  if (!j.is_object())
    throw_input_error("{}: expected a JSON object with keys recipe, overrides, seq_mse_candidates, gptq", where);
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "recipe" && it.key() != "overrides" && it.key() != "seq_mse_candidates" && it.key() != "gptq")
      throw_input_error("{}: unknown key '{}' (valid: recipe, overrides, seq_mse_candidates, gptq)", where, it.key());
  Recipe r = fallback;
  if (j.contains("recipe")) {
    if (!j["recipe"].is_string()) throw_input_error("{}: \"recipe\" must be a string such as \"16a4w_block:32\"", where);
    parse_scheme(j["recipe"].get<std::string>(), where + " \"recipe\"");
    r = recipe_from_spelling(j["recipe"].get<std::string>());
  }
  if (j.contains("seq_mse_candidates")) {
    const auto& n = j["seq_mse_candidates"];
    if (!n.is_number_integer() || n.get<int64_t>() < 0)
      throw_input_error("{}: \"seq_mse_candidates\" must be a whole number >= 0", where);
    r.seq_mse_candidates = n.get<int64_t>();
  }
  if (j.contains("gptq")) {
    if (!j["gptq"].is_boolean()) throw_input_error("{}: \"gptq\" must be true or false", where);
    r.gptq = j["gptq"].get<bool>();
  }
  if (j.contains("overrides")) {
    const auto& list = j["overrides"];
    if (!list.is_array()) throw_input_error("{}: \"overrides\" must be a list of \"REGEX=RECIPE\" strings", where);
    // add_override puts each in front: add them last to first so the file's order holds.
    for (size_t i = list.size(); i-- > 0;) {
      if (!list[i].is_string())
        throw_input_error("{}: \"overrides\"[{}] must be a \"REGEX=RECIPE\" string", where, i);
      add_override(r, list[i].get<std::string>(), fmt::format("{} \"overrides\"[{}]", where, i));
    }
  }
  return r;
}

void check_overrides_match(const Recipe& recipe, const std::vector<std::string>& tensor_names) {
  for (const Override& o : recipe.overrides) {
    if (o.origin.empty()) continue;
    const std::regex re(o.pattern);
    const bool hit = std::any_of(tensor_names.begin(), tensor_names.end(),
                                 [&](const std::string& n) { return std::regex_match(n, re); });
    if (!hit)
      throw_input_error("{}: '{}={}' matches no tensor of this model (names look like layers.0.mlp.down_proj.out, "
                        "layers.3.attn.q_proj.out, lm_head.out: docs/graphs.md)",
                        o.origin, o.pattern, scheme_name(o.scheme));
  }
}

}  // namespace genai::quant
