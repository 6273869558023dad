#include "tokenizer/tokenizer_bin.h"

#include <cstring>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/mapped_file.h"
#include "tokenizer/spm_tokenizer.h"

namespace genai {
namespace {


// llama2.c stores word-start spaces as ' '; the vocabulary convention is "▁".
std::string replace_all(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(s.size());
  for (size_t pos = 0; pos < s.size();) {
    if (s.compare(pos, from.size(), from) == 0) {
      out += to;
      pos += from.size();
    } else {
      out.push_back(s[pos++]);
    }
  }
  return out;
}

template <typename T>
T read_le(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // the project targets little-endian hosts only
  return v;
}

}  // namespace

SpmVocab read_tokenizer_bin(const std::filesystem::path& path) {
  const auto file = MappedFile::open(path);
  const uint8_t* data = file->data();
  const size_t size = file->size();
  if (size < 4) throw_input_error("{}: too short for a llama2.c tokenizer.bin header", path.string());
  SpmVocab v;
  v.max_token_length = read_le<int32_t>(data);
  if (v.max_token_length <= 0) throw_input_error("{}: invalid max_token_length {}", path.string(), v.max_token_length);
  size_t pos = 4;
  while (pos < size) {
    const size_t index = v.pieces.size();
    if (size - pos < 8) throw_input_error("{}: token {} is truncated (header needs 8 bytes)", path.string(), index);
    const float score = read_le<float>(data + pos);
    const int32_t len = read_le<int32_t>(data + pos + 4);
    pos += 8;
    if (len < 0 || static_cast<size_t>(len) > size - pos)
      throw_input_error("{}: token {} has length {} beyond the end of the file", path.string(), index, len);
    v.pieces.push_back(replace_all(std::string_view(reinterpret_cast<const char*>(data + pos), len), " ", kSpmSpace));
    v.scores.push_back(score);
    pos += static_cast<size_t>(len);
  }
  if (v.pieces.size() < 3) throw_input_error("{}: only {} tokens (needs <unk>, <s>, </s>)", path.string(), v.pieces.size());
  v.unk_id = 0;
  v.bos_id = 1;
  v.eos_id = 2;
  v.add_space_prefix = true;
  v.types = SpmTokenizer::infer_types(v);
  return v;
}

void write_tokenizer_bin(const SpmVocab& vocab, const std::filesystem::path& path) {
  if (vocab.scores.size() != vocab.pieces.size())
    throw_input_error("{}: {} pieces but {} scores", path.string(), vocab.pieces.size(), vocab.scores.size());
  std::vector<std::string> pieces;
  pieces.reserve(vocab.pieces.size());
  int32_t max_len = 1;
  for (const auto& p : vocab.pieces) {
    pieces.push_back(replace_all(p, kSpmSpace, " "));
    max_len = std::max<int32_t>(max_len, static_cast<int32_t>(pieces.back().size()));
  }
  std::string out;
  auto put = [&out](const auto& v) { out.append(reinterpret_cast<const char*>(&v), sizeof(v)); };
  put(max_len);
  for (size_t i = 0; i < pieces.size(); ++i) {
    put(vocab.scores[i]);
    put(static_cast<int32_t>(pieces[i].size()));
    out += pieces[i];
  }
  write_file_atomic(path, out);
}

}  // namespace genai
