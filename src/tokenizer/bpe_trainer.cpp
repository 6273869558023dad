#include "tokenizer/bpe_trainer.h"

#include <map>
#include <tuple>

namespace genai {
namespace {

uint64_t mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t fnv1a(const std::string& a, const std::string& b) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (char c : a) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001B3ull;
  h = (h ^ 0xFFu) * 0x100000001B3ull;  // separator outside UTF-8
  for (char c : b) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001B3ull;
  return h;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> train_bpe(std::vector<TrainingWord> words, size_t max_merges,
                                                           uint64_t seed) {
  std::vector<std::pair<std::string, std::string>> merges;
  while (merges.size() < max_merges) {
    std::map<std::pair<std::string, std::string>, int64_t> counts;
    for (const auto& w : words)
      for (size_t i = 0; i + 1 < w.symbols.size(); ++i) counts[{w.symbols[i], w.symbols[i + 1]}] += w.count;
    const std::pair<std::string, std::string>* best = nullptr;
    int64_t best_count = 1;
    uint64_t best_tie = 0;
    for (const auto& [pair, count] : counts) {
      const uint64_t tie = mix(seed ^ fnv1a(pair.first, pair.second));
      if (count > best_count || (count == best_count && best != nullptr && tie < best_tie)) {
        best = &pair;
        best_count = count;
        best_tie = tie;
      }
    }
    if (best == nullptr) break;  // no pair occurs twice
    const auto merge = *best;
    merges.push_back(merge);
    const std::string joined = merge.first + merge.second;
    for (auto& w : words) {
      std::vector<std::string> next;
      next.reserve(w.symbols.size());
      for (size_t i = 0; i < w.symbols.size(); ++i) {
        if (i + 1 < w.symbols.size() && w.symbols[i] == merge.first && w.symbols[i + 1] == merge.second) {
          next.push_back(joined);
          ++i;
        } else {
          next.push_back(std::move(w.symbols[i]));
        }
      }
      w.symbols = std::move(next);
    }
  }
  return merges;
}

}  // namespace genai
