#include "core/tensor.h"

#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/half.h"
#include "core/thread_pool.h"

namespace genai {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_to_string(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

Tensor Tensor::zeros(DType dtype, Shape shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  const size_t n = t.nbytes();
  // 64-byte alignment so SIMD kernels can use aligned loads on owned tensors.
  void* p = ::operator new[](n == 0 ? 1 : n, std::align_val_t(64));
  std::memset(p, 0, n);
  t.storage_ = std::shared_ptr<const void>(p, [](const void* q) {
    ::operator delete[](const_cast<void*>(q), std::align_val_t(64));
  });
  t.data_ = p;
  t.writable_ = true;
  return t;
}

Tensor Tensor::view(DType dtype, Shape shape, const void* data, std::shared_ptr<const void> keepalive) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.storage_ = std::move(keepalive);
  t.data_ = data;
  t.writable_ = false;
  return t;
}

void* Tensor::mutable_raw() {
  if (!writable_) throw_failure("internal: write access to a read-only tensor view");
  return const_cast<void*>(data_);
}

Tensor Tensor::reshaped(Shape shape) const {
  if (shape_numel(shape) != numel())
    throw_failure("internal: reshape {} -> {} changes the element count", shape_to_string(shape_),
                  shape_to_string(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::f32_copy() const {
  if (dtype_ != DType::kF32) return to_f32();  // converted: already its own storage
  Tensor out = Tensor::zeros(DType::kF32, shape_);
  if (nbytes() > 0) std::memcpy(out.mutable_raw(), data_, nbytes());
  return out;
}

Tensor Tensor::to_f32() const {
  if (dtype_ == DType::kF32) return *this;
  Tensor out = Tensor::zeros(DType::kF32, shape_);
  float* dst = out.mutable_data<float>();
  const int64_t n = numel();
  const uint16_t* half = dtype_ == DType::kF16 || dtype_ == DType::kBF16 ? data<uint16_t>() : nullptr;
  // Weights of 16-bit checkpoints are converted on every use (model/weights.h): in parallel.
  constexpr int64_t kGrain = int64_t{1} << 16;
  switch (dtype_) {
    case DType::kF16:
      ThreadPool::global().parallel_for(
          n, [&](int64_t b, int64_t e) { for (int64_t i = b; i < e; ++i) dst[i] = f16_to_f32(half[i]); }, kGrain);
      break;
    case DType::kBF16:
      ThreadPool::global().parallel_for(
          n, [&](int64_t b, int64_t e) { for (int64_t i = b; i < e; ++i) dst[i] = bf16_to_f32(half[i]); }, kGrain);
      break;
    case DType::kF64:
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(data<double>()[i]);
      break;
    default:
      throw_failure("internal: to_f32 of {} tensor", dtype_name(dtype_));
  }
  return out;
}

}  // namespace genai
