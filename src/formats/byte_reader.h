// Bounds-checked little-endian reading of an untrusted byte buffer. Every read checks the
// remaining length first and reports truncation as an InputError naming the source and offset,
// so parsers of hostile files never read past the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/error.h"

namespace genai {

class ByteReader {
 public:
  ByteReader(std::span<const uint8_t> bytes, std::string source) : bytes_(bytes), source_(std::move(source)) {}

  size_t pos() const { return pos_; }
  size_t size() const { return bytes_.size(); }
  size_t remaining() const { return bytes_.size() - pos_; }
  const std::string& source() const { return source_; }

  template <typename T>
  T read(std::string_view what) {
    static_assert(std::is_trivially_copyable_v<T>);
    require(sizeof(T), what);
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));  // host is little-endian (x86/arm64)
    pos_ += sizeof(T);
    return v;
  }

  std::string_view read_bytes(uint64_t n, std::string_view what) {
    require(n, what);
    std::string_view s(reinterpret_cast<const char*>(bytes_.data() + pos_), static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return s;
  }

  void skip(uint64_t n, std::string_view what) {
    require(n, what);
    pos_ += static_cast<size_t>(n);
  }

  void require(uint64_t n, std::string_view what) const {
    if (n > remaining())
      throw_input_error("{}: truncated: {} needs {} bytes at offset {}, only {} left", source_, what, n, pos_,
                        remaining());
  }

 private:
  std::span<const uint8_t> bytes_;
  std::string source_;
  size_t pos_ = 0;
};

}  // namespace genai
