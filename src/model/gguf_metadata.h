// GGUF metadata <-> ModelConfig and tokenizer vocabularies (llama.cpp's key names).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "formats/gguf_file.h"
#include "formats/gguf_writer.h"
#include "model/model_config.h"
#include "tokenizer/vocab.h"

namespace genai {

// Hyper-parameters from {arch}.* and tokenizer.ggml.* keys (tensor-derived facts such as a tied
// head or llama3 rope_freqs are filled in by the loader). Unknown architecture -> InputError.
ModelConfig gguf_read_config(const GgufFile& file);
void gguf_write_config(GgufWriter& w, const ModelConfig& config);

// The vocabulary the file carries: SpmVocab for tokenizer.ggml.model "llama", BpeVocab for
// "gpt2", monostate when the file has no tokenizer. Other models -> InputError listing both.
using GgufVocab = std::variant<std::monostate, SpmVocab, BpeVocab>;
GgufVocab gguf_read_vocab(const GgufFile& file);
void gguf_write_vocab(GgufWriter& w, const SpmVocab& vocab);
void gguf_write_vocab(GgufWriter& w, const BpeVocab& vocab);
// The tokenizer.ggml.pre name llama.cpp reads for a BpeVocab::pre_tokenizer ("gpt2" -> "gpt-2"),
// so the files we write load in llama.cpp; our reader accepts both spellings.
std::string gguf_pre_tokenizer_name(std::string_view pre_tokenizer);

}  // namespace genai
