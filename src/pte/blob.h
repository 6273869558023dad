// Bytes a program carries (constant tensors, delegate payloads, named data). A Blob either owns
// its bytes or views memory someone else keeps alive — the reader's blobs view the memory-mapped
// file, so opening a large program copies none of its segments. Copies share the bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace genai::pte {

class Blob {
 public:
  Blob() = default;
  // Takes ownership of `bytes`.
  explicit Blob(std::vector<uint8_t> bytes);
  // Views `bytes`; `keepalive` owns the memory behind them (may be null when the caller
  // guarantees the bytes outlive every copy of this Blob, e.g. a writer's input).
  Blob(std::span<const uint8_t> bytes, std::shared_ptr<const void> keepalive);

  std::span<const uint8_t> bytes() const { return bytes_; }
  const uint8_t* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }
  bool empty() const { return bytes_.empty(); }

  // Content equality: where the bytes live does not matter.
  friend bool operator==(const Blob& a, const Blob& b);

 private:
  std::shared_ptr<const void> keepalive_;
  std::span<const uint8_t> bytes_;
};

}  // namespace genai::pte
