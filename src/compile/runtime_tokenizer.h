// The tokenizer file an artifact dir carries for the runtime. A standalone tokenizer file
// (tokenizer.json with its tokenizer_config.json, tokenizer.model, tokenizer.bin) is copied; a
// GGUF checkpoint's embedded vocabulary is exported instead of copying the whole model:
// byte-level BPE as tokenizer.json + tokenizer_config.json, SentencePiece-style as tokenizer.bin.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace genai::compile {

struct RuntimeTokenizer {
  std::string file_name;                // what manifest.json names (loadable by load_tokenizer_file)
  std::vector<std::string> companions;  // further files written beside it (tokenizer_config.json)
};

// Writes atomically into `dir`. InputError naming `source` when it is unreadable or a GGUF file
// without a vocabulary.
RuntimeTokenizer write_runtime_tokenizer(const std::filesystem::path& source, const std::filesystem::path& dir);

}  // namespace genai::compile
