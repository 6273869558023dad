// A dense, row-major tensor: dtype + shape + bytes. Either owns its storage or views memory that
// another object (a memory-mapped file) keeps alive; views are read-only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace genai {

using Shape = std::vector<int64_t>;

int64_t shape_numel(const Shape& shape);
std::string shape_to_string(const Shape& shape);

class Tensor {
 public:
  Tensor() = default;
  // Zero-initialised owned storage.
  static Tensor zeros(DType dtype, Shape shape);
  // Read-only view of `data`; `keepalive` owns the memory behind it.
  static Tensor view(DType dtype, Shape shape, const void* data, std::shared_ptr<const void> keepalive);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t dim(size_t i) const { return shape_.at(i); }
  size_t rank() const { return shape_.size(); }
  int64_t numel() const { return shape_numel(shape_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  bool defined() const { return data_ != nullptr || numel() == 0; }
  bool is_view() const { return !writable_; }
  // What keeps the bytes alive (a view's keepalive, or the owned buffer): for views of a part.
  const std::shared_ptr<const void>& storage() const { return storage_; }

  const void* raw() const { return data_; }
  void* mutable_raw();  // throws for views
  std::span<const uint8_t> bytes() const { return {static_cast<const uint8_t*>(data_), nbytes()}; }

  template <typename T>
  const T* data() const { return static_cast<const T*>(data_); }
  template <typename T>
  T* mutable_data() { return static_cast<T*>(mutable_raw()); }

  // Same bytes, new shape with the same element count.
  Tensor reshaped(Shape shape) const;
  // float32 copy (or the same tensor when already float32).
  Tensor to_f32() const;
  // An owned, writable float32 copy that never shares storage (loaded weights may be read-only
  // views of their file, and copies of a Tensor share its storage).
  Tensor f32_copy() const;

 private:
  DType dtype_ = DType::kF32;
  Shape shape_;
  std::shared_ptr<const void> storage_;
  const void* data_ = nullptr;
  bool writable_ = false;
};

}  // namespace genai
