// The --quant_recipe spelling: 16a16w, 16a8w, 16a4w, 16a4w_block[:G], 8a8w, 8a4w, fp16, with the
// block size G also settable through --quant_block_size (16, 32, 64).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace genai::options {

class OptionValues;

enum class QuantScheme { k16a16w, k16a8w, k16a4w, k16a4wBlock, k8a8w, k8a4w, kFp16 };

struct QuantRecipeChoice {
  QuantScheme scheme = QuantScheme::k16a4w;
  std::optional<int> block_size;  // only for 16a4w_block
  bool operator==(const QuantRecipeChoice&) const = default;
};

const std::vector<std::string>& quant_scheme_names();  // "16a16w", ..., "fp16"
std::string quant_scheme_name(QuantScheme scheme);
const std::vector<std::string>& quant_block_sizes();   // "16", "32", "64"

// Parses one spelling; InputError naming --quant_recipe and the valid choices.
QuantRecipeChoice parse_quant_recipe(std::string_view spelling);
// --quant_recipe combined with --quant_block_size (conflicts are InputErrors); nullopt when no
// recipe was chosen (the model's own recipe applies).
std::optional<QuantRecipeChoice> resolve_quant_recipe(const OptionValues& values);
// The same from the two values as given (nullopt: not given).
std::optional<QuantRecipeChoice> resolve_quant_recipe(const std::optional<std::string>& recipe,
                                                      std::optional<int64_t> block_size);

}  // namespace genai::options
