#include "modality/encoder_io.h"

#include <cstring>

#include <fmt/format.h>

#include "core/error.h"

namespace genai::modality {
namespace {

kernels::ActType act_type(DType d) { return d == DType::kU8 ? kernels::ActType::kU8 : kernels::ActType::kU16; }

}  // namespace

EncoderIo::EncoderIo(const MethodRunner& runner, const runtime::IoDesc& d, const std::string& method) : desc_(d) {
  if (d.dtype != DType::kF32 && d.dtype != DType::kU8 && d.dtype != DType::kU16)
    throw_input_error("{}: method {}: {} is {}, expected float32, uint8 or uint16", runner.origin(), method, d.name,
                      dtype_name(d.dtype));
  bytes_.assign(static_cast<size_t>(shape_numel(d.shape)) * dtype_size(d.dtype), 0);
  if (d.dtype == DType::kF32) return;
  const auto scale = runner.constant_double(fmt::format("get_{}_scale", d.name));
  const auto zp = runner.constant_int(fmt::format("get_{}_zero_point", d.name));
  if (!scale || !zp || !(*scale > 0.0))
    throw_input_error("{}: quantized {} need the constant methods get_{}_scale (positive) and get_{}_zero_point",
                      runner.origin(), d.name, d.name, d.name);
  q_.scale = static_cast<float>(*scale);
  q_.zero_point = static_cast<int32_t>(*zp);
  q_.qmin = 0;
  q_.qmax = d.dtype == DType::kU8 ? 255 : 65535;
}

int64_t EncoderIo::numel() const { return shape_numel(desc_.shape); }

void EncoderIo::write(const float* x) {
  if (desc_.dtype == DType::kF32)
    std::memcpy(bytes_.data(), x, bytes_.size());
  else
    kernels::quantize(x, numel(), q_, act_type(desc_.dtype), bytes_.data());
}

void EncoderIo::read(float* y) const {
  if (desc_.dtype == DType::kF32)
    std::memcpy(y, bytes_.data(), bytes_.size());
  else
    kernels::dequantize(bytes_.data(), act_type(desc_.dtype), numel(), q_, y);
}

}  // namespace genai::modality
