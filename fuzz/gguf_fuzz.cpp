// libFuzzer target: the GGUF header parser, dequantizers and metadata mapping on arbitrary bytes. Any input must
// either parse or throw InputError; crashes, leaks and UB are bugs.
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/error.h"
#include "formats/gguf_file.h"
#include "model/gguf_metadata.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    genai::GgufFile f = genai::GgufFile::parse(std::span<const uint8_t>(data, size), "fuzz.gguf");
    for (const auto& t : f.tensors()) {
      if (t.numel() > (1 << 16)) continue;  // keep each run fast
      genai::Tensor x = f.tensor_f32(t);
      (void)x;
    }
    for (const auto& [key, value] : f.metadata()) (void)value.to_display_string();
    // The model layer's metadata mapping must be as robust as the parser.
    try {
      (void)genai::gguf_read_config(f);
    } catch (const genai::InputError&) {
    }
    (void)genai::gguf_read_vocab(f);
  } catch (const genai::InputError&) {
  }
  return 0;
}
