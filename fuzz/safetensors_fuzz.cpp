// libFuzzer target: the safetensors header parser and float conversion on arbitrary bytes. Any
// input must either parse or throw InputError; crashes, leaks and UB are bugs.
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/error.h"
#include "formats/safetensors_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    genai::SafetensorsFile f = genai::SafetensorsFile::parse(std::span<const uint8_t>(data, size), "fuzz.safetensors");
    for (const auto& e : f.tensors()) {
      if (e.dtype == genai::DType::kF32 || e.dtype == genai::DType::kF16 || e.dtype == genai::DType::kBF16) {
        genai::Tensor x = f.tensor_f32(e);
        (void)x;
      }
    }
  } catch (const genai::InputError&) {
  }
  return 0;
}
