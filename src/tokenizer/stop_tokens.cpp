#include "tokenizer/stop_tokens.h"

#include <algorithm>

namespace genai {

const std::vector<std::string_view>& stop_token_strings() {
  static const std::vector<std::string_view> k{"<|eot_id|>", "<|eom_id|>", "<|im_end|>", "<|end_of_text|>",
                                               "<end_of_turn>", "<|endoftext|>", "<|end|>", "</s>", "<turn|>"};
  return k;
}

std::vector<int32_t> collect_stop_ids(int32_t eos_id, const std::function<int32_t(std::string_view)>& lookup) {
  std::vector<int32_t> ids;
  if (eos_id >= 0) ids.push_back(eos_id);
  for (auto s : stop_token_strings()) {
    const int32_t id = lookup(s);
    if (id >= 0 && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  return ids;
}

}  // namespace genai
