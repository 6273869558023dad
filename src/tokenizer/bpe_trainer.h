// A plain BPE trainer (count adjacent symbol pairs, merge the most frequent, repeat), enough to
// give synthetic vocabularies merges that real text actually uses.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace genai {

struct TrainingWord {
  std::vector<std::string> symbols;  // initial symbols (characters)
  int64_t count = 0;
};

// Up to `max_merges` merges in learning order; stops early when no pair occurs twice. Ties in
// frequency are broken by a hash of (seed, pair), then by the pair's text: deterministic.
std::vector<std::pair<std::string, std::string>> train_bpe(std::vector<TrainingWord> words, size_t max_merges,
                                                           uint64_t seed);

}  // namespace genai
