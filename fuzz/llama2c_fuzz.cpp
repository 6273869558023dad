// libFuzzer target: llama2.c checkpoints: the file parser on bytes, then the model loader (config
// and weight mapping) on the same bytes as a file. Anything but InputError is a finding.
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/error.h"
#include "formats/llama2c_file.h"
#include "fuzz/fuzz_files.h"
#include "model/loaders.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  try {
    const genai::Llama2cFile f = genai::Llama2cFile::parse(bytes, "fuzz.bin");
    for (const auto& a : genai::llama2c_layout(f.header()))
      if (f.has(a.name)) (void)f.array(a.name);
  } catch (const genai::InputError&) {
    return 0;
  }
  const auto path = genai::fuzz::scratch_dir() / "model.bin";
  genai::fuzz::write_file(path, bytes);
  try {
    (void)genai::load_llama2c_model(path, false);
  } catch (const genai::InputError&) {
  }
  return 0;
}
