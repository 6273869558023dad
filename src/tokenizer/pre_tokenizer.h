// Pre-tokenization of byte-level BPE: text -> pieces that BPE then merges independently. Mirrors
// the Hugging Face pre-tokenizer pipeline (Split(regex) / Digits / ByteLevel, applied in sequence,
// each step to every piece of the previous one) and names the configurations llama.cpp stores in
// GGUF tokenizer.ggml.pre.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/unicode_regex.h"

namespace genai {

// How a Split step treats the regex matches (Hugging Face SplitDelimiterBehavior).
enum class SplitBehavior { kIsolated, kRemoved, kMergedWithPrevious, kMergedWithNext, kContiguous };

struct PreTokenizerStep {
  enum class Kind { kSplit, kDigits, kByteLevel };
  Kind kind = Kind::kSplit;
  std::string pattern;  // kSplit: the regex
  bool invert = false;  // kSplit
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool individual_digits = false;  // kDigits
  bool add_prefix_space = false;   // kByteLevel
  bool use_regex = true;           // kByteLevel: split with the GPT-2 regex first
};

// GPT-2's regex (the ByteLevel pre-tokenizer's built-in pattern).
inline constexpr std::string_view kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class PreTokenizer {
 public:
  // `origin` names the file the configuration came from, for error messages.
  PreTokenizer(std::vector<PreTokenizerStep> steps, std::string_view origin);

  // The configuration a GGUF tokenizer.ggml.pre name stands for; unknown names are an InputError
  // listing known_names().
  static std::vector<PreTokenizerStep> named_steps(std::string_view name);
  static std::vector<std::string> known_names();
  // Whether the model of that name keeps a whole piece that is itself a token (Llama 3).
  static bool named_ignore_merges(std::string_view name);

  // Splits `text` into non-empty pieces; with a ByteLevel step they come back byte-level encoded
  // ("Ġthe"), otherwise as raw text.
  std::vector<std::string> split(std::string_view text) const;
  bool byte_level() const { return byte_level_; }
  const std::vector<PreTokenizerStep>& steps() const { return steps_; }

 private:
  std::vector<PreTokenizerStep> steps_;
  std::vector<std::unique_ptr<UnicodeRegex>> regexes_;  // one per step (null for ByteLevel without regex)
  bool byte_level_ = false;
};

}  // namespace genai
