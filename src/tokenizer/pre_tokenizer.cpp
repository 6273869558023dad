#include "tokenizer/pre_tokenizer.h"

#include <fmt/format.h>

#include "core/error.h"
#include "tokenizer/byte_level.h"

namespace genai {
namespace {

// Llama 3 (tiktoken cl100k style): case-insensitive contractions, up to 3 digits per piece.
constexpr std::string_view kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Qwen2: as Llama 3 but every digit is its own piece.
constexpr std::string_view kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// GPT-4o (tiktoken o200k; Phi-4-mini's tokenizer): words split at case changes, contractions
// attached, up to 3 digits per piece.
constexpr std::string_view kGpt4oRegex =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|)"
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|)"
    R"(\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

PreTokenizerStep byte_level_step(bool use_regex) {
  PreTokenizerStep s;
  s.kind = PreTokenizerStep::Kind::kByteLevel;
  s.use_regex = use_regex;
  return s;
}

PreTokenizerStep split_step(std::string_view pattern) {
  PreTokenizerStep s;
  s.kind = PreTokenizerStep::Kind::kSplit;
  s.pattern = std::string(pattern);
  return s;
}

PreTokenizerStep digits_step(bool individual) {
  PreTokenizerStep s;
  s.kind = PreTokenizerStep::Kind::kDigits;
  s.individual_digits = individual;
  return s;
}

struct Segment {
  size_t begin, end;
  bool match;
};

// Applies a Split behaviour to the match ranges of one piece.
void split_piece(const std::string& piece, const std::vector<std::pair<size_t, size_t>>& matches, bool invert,
                 SplitBehavior behavior, std::vector<std::string>& out) {
  std::vector<Segment> segs;
  size_t pos = 0;
  for (auto [b, e] : matches) {
    if (b > pos) segs.push_back({pos, b, invert});
    segs.push_back({b, e, !invert});
    pos = e;
  }
  if (pos < piece.size()) segs.push_back({pos, piece.size(), invert});

  auto text = [&](const Segment& s) { return piece.substr(s.begin, s.end - s.begin); };
  switch (behavior) {
    case SplitBehavior::kIsolated:
      for (const auto& s : segs) out.push_back(text(s));
      break;
    case SplitBehavior::kRemoved:
      for (const auto& s : segs)
        if (!s.match) out.push_back(text(s));
      break;
    case SplitBehavior::kMergedWithPrevious: {
      bool prev_open = false;  // whether out.back() is a non-match piece of this split
      for (const auto& s : segs) {
        if (s.match && prev_open) {
          out.back() += text(s);
          prev_open = false;
        } else {
          out.push_back(text(s));
          prev_open = !s.match;
        }
      }
      break;
    }
    case SplitBehavior::kMergedWithNext: {
      bool pending = false;
      for (const auto& s : segs) {
        if (pending) {
          out.back() += text(s);
          pending = s.match;
        } else {
          out.push_back(text(s));
          pending = s.match;
        }
      }
      break;
    }
    case SplitBehavior::kContiguous: {
      bool prev_match = false;
      for (const auto& s : segs) {
        if (s.match && prev_match)
          out.back() += text(s);
        else
          out.push_back(text(s));
        prev_match = s.match;
      }
      break;
    }
  }
}

}  // namespace

PreTokenizer::PreTokenizer(std::vector<PreTokenizerStep> steps, std::string_view origin) : steps_(std::move(steps)) {
  for (const auto& s : steps_) {
    switch (s.kind) {
      case PreTokenizerStep::Kind::kSplit:
        regexes_.push_back(std::make_unique<UnicodeRegex>(s.pattern, origin));
        break;
      case PreTokenizerStep::Kind::kDigits:
        regexes_.push_back(std::make_unique<UnicodeRegex>(s.individual_digits ? R"(\p{N})" : R"(\p{N}+)", origin));
        break;
      case PreTokenizerStep::Kind::kByteLevel:
        regexes_.push_back(s.use_regex ? std::make_unique<UnicodeRegex>(std::string(kGpt2Regex), origin) : nullptr);
        byte_level_ = true;
        break;
    }
  }
}

std::vector<PreTokenizerStep> PreTokenizer::named_steps(std::string_view name) {
  if (name.empty() || name == "default" || name == "gpt2" || name == "gpt-2") return {byte_level_step(true)};
  // SmolLM / StarCoder family: every digit alone, then GPT-2 pieces.
  if (name == "smollm" || name == "starcoder" || name == "refact")
    return {digits_step(true), byte_level_step(true)};
  if (name == "llama-bpe" || name == "llama3" || name == "llama-v3")
    return {split_step(kLlama3Regex), byte_level_step(false)};
  if (name == "qwen2") return {split_step(kQwen2Regex), byte_level_step(false)};
  if (name == "gpt-4o") return {split_step(kGpt4oRegex), byte_level_step(false)};
  std::string known;
  for (const auto& n : known_names()) known += (known.empty() ? "" : ", ") + n;
  throw_input_error("unknown byte-level BPE pre-tokenizer {:?} (tokenizer.ggml.pre); known: {}", name, known);
}

std::vector<std::string> PreTokenizer::known_names() {
  return {"default", "gpt2", "smollm", "starcoder", "refact", "llama-bpe", "llama3", "qwen2", "gpt-4o"};
}

bool PreTokenizer::named_ignore_merges(std::string_view name) {
  return name == "llama-bpe" || name == "llama3" || name == "llama-v3";
}

std::vector<std::string> PreTokenizer::split(std::string_view text) const {
  std::vector<std::string> pieces;
  if (text.empty()) return pieces;
  pieces.emplace_back(text);
  std::vector<std::string> next;
  std::vector<std::pair<size_t, size_t>> matches;
  for (size_t i = 0; i < steps_.size(); ++i) {
    const auto& step = steps_[i];
    next.clear();
    next.reserve(pieces.size() * 2);
    for (auto& piece : pieces) {
      if (step.kind == PreTokenizerStep::Kind::kByteLevel && step.add_prefix_space && piece[0] != ' ')
        piece.insert(piece.begin(), ' ');
      if (regexes_[i] == nullptr) {
        next.push_back(std::move(piece));
        continue;
      }
      matches.clear();
      if (!regexes_[i]->find_all(piece, matches)) {  // invalid UTF-8: keep the piece whole
        next.push_back(std::move(piece));
        continue;
      }
      if (step.kind == PreTokenizerStep::Kind::kSplit)
        split_piece(piece, matches, step.invert, step.behavior, next);
      else
        split_piece(piece, matches, false, SplitBehavior::kIsolated, next);
    }
    if (step.kind == PreTokenizerStep::Kind::kByteLevel) {
      for (auto& p : next) {
        std::string mapped;
        mapped.reserve(p.size() * 2);
        byte_level::encode(p, mapped);
        p = std::move(mapped);
      }
    }
    pieces.swap(next);
  }
  return pieces;
}

}  // namespace genai
