// The ids that end generation: the eos token plus the end-of-turn tokens instruct models use.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace genai {

// End-of-turn / end-of-text token strings of known model families.
const std::vector<std::string_view>& stop_token_strings();

// eos_id (when >= 0) followed by the ids `lookup` finds for stop_token_strings(), without repeats.
std::vector<int32_t> collect_stop_ids(int32_t eos_id, const std::function<int32_t(std::string_view)>& lookup);

}  // namespace genai
