#include "tokenizer/factory.h"

#include <fstream>

#include "core/error.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer/spm_tokenizer.h"
#include "tokenizer/tokenizer_bin.h"
#include "tokenizer/tokenizer_json.h"

namespace genai {

std::unique_ptr<Tokenizer> make_spm_tokenizer(SpmVocab vocab) {
  std::string tmpl = vocab.chat_template;
  auto tok = std::make_unique<SpmTokenizer>(std::move(vocab), "spm", "SPM vocabulary");
  tok->set_chat_template(std::move(tmpl));
  return tok;
}

std::unique_ptr<Tokenizer> make_bpe_tokenizer(BpeVocab vocab) {
  BpeModelSpec spec;
  spec.origin = "BPE vocabulary";
  if (vocab.sentencepiece_style) {
    spec.normalizer_replace = {{" ", "\xe2\x96\x81"}};  // " " -> "▁"
    spec.decoder_replace = {{"\xe2\x96\x81", " "}};
    spec.byte_fallback = spec.fuse_unk = true;
    for (size_t i = 0; i < vocab.tokens.size(); ++i)
      if (vocab.tokens[i] == "<unk>") spec.unk_id = static_cast<int32_t>(i);
  } else {
    spec.pre_steps = PreTokenizer::named_steps(vocab.pre_tokenizer);
    spec.ignore_merges = PreTokenizer::named_ignore_merges(vocab.pre_tokenizer);
  }
  if (!vocab.types.empty() && vocab.types.size() != vocab.tokens.size())
    throw_input_error("BPE vocabulary: {} tokens but {} token types", vocab.tokens.size(), vocab.types.size());
  for (size_t i = 0; i < vocab.types.size(); ++i) {
    const TokenType t = vocab.types[i];
    if (t == TokenType::kControl || t == TokenType::kUserDefined)
      spec.added.push_back({vocab.tokens[i], static_cast<int32_t>(i), /*special=*/t == TokenType::kControl});
  }
  spec.merges.reserve(vocab.merges.size());
  for (size_t r = 0; r < vocab.merges.size(); ++r) {
    const std::string& m = vocab.merges[r];
    const size_t sp = m.find(' ');
    if (sp == std::string::npos || m.find(' ', sp + 1) != std::string::npos)
      throw_input_error("BPE vocabulary: merge {} {:?} is not two tokens separated by one space", r, m);
    spec.merges.emplace_back(m.substr(0, sp), m.substr(sp + 1));
  }
  spec.tokens = std::move(vocab.tokens);
  spec.bos_id = vocab.bos_id;
  spec.eos_id = vocab.eos_id;
  spec.add_bos = vocab.add_bos;
  auto tok = std::make_unique<BpeTokenizer>(std::move(spec));
  tok->set_chat_template(std::move(vocab.chat_template));
  return tok;
}

std::unique_ptr<Tokenizer> load_tokenizer_file(const std::filesystem::path& path) {
  if (std::filesystem::is_directory(path)) {
    for (const char* name : {"tokenizer.json", "tokenizer.model", "tokenizer.bin"})
      if (std::filesystem::is_regular_file(path / name)) return load_tokenizer_file(path / name);
    throw_input_error("{}: directory has no tokenizer.json, tokenizer.model or tokenizer.bin", path.string());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_input_error("{}: cannot open the tokenizer file", path.string());
  char head[4] = {0, 0, 0, 0};
  in.read(head, sizeof(head));
  const auto got = static_cast<size_t>(in.gcount());
  if (got == 0) throw_input_error("{}: the tokenizer file is empty", path.string());
  size_t first = 0;
  while (first < got && (head[first] == ' ' || head[first] == '\n' || head[first] == '\r' || head[first] == '\t')) ++first;
  if (first < got && head[first] == '{') return load_tokenizer_json(path);
  if (got == 4 && std::string_view(head, 4) == "GGUF")
    throw_input_error("{}: a GGUF checkpoint; its tokenizer is loaded with the model (--checkpoint)", path.string());
  // A sentencepiece ModelProto starts with field 1 (pieces, length-delimited): tag byte 0x0A.
  // A llama2.c tokenizer.bin starts with a small little-endian int32 (max_token_length).
  const std::string ext = path.extension().string();
  if (ext == ".model" || (ext != ".bin" && static_cast<uint8_t>(head[0]) == 0x0A)) return load_sentencepiece_model(path);
  auto tok = std::make_unique<SpmTokenizer>(read_tokenizer_bin(path), "llama2c", path.string());
  return tok;
}

}  // namespace genai
