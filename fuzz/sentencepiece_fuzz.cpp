// libFuzzer target: a sentencepiece .model (protobuf) through libsentencepiece and our wrapper:
// encode, decode and token bytes of what loads. Anything but InputError is a finding.
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/error.h"
#include "fuzz/fuzz_files.h"
#include "fuzz/fuzz_tokenizer.h"
#include "tokenizer/factory.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = genai::fuzz::scratch_dir() / "tokenizer.model";
  genai::fuzz::write_file(path, std::span<const uint8_t>(data, size));
  try {
    auto tok = genai::load_sentencepiece_model(path);
    genai::fuzz::exercise_tokenizer(*tok, "</s>");
  } catch (const genai::InputError&) {
  }
  return 0;
}
