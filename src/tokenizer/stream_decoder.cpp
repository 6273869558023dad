#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace genai {

std::string StreamDecoder::push(int32_t id) {
  pending_ += tok_.token_bytes(prev_, id);
  prev_ = id;
  // Hold back an unfinished UTF-8 character until a later token completes it.
  const size_t keep = utf8::incomplete_tail(pending_);
  std::string out = pending_.substr(0, pending_.size() - keep);
  pending_.erase(0, pending_.size() - keep);
  return out;
}

std::string StreamDecoder::flush() {
  std::string out;
  out.swap(pending_);
  return out;
}

}  // namespace genai
