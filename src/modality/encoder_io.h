// One float input or output of an encoder method, as the runner moves floats through it: float32
// as is, uint8 / uint16 codes quantized and dequantized with the encoding the program publishes
// as constants (get_<name>_scale, get_<name>_zero_point; quant/encoder_quantization.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/quantize.h"
#include "llm/method_runner.h"

namespace genai::modality {

class EncoderIo {
 public:
  // InputError naming the runner's origin and `method` for another element type, or quantized
  // codes without their constants.
  EncoderIo(const MethodRunner& runner, const runtime::IoDesc& desc, const std::string& method);

  const runtime::IoDesc& desc() const { return desc_; }
  int64_t numel() const;
  void write(const float* x);  // numel() values into the buffer
  void read(float* y) const;   // numel() values out of it
  runtime::BufferRef buffer() { return {bytes_.data(), bytes_.size()}; }

 private:
  runtime::IoDesc desc_;
  kernels::QParams q_;
  std::vector<uint8_t> bytes_;
};

}  // namespace genai::modality
