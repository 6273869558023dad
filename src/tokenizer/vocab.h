// Plain vocabulary data as files store it, independent of the file format. Loaders (GGUF,
// tokenizer.json, tokenizer.bin) fill these; tokenizer factories consume them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace genai {

// SentencePiece's word-start mark "▁" (U+2581), which stands for a space inside pieces.
inline constexpr std::string_view kSpmSpace = "\xE2\x96\x81";

// GGUF token types (same numbering as llama.cpp / the gguf spec).
enum class TokenType : int32_t { kUndefined = 0, kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };

// Scored SentencePiece-style vocabulary (llama2.c tokenizer.bin, GGUF tokenizer.ggml.model=llama).
struct SpmVocab {
  std::vector<std::string> pieces;  // "▁" marks a word start; "<0x0A>" byte-fallback pieces
  std::vector<float> scores;
  std::vector<TokenType> types;     // may be empty (llama2.c): inferred from the pieces
  int32_t bos_id = 1, eos_id = 2, unk_id = 0;
  bool add_space_prefix = true;
  int32_t max_token_length = 0;     // llama2.c header field, informational
  std::string chat_template;        // Jinja template when the file carries one
};

// BPE vocabulary: byte-level (GGUF tokenizer.ggml.model=gpt2, HF tokenizer.json BPE with ByteLevel) or
// SentencePiece-style (GGUF gemma4, Gemma's tokenizer.json).
struct BpeVocab {
  std::vector<std::string> tokens;  // byte-level encoded strings ("Ġthe"), or raw ones when sentencepiece_style
  std::vector<std::string> merges;  // "Ġ t" pairs in priority order
  std::vector<TokenType> types;     // kControl / kUserDefined mark special / added tokens
  std::string pre_tokenizer;        // GGUF tokenizer.ggml.pre: "smollm", "llama-bpe", "qwen2", "gpt2", ...
  int32_t bos_id = -1, eos_id = -1;
  bool add_bos = false;
  std::string chat_template;        // Jinja template when the file carries one
  // SentencePiece-style BPE (llama.cpp's "gemma4" tokenizer model, Gemma's tokenizer.json): no
  // pre-tokenizer, spaces as "▁" and back, characters with byte fallback to <0xXX> tokens.
  bool sentencepiece_style = false;
};

}  // namespace genai
