// libFuzzer target: llama2.c tokenizer.bin, and the scored SentencePiece-style BPE built from it
// (the "spm" tokenizer GGUF llama vocabularies use too): encode, decode and token bytes of what
// loads. Anything but InputError is a finding.
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/error.h"
#include "fuzz/fuzz_files.h"
#include "fuzz/fuzz_tokenizer.h"
#include "tokenizer/factory.h"
#include "tokenizer/tokenizer_bin.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = genai::fuzz::scratch_dir() / "tokenizer.bin";
  genai::fuzz::write_file(path, std::span<const uint8_t>(data, size));
  try {
    auto tok = genai::make_spm_tokenizer(genai::read_tokenizer_bin(path));
    genai::fuzz::exercise_tokenizer(*tok, "</s>");
  } catch (const genai::InputError&) {
  }
  return 0;
}
