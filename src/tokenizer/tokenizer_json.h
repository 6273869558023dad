// Hugging Face tokenizer.json (BPE model with byte-level pre-tokenizer/decoder): reading, and
// writing a BpeVocab in a form the Python `tokenizers` library loads and tokenizes identically.
#pragma once

#include <filesystem>
#include <memory>

#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace genai {

// A tokenizer for `path` (tokenizer.json). Reads tokenizer_config.json beside it when present
// (bos_token / eos_token / add_bos_token / chat_template). Supported: model.type BPE (merges as
// "a b" strings or [a, b] arrays, ignore_merges), added_tokens, normalizer null, pre_tokenizer
// ByteLevel / Split(regex) / Digits / Sequence of those, decoder ByteLevel. Anything else is an
// InputError naming the file and the unsupported feature.
std::unique_ptr<Tokenizer> load_tokenizer_json(const std::filesystem::path& path);

// The vocabulary of a tokenizer.json whose pre-tokenizer is one of the named configurations
// (BpeVocab::pre_tokenizer: "gpt2", "smollm", "llama-bpe", "qwen2"); an InputError otherwise.
BpeVocab read_tokenizer_json_vocab(const std::filesystem::path& path);

// Writes `vocab` as tokenizer.json (atomic, byte-identical for identical input). Control and
// user-defined tokens become added_tokens (special = control). The pre-tokenizer section is the
// Hugging Face configuration of vocab.pre_tokenizer ("default"/"" mean "gpt2"); an unknown name
// is an InputError listing the valid names.
void write_tokenizer_json(const BpeVocab& vocab, const std::filesystem::path& path);

// Writes the tokenizer_config.json that load_tokenizer_json reads beside tokenizer.json: bos_token,
// eos_token, add_bos_token, chat_template (atomic, deterministic).
void write_tokenizer_config_json(const BpeVocab& vocab, const std::filesystem::path& path);

}  // namespace genai
