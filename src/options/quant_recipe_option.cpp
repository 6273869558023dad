#include "options/quant_recipe_option.h"

#include <charconv>

#include <fmt/format.h>

#include "core/error.h"
#include "options/option_values.h"

namespace genai::options {

const std::vector<std::string>& quant_scheme_names() {
  // Index = QuantScheme value.
  static const std::vector<std::string> names = {"16a16w", "16a8w", "16a4w", "16a4w_block", "8a8w", "8a4w", "fp16"};
  return names;
}

std::string quant_scheme_name(QuantScheme scheme) { return quant_scheme_names().at(static_cast<size_t>(scheme)); }

const std::vector<std::string>& quant_block_sizes() {
  static const std::vector<std::string> sizes = {"16", "32", "64"};
  return sizes;
}

QuantRecipeChoice parse_quant_recipe(std::string_view spelling) {
  std::string_view scheme = spelling;
  std::optional<std::string_view> block;
  if (auto colon = spelling.find(':'); colon != std::string_view::npos) {
    scheme = spelling.substr(0, colon);
    block = spelling.substr(colon + 1);
  }
  const auto& names = quant_scheme_names();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] != scheme) continue;
    QuantRecipeChoice choice{static_cast<QuantScheme>(i), std::nullopt};
    if (block) {
      if (choice.scheme != QuantScheme::k16a4wBlock) {
        throw_input_error("--quant_recipe '{}': a block size (':G') only applies to 16a4w_block", spelling);
      }
      int g = 0;
      auto [p, ec] = std::from_chars(block->data(), block->data() + block->size(), g);
      if (ec != std::errc() || p != block->data() + block->size() || (g != 16 && g != 32 && g != 64)) {
        throw_input_error("--quant_recipe '{}': block size must be one of {}", spelling, fmt::join(quant_block_sizes(), ", "));
      }
      choice.block_size = g;
    }
    return choice;
  }
  throw_input_error("--quant_recipe '{}' is not a valid recipe; valid choices: {} (16a4w_block:G with G in {})", spelling,
                    fmt::join(names, ", "), fmt::join(quant_block_sizes(), ", "));
}

std::optional<QuantRecipeChoice> resolve_quant_recipe(const OptionValues& values) {
  return resolve_quant_recipe(values.get_optional_string("quant_recipe"), values.get_optional_int("quant_block_size"));
}

std::optional<QuantRecipeChoice> resolve_quant_recipe(const std::optional<std::string>& recipe,
                                                      std::optional<int64_t> block) {
  if (!recipe) {
    if (block) throw_input_error("--quant_block_size {} needs --quant_recipe 16a4w_block", *block);
    return std::nullopt;
  }
  QuantRecipeChoice choice = parse_quant_recipe(*recipe);
  if (block) {
    if (choice.scheme != QuantScheme::k16a4wBlock) {
      throw_input_error("--quant_block_size {} only applies to --quant_recipe 16a4w_block, not {}", *block, *recipe);
    }
    if (choice.block_size && *choice.block_size != *block) {
      throw_input_error("--quant_recipe {} and --quant_block_size {} disagree on the block size", *recipe, *block);
    }
    choice.block_size = static_cast<int>(*block);
  }
  return choice;
}

}  // namespace genai::options
