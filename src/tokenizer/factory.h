// Building tokenizers from vocabulary data or from a tokenizer file of any supported kind.
#pragma once

#include <filesystem>
#include <memory>

#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace genai {

// Scored SentencePiece-style BPE with byte fallback (llama.cpp "llama" vocab, llama2.c). kind()
// is "spm".
std::unique_ptr<Tokenizer> make_spm_tokenizer(SpmVocab vocab);

// Byte-level BPE; vocab.pre_tokenizer picks the pre-tokenizer regexes ("gpt2", "default", "",
// "smollm", "llama-bpe", "llama3", "qwen2", ...); an unknown name is an InputError listing the
// known ones. kind() is "bpe".
std::unique_ptr<Tokenizer> make_bpe_tokenizer(BpeVocab vocab);

// A sentencepiece .model file through libsentencepiece. kind() is "sentencepiece".
std::unique_ptr<Tokenizer> load_sentencepiece_model(const std::filesystem::path& path);

// Dispatches on content: a directory (its tokenizer.json, tokenizer.model or tokenizer.bin), JSON
// (tokenizer.json), a sentencepiece protobuf (.model), or a llama2.c tokenizer.bin (kind()
// "llama2c"). Unrecognised content is an InputError naming the path.
std::unique_ptr<Tokenizer> load_tokenizer_file(const std::filesystem::path& path);

}  // namespace genai
