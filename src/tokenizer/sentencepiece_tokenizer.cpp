#include "tokenizer/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include <cstdint>
#include <string_view>

#include "core/error.h"
#include "core/whole_file.h"
#include "tokenizer/factory.h"
#include "tokenizer/stop_tokens.h"
#include "tokenizer/vocab.h"

namespace genai {
namespace {


std::string read_all(const std::filesystem::path& path) {
  std::optional<std::string> bytes = read_whole_file(path);
  if (!bytes) throw_input_error("{}: cannot open the sentencepiece model", path.string());
  return std::move(*bytes);
}

// Protobuf wire-format helpers for the pre-check below; false on malformed input.
bool read_varint(std::string_view b, size_t& pos, uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64 && pos < b.size(); shift += 7) {
    const auto c = static_cast<uint8_t>(b[pos++]);
    v |= static_cast<uint64_t>(c & 0x7f) << shift;
    if (!(c & 0x80)) return true;
  }
  return false;
}

// Visits every field of a message: fn(field number, wire type, length-delimited bytes). False when
// the message is not well-formed wire format (groups included: ModelProto has none).
template <typename Fn>
bool for_each_field(std::string_view b, Fn&& fn) {
  size_t pos = 0;
  while (pos < b.size()) {
    uint64_t tag = 0, v = 0;
    if (!read_varint(b, pos, tag)) return false;
    const uint32_t wire = tag & 7;
    std::string_view bytes;
    if (wire == 0) {
      if (!read_varint(b, pos, v)) return false;
    } else if (wire == 1 || wire == 5) {
      const size_t n = wire == 1 ? 8 : 4;
      if (b.size() - pos < n) return false;
      pos += n;
    } else if (wire == 2) {
      if (!read_varint(b, pos, v) || v > b.size() - pos) return false;
      bytes = b.substr(pos, v);
      pos += v;
    } else {
      return false;
    }
    fn(tag >> 3, wire, bytes);
  }
  return true;
}

// libsentencepiece builds its piece trie with darts-clone, which takes NUL-terminated keys and
// throws on an empty one; a user-defined piece starting with a NUL byte is such a key, and the
// exception ends the process (found by fuzz/sentencepiece_fuzz.cpp). Real models have no NUL
// bytes or empty pieces; reject them here, naming the piece index. Input that is not well-formed
// wire format is left to libsentencepiece's own parser, which rejects it cleanly.
void check_pieces(std::string_view model, const std::string& origin) {
  size_t index = 0;
  for_each_field(model, [&](uint64_t field, uint32_t wire, std::string_view piece_msg) {
    if (field != 1 || wire != 2) return;  // ModelProto.pieces = 1
    std::string_view piece;
    for_each_field(piece_msg, [&](uint64_t f, uint32_t w, std::string_view bytes) {
      if (f == 1 && w == 2) piece = bytes;  // SentencePiece.piece = 1 (last one wins)
    });
    if (piece.empty() || piece.find('\0') != std::string_view::npos)
      throw_input_error("{}: not a valid sentencepiece model: piece {} {}", origin, index,
                        piece.empty() ? "is empty" : "holds a NUL byte");
    ++index;
  });
}

}  // namespace

SentencePieceTokenizer::SentencePieceTokenizer(const std::filesystem::path& path)
    : origin_(path.string()), sp_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {
  const std::string bytes = read_all(path);
  check_pieces(bytes, origin_);
  const auto status = sp_->LoadFromSerializedProto(bytes);
  if (!status.ok()) throw_input_error("{}: not a valid sentencepiece model: {}", origin_, status.ToString());
  if (sp_->GetPieceSize() <= 0) throw_input_error("{}: the sentencepiece model has no pieces", origin_);
  std::vector<AddedToken> controls;
  for (int i = 0; i < sp_->GetPieceSize(); ++i)
    if (sp_->IsControl(i) && !sp_->IdToPiece(i).empty()) controls.push_back({sp_->IdToPiece(i), i, true});
  controls_ = AddedTokenMatcher(std::move(controls));
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::vector<int32_t> SentencePieceTokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
  std::vector<int32_t> ids;
  if (add_bos && sp_->bos_id() >= 0) ids.push_back(sp_->bos_id());
  std::vector<int> part;
  for (const auto& seg : controls_.split(text, parse_special)) {
    if (seg.token_id >= 0) {
      ids.push_back(seg.token_id);
      continue;
    }
    part.clear();
    const auto status = sp_->Encode(seg.text, &part);
    // A model that cannot encode its own normalised text is a bad model file (found by fuzz_sentencepiece).
    if (!status.ok()) throw_input_error("{}: sentencepiece encode failed: {}", origin_, status.ToString());
    ids.insert(ids.end(), part.begin(), part.end());
  }
  return ids;
}

void SentencePieceTokenizer::check_id(int32_t id) const {
  if (id < 0 || id >= sp_->GetPieceSize())
    throw_input_error("{}: token id {} outside the vocabulary [0, {})", origin_, id, sp_->GetPieceSize());
}

std::string SentencePieceTokenizer::decode(std::span<const int32_t> ids) const {
  std::vector<int> v(ids.begin(), ids.end());
  for (int id : v) check_id(id);
  std::string out;
  const auto status = sp_->Decode(v, &out);
  if (!status.ok()) throw_failure("{}: sentencepiece decode failed: {}", origin_, status.ToString());
  return out;
}

std::string SentencePieceTokenizer::token_bytes(int32_t prev, int32_t id) const {
  check_id(id);
  if (sp_->IsControl(id)) return {};
  const std::string& piece = sp_->IdToPiece(id);
  if (sp_->IsByte(id) && piece.size() == 6) return std::string(1, static_cast<char>(std::stoi(piece.substr(3, 2), nullptr, 16)));
  std::string out;
  for (size_t pos = 0; pos < piece.size();) {
    if (piece.compare(pos, kSpmSpace.size(), kSpmSpace) == 0) {
      out.push_back(' ');
      pos += kSpmSpace.size();
    } else {
      out.push_back(piece[pos++]);
    }
  }
  if (prev >= 0 && prev == sp_->bos_id() && !out.empty() && out[0] == ' ') out.erase(0, 1);
  return out;
}

int32_t SentencePieceTokenizer::vocab_size() const { return sp_->GetPieceSize(); }
int32_t SentencePieceTokenizer::bos_id() const { return sp_->bos_id(); }
int32_t SentencePieceTokenizer::eos_id() const { return sp_->eos_id(); }

int32_t SentencePieceTokenizer::special_id(std::string_view text) const {
  const int id = sp_->PieceToId(text);
  if (id < 0 || sp_->IdToPiece(id) != text) return -1;
  return sp_->IsControl(id) || sp_->IsUnknown(id) ? id : -1;
}

std::vector<int32_t> SentencePieceTokenizer::stop_ids() const {
  return collect_stop_ids(eos_id(), [this](std::string_view s) { return special_id(s); });
}

std::unique_ptr<Tokenizer> load_sentencepiece_model(const std::filesystem::path& path) {
  return std::make_unique<SentencePieceTokenizer>(path);
}

}  // namespace genai
