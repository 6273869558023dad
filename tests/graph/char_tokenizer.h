// A character tokenizer for the graph tests' random models (83 ids), so generation runs on them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace genai::graph_testing {

// A character tokenizer over the random model's 83 ids: 0 unknown, 1 BOS, 2 EOS, 3.. = '!'...
class CharTokenizer : public Tokenizer {
 public:
  std::vector<int32_t> encode(std::string_view text, bool add_bos, bool) const override {
    std::vector<int32_t> ids;
    if (add_bos) ids.push_back(1);
    for (char c : text) ids.push_back(c >= '!' && c < '!' + 80 ? c - '!' + 3 : 0);
    return ids;
  }
  std::string decode(std::span<const int32_t> ids) const override {
    std::string s;
    for (int32_t id : ids) s += token_bytes(-1, id);
    return s;
  }
  std::string token_bytes(int32_t, int32_t id) const override {
    return id >= 3 ? std::string(1, static_cast<char>('!' + id - 3)) : std::string();
  }
  int32_t vocab_size() const override { return 83; }
  int32_t bos_id() const override { return 1; }
  int32_t eos_id() const override { return 2; }
  std::vector<int32_t> stop_ids() const override { return {2}; }
  int32_t special_id(std::string_view) const override { return -1; }
  std::string kind() const override { return "test-chars"; }
};

}  // namespace genai::graph_testing
