#include "tokenizer/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include <fstream>
#include <sstream>

#include "core/error.h"
#include "tokenizer/factory.h"
#include "tokenizer/stop_tokens.h"

namespace genai {
namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // ▁

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_input_error("{}: cannot open the sentencepiece model", path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

SentencePieceTokenizer::SentencePieceTokenizer(const std::filesystem::path& path)
    : origin_(path.string()), sp_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {
  const std::string bytes = read_all(path);
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
    if (!status.ok()) throw_failure("{}: sentencepiece encode failed: {}", origin_, status.ToString());
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
    if (piece.compare(pos, kSpace.size(), kSpace) == 0) {
      out.push_back(' ');
      pos += kSpace.size();
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
