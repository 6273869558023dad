#include "pte/blob.h"

#include <cstring>

namespace genai::pte {

Blob::Blob(std::vector<uint8_t> bytes) {
  auto owned = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  bytes_ = std::span<const uint8_t>(owned->data(), owned->size());
  keepalive_ = std::move(owned);
}

Blob::Blob(std::span<const uint8_t> bytes, std::shared_ptr<const void> keepalive)
    : keepalive_(std::move(keepalive)), bytes_(bytes) {}

bool operator==(const Blob& a, const Blob& b) {
  if (a.size() != b.size()) return false;
  if (a.data() == b.data() || a.size() == 0) return true;
  return std::memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace genai::pte
