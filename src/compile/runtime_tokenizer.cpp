#include "compile/runtime_tokenizer.h"

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/mapped_file.h"
#include "formats/gguf_file.h"
#include "model/gguf_metadata.h"
#include "tokenizer/tokenizer_bin.h"
#include "tokenizer/tokenizer_json.h"

namespace genai::compile {
namespace {

// A named constant: GCC 12 misreports push_back of this 22-byte literal (-Wstringop-overread).
const std::string& config_file_name() {
  static const std::string kName = "tokenizer_config.json";
  return kName;
}

void copy_file_atomic(const std::filesystem::path& from, const std::filesystem::path& to) {
  const auto bytes = MappedFile::open(from);  // read fully before writing: `to` may be `from`
  std::vector<uint8_t> copy(bytes->bytes().begin(), bytes->bytes().end());
  write_file_atomic(to, std::span<const uint8_t>(copy));
}

}  // namespace

RuntimeTokenizer write_runtime_tokenizer(const std::filesystem::path& source, const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_regular_file(source)) throw_input_error("tokenizer {}: not a file", source.string());
  RuntimeTokenizer out;
  if (is_gguf_file(source)) {
    const GgufFile file = GgufFile::open(source);
    GgufVocab vocab = gguf_read_vocab(file);
    if (const auto* spm = std::get_if<SpmVocab>(&vocab)) {
      out.file_name = "tokenizer.bin";
      write_tokenizer_bin(*spm, dir / out.file_name);
    } else if (const auto* bpe = std::get_if<BpeVocab>(&vocab)) {
      out.file_name = "tokenizer.json";
      write_tokenizer_json(*bpe, dir / out.file_name);
      out.companions.push_back(config_file_name());
      write_tokenizer_config_json(*bpe, dir / out.companions.back());
    } else {
      throw_input_error("{}: the GGUF file carries no tokenizer (pass --tokenizer_model)", source.string());
    }
    return out;
  }
  out.file_name = source.filename().string();
  copy_file_atomic(source, dir / out.file_name);
  // tokenizer.json reads bos/eos and the chat template from tokenizer_config.json beside it.
  const fs::path config = source.parent_path() / config_file_name();
  if (source.filename() == "tokenizer.json" && fs::is_regular_file(config)) {
    out.companions.push_back(config_file_name());
    copy_file_atomic(config, dir / out.companions.back());
  }
  return out;
}

}  // namespace genai::compile
