// One loader per checkpoint format; load_model (model.cpp) picks one. Each returns a Model with
// config and canonical float32 weights checked against the config; the tokenizer is attached by
// load_model.
#pragma once

#include <filesystem>

#include "model/model.h"

namespace genai {

// `with_tokenizer`: also build the tokenizer the file carries (GGUF metadata, tokenizer.json,
// tokenizer.bin beside a llama2.c checkpoint).
Model load_gguf_model(const std::filesystem::path& path, bool with_tokenizer);
Model load_hf_model(const std::filesystem::path& dir, bool with_tokenizer);
Model load_llama2c_model(const std::filesystem::path& path, bool with_tokenizer);

}  // namespace genai
