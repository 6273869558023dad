// llama2.c tokenizer.bin: int32 max_token_length, then for every token: float32 score, int32
// byte length, bytes (little-endian, no token count; the file ends after the last token).
#pragma once

#include <filesystem>

#include "tokenizer/vocab.h"

namespace genai {

// Reads a tokenizer.bin; truncated or malformed files are an InputError naming the path and the
// token index. Types are inferred (<unk> 0 / <s> 1 / </s> 2 control-like, <0xXX> bytes).
SpmVocab read_tokenizer_bin(const std::filesystem::path& path);

// Writes `vocab` as tokenizer.bin (atomic, deterministic). max_token_length is recomputed from
// the pieces (llama2.c sizes its merge buffer from it).
void write_tokenizer_bin(const SpmVocab& vocab, const std::filesystem::path& path);

}  // namespace genai
